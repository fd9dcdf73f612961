/**
 * Which rules apply to a signal, from a rule's `on` and `where`. Pure functions over the resolved configuration,
 * for the incident engine (does this failure open an incident, after which grace?) and for dry runs.
 *
 * Globs are whole-string and case-sensitive: `*` is any run of characters (dots and slashes included, since
 * dataset names are `schema.table` or paths), `?` is one character, anything else stands for itself.
 */
import type { AlertRule, AlertsConfig, OwnerAddress } from './config.js';
import type { SignalKind } from './config-schema.js';

/** What a rule's `where` is tested against: the root cause of an incident. */
export interface SignalSubject {
  readonly kind: SignalKind;
  readonly namespace: string;
  /** The job whose run failed, is overdue or is missing, or that reported the failed assertion. */
  readonly job?: string;
  /** The dataset a failed assertion is on. */
  readonly dataset?: string;
}

const compiledGlobs = new Map<string, RegExp>();

/** Whether `text` matches the glob `pattern` (see the module comment). */
export function globMatches(pattern: string, text: string): boolean {
  let regex = compiledGlobs.get(pattern);
  if (regex === undefined) {
    const body = [...pattern]
      .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('');
    regex = new RegExp(`^${body}$`, 'su');
    // Patterns come from one configuration; the cap only guards against a caller feeding it user input.
    if (compiledGlobs.size > 10_000) compiledGlobs.clear();
    compiledGlobs.set(pattern, regex);
  }
  return regex.test(text);
}

const anyMatches = (patterns: readonly string[] | undefined, value: string | undefined): boolean =>
  patterns === undefined || (value !== undefined && patterns.some((pattern) => globMatches(pattern, value)));

/**
 * Whether a rule applies to a signal: its kind is in `on`, and each filter of `where` that is set matches (a
 * `dataset` filter never matches a subject without a dataset, nor a `job` filter one without a job).
 */
export function ruleMatches(rule: AlertRule, subject: SignalSubject): boolean {
  return (
    rule.on.includes(subject.kind) &&
    anyMatches(rule.where.namespace, subject.namespace) &&
    anyMatches(rule.where.dataset, subject.dataset) &&
    anyMatches(rule.where.job, subject.job)
  );
}

/** The rules that apply to a signal, in the configuration's order. */
export function matchingRules(config: AlertsConfig, subject: SignalSubject): readonly AlertRule[] {
  return config.rules.filter((rule) => ruleMatches(rule, subject));
}

/**
 * The retry grace of a failed run: the longest of the matching rules' (a rule that waits longer for a retry is not
 * overridden by a hastier one), or undefined when no rule applies to it and no incident is opened.
 */
export function retryGraceMs(config: AlertsConfig, subject: SignalSubject): number | undefined {
  const rules = matchingRules(config, subject);
  return rules.length === 0 ? undefined : Math.max(...rules.map((rule) => rule.retryGraceMs));
}

/** Where an owner named in an ownership facet (`team:finance`) is told; none when the map does not name it. */
export function ownerAddresses(config: AlertsConfig, owner: string): readonly OwnerAddress[] {
  return Object.hasOwn(config.owners, owner) ? config.owners[owner]! : [];
}
