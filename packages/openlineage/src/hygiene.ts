import { OpenLineageConfigError } from './config.js';
import type { OpenLineageEvent } from './generated/model.js';

/** A redaction rule for string values inside facets. */
export interface RedactionRule {
  /** What to replace; a string is matched literally. A RegExp should have the `g` flag to replace every match. */
  readonly pattern: RegExp | string;
  /**
   * The replacement (RegExp replacement syntax such as `$1` works).
   * @default '***'
   */
  readonly replacement?: string;
  /** The name the report counts its changes under. @default `redact.<index>` */
  readonly name?: string;
}

/**
 * A named rule of the hygiene engine, as a redaction config file declares it (see {@link parseHygieneRules}).
 * Every rule applies to facets only, never to namespaces and names, which identify jobs and datasets.
 */
export type HygieneRule =
  /** Removes the facets with these keys, in any container (run, job, dataset, input and output facets). */
  | { readonly name: string; readonly type: 'dropFacets'; readonly facets: readonly string[] }
  /** Replaces what `pattern` matches in every string value of every facet (base fields excepted). */
  | {
      readonly name: string;
      readonly type: 'mask';
      readonly pattern: RegExp | string;
      /** @default '***' */
      readonly replacement?: string;
    }
  /** Replaces the string literals and numbers of the SQL in the `sql` job facet (`query`) with `?`. */
  | { readonly name: string; readonly type: 'maskSqlLiterals'; readonly replacement?: string }
  /**
   * Replaces the value of every property whose name matches `names` (and the `value` of `{name|key, value}`
   * pairs whose name matches) with `***`.
   */
  | { readonly name: string; readonly type: 'maskProperties'; readonly names: RegExp }
  /**
   * Removes the value distributions of data-quality metrics (`dataQualityMetrics` facets' `columnMetrics`):
   * `fields` of each column.
   */
  | {
      readonly name: string;
      readonly type: 'dropQualityDistributions';
      /** @default ['min', 'max', 'sum', 'quantiles'] (counts stay) */
      readonly fields?: readonly string[];
    };

/** Options of {@link createFacetHygiene}: what is removed or changed in facets before an event is sent. */
export interface FacetHygieneOptions {
  /**
   * Longest `sql.query` (job facet `sql`) kept; longer queries are cut to this many characters, ending with
   * the marker `…[truncated]`. `Infinity` keeps them whole.
   * @default 4000
   */
  readonly maxSqlLength?: number;
  /**
   * Largest facet, in bytes of its JSON (UTF-8); a larger facet is removed or truncated (see `oversizedFacets`).
   * @default 1048576 (1 MiB)
   */
  readonly maxFacetBytes?: number;
  /**
   * What becomes of a facet over `maxFacetBytes`: `'remove'` leaves it out; `'truncate'` cuts its longest
   * strings (each ending with `…[truncated N characters]`) until it fits, and if that is not enough keeps only
   * `_producer`, `_schemaURL` and `headwater_truncated: { bytes, limit }`.
   * @default 'remove'
   */
  readonly oversizedFacets?: 'remove' | 'truncate';
  /**
   * Facet keys never sent, in any container (e.g. `environmentVariables`, `spark.logicalPlan`).
   * @default []
   */
  readonly disabledFacets?: readonly string[];
  /**
   * Property names whose values are replaced by `***` anywhere inside a facet. Also applies to
   * `{ name, value }` and `{ key, value }` pairs (environment variables, execution parameters) whose name
   * matches. Set to `null` to turn this off.
   * @default /pass(word|wd)?$|secret|token|api[-_]?key|credential|private[-_]?key|authorization/i
   */
  readonly sensitiveNames?: RegExp | null;
  /**
   * Hide the password of URLs such as `postgres://user:secret@host` in every facet string.
   * @default true
   */
  readonly urlCredentials?: boolean;
  /**
   * Rules applied to every string value inside facets, after the URL-credentials one.
   * @default []
   */
  readonly redact?: readonly RedactionRule[];
  /** Named rules (a redaction config file's, see {@link parseHygieneRules}), applied after the ones above. */
  readonly rules?: readonly HygieneRule[];
  /**
   * Record on each event it changes what was done, as the `headwater_redaction` facet (schema
   * `schemas/RedactionFacet.json`) of its run, or of its dataset (DatasetEvent) or job (JobEvent), with this
   * `_producer`.
   * @default undefined (not recorded)
   */
  readonly recordFacet?: { readonly producer: string };
}

/** The key of the facet {@link FacetHygieneOptions.recordFacet} adds. */
export const REDACTION_FACET = 'headwater_redaction';
/** The `_schemaURL` of that facet. */
export const REDACTION_FACET_SCHEMA_URL =
  'https://github.com/headwater/headwater/tree/v0.1.0/packages/openlineage/schemas/RedactionFacet.json#/$defs/RedactionFacet';

/** What hygiene did to one event. */
export interface HygieneReport {
  /** Facets removed, as `<container>.<key>` (disabled or too large). */
  readonly removedFacets: readonly string[];
  /** Facets over the size limit that were truncated, as `<container>.<key>`. */
  readonly truncatedFacets: readonly string[];
  /** Number of strings changed by redaction. */
  readonly redacted: number;
  /** Number of SQL queries cut. */
  readonly truncated: number;
  /**
   * Changes by rule name, in the order of the options, then of the named rules, then the limits: a rule's name for named rules; `disabledFacets`,
   * `sensitiveNames`, `urlCredentials`, `redact.<index>`, `maxSqlLength` and `maxFacetBytes` for the options.
   * Rules that changed nothing are absent.
   */
  readonly rules: Readonly<Record<string, number>>;
}

/** Applies the configured hygiene to an event; returns a new event and leaves the input untouched. */
export type FacetHygiene = (event: OpenLineageEvent) => { event: OpenLineageEvent; report: HygieneReport };

const DEFAULT_SENSITIVE =
  /pass(word|wd)?$|secret|token|api[-_]?key|credential|private[-_]?key|authorization/i;
// `scheme://user:password@host`: keep the user, hide the password.
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):([^@/\s]+)@/gi;
/**
 * E-mail addresses (the common forms; not every address RFC 5322 allows). The first character is a letter, digit
 * or `_`, so a quote before an address (`'ana@corp.example'` in SQL) stays outside the match, and `/` is left out
 * so that a path such as `/Users/ana@corp.example/notebook` loses only the address.
 */
const EMAIL =
  /[A-Za-z0-9_][A-Za-z0-9.!#$%&'*+=?^_`{|}~-]*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+/g;
/**
 * SQL string literals ('...', with '' or \' inside) and numbers that stand alone (not part of a
 * name such as `t1` or `sales_2024`).
 */
const SQL_LITERALS = /'(?:[^'\\]|''|\\.)*'|(?<![\w.$])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w$])/g;
const MASK = '***';
const SQL_MARKER = '…[truncated]';
const DEFAULT_DISTRIBUTION_FIELDS = ['min', 'max', 'sum', 'quantiles'];
const QUALITY_FACETS = new Set(['dataQualityMetrics']);

/** The built-in patterns a `mask` rule may name instead of a regular expression. */
export const BUILTIN_MASKS: Readonly<Record<string, RegExp>> = Object.freeze({
  email: EMAIL,
  urlCredentials: URL_CREDENTIALS,
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type FacetMap = Record<string, Json>;

/** A string rule: what it does to one string, counted under its name. */
interface StringRule {
  readonly name: string;
  readonly apply: (value: string) => string;
}

const stringRuleOf = (name: string, pattern: RegExp | string, replacement: string): StringRule => ({
  name,
  apply:
    typeof pattern === 'string'
      ? (value) => value.split(pattern).join(replacement)
      : (value) => value.replace(pattern, replacement),
});

// A `g` or `y` flag would make `test()` remember its last position and skip matches.
const tester = (pattern: RegExp) => new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));

/**
 * Makes the hygiene step the client runs before sending (and the server at ingest, with its redaction config):
 * facet deny-list, masks, quality distributions, SQL truncation, size limit, in that order.
 *
 * @example
 * ```ts
 * const hygiene = createFacetHygiene({ disabledFacets: ['environmentVariables'], maxSqlLength: 10_000 });
 * const { event } = hygiene(rawEvent);
 * ```
 */
export function createFacetHygiene(options: FacetHygieneOptions = {}): FacetHygiene {
  const maxSqlLength = options.maxSqlLength ?? 4000;
  const maxFacetBytes = options.maxFacetBytes ?? 1024 * 1024;
  const truncateOversized = options.oversizedFacets === 'truncate';
  const rules = options.rules ?? [];
  const drops = new Map<string, string>();
  for (const key of options.disabledFacets ?? []) drops.set(key, 'disabledFacets');
  const nameRules: { name: string; test: RegExp }[] = [];
  const given = options.sensitiveNames === undefined ? DEFAULT_SENSITIVE : options.sensitiveNames;
  if (given !== null) nameRules.push({ name: 'sensitiveNames', test: tester(given) });
  const stringRules: StringRule[] = [];
  if (options.urlCredentials !== false)
    stringRules.push(stringRuleOf('urlCredentials', URL_CREDENTIALS, `$1:${MASK}@`));
  (options.redact ?? []).forEach((rule, index) =>
    stringRules.push(stringRuleOf(rule.name ?? `redact.${index}`, rule.pattern, rule.replacement ?? MASK)),
  );
  const sqlRules: StringRule[] = [];
  const qualityRules: { name: string; fields: readonly string[] }[] = [];
  for (const rule of rules) {
    switch (rule.type) {
      case 'dropFacets':
        for (const key of rule.facets) if (!drops.has(key)) drops.set(key, rule.name);
        break;
      case 'mask':
        stringRules.push(
          stringRuleOf(
            rule.name,
            rule.pattern,
            rule.replacement ?? (rule.pattern === URL_CREDENTIALS ? `$1:${MASK}@` : MASK),
          ),
        );
        break;
      case 'maskSqlLiterals':
        sqlRules.push(stringRuleOf(rule.name, SQL_LITERALS, rule.replacement ?? '?'));
        break;
      case 'maskProperties':
        nameRules.push({ name: rule.name, test: tester(rule.names) });
        break;
      case 'dropQualityDistributions':
        qualityRules.push({ name: rule.name, fields: rule.fields ?? DEFAULT_DISTRIBUTION_FIELDS });
        break;
    }
  }

  // The order rules are reported in: the options' rules, then the named rules as configured, then the limits.
  const order = new Map<string, number>();
  for (const name of [
    'disabledFacets',
    'sensitiveNames',
    'urlCredentials',
    ...(options.redact ?? []).map((rule, index) => rule.name ?? `redact.${index}`),
    ...rules.map((rule) => rule.name),
    'maxSqlLength',
    'maxFacetBytes',
  ])
    if (!order.has(name)) order.set(name, order.size);
  const ordered = (counts: Record<string, number>) =>
    Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0)));

  return (input) => {
    // A JSON copy: the caller's object stays as it was, and non-JSON values (undefined, functions) vanish
    // exactly as they would on the wire.
    const event = JSON.parse(JSON.stringify(input)) as OpenLineageEvent & Record<string, Json>;
    const removedFacets: string[] = [];
    const truncatedFacets: string[] = [];
    const counts: Record<string, number> = {};
    const count = (name: string, by = 1) => (counts[name] = (counts[name] ?? 0) + by);
    let redacted = 0;
    let truncated = 0;

    const sensitiveName = (name: string) => nameRules.find((rule) => rule.test.test(name));

    const scrubString = (value: string, rules: readonly StringRule[] = stringRules): string => {
      let out = value;
      for (const rule of rules) {
        const next = rule.apply(out);
        if (next !== out) count(rule.name);
        out = next;
      }
      if (out !== value) redacted++;
      return out;
    };

    const scrub = (value: Json, name: string | undefined): Json => {
      if (typeof value === 'string') {
        const rule = name === undefined || value === MASK ? undefined : sensitiveName(name);
        if (rule !== undefined) {
          redacted++;
          count(rule.name);
          return MASK;
        }
        return scrubString(value);
      }
      if (Array.isArray(value)) return value.map((item) => scrub(item, undefined));
      if (value === null || typeof value !== 'object') return value;
      const pairName =
        typeof value.name === 'string' ? value.name : typeof value.key === 'string' ? value.key : undefined;
      const pairRule = pairName !== undefined && 'value' in value ? sensitiveName(pairName) : undefined;
      const out: Record<string, Json> = {};
      for (const [key, child] of Object.entries(value)) {
        // Base fields identify the facet's schema and producer; they are never redacted.
        if (key === '_producer' || key === '_schemaURL') out[key] = child;
        else if (key === 'value' && pairRule !== undefined && child !== MASK) {
          redacted++;
          count(pairRule.name);
          out[key] = MASK;
        } else out[key] = scrub(child, key);
      }
      return out;
    };

    const dropDistributions = (facet: Json): Json => {
      if (!isObject(facet) || !isObject(facet.columnMetrics)) return facet;
      let columnMetrics: Record<string, Json> | undefined;
      for (const rule of qualityRules) {
        for (const [column, metrics] of Object.entries(columnMetrics ?? facet.columnMetrics)) {
          if (!isObject(metrics) || !rule.fields.some((field) => field in metrics)) continue;
          columnMetrics ??= { ...facet.columnMetrics };
          columnMetrics[column] = Object.fromEntries(
            Object.entries(metrics).filter(([field]) => !rule.fields.includes(field)),
          );
          count(rule.name);
        }
      }
      return columnMetrics === undefined ? facet : { ...facet, columnMetrics };
    };

    const clean = (container: string, facets: FacetMap): FacetMap => {
      const out: FacetMap = {};
      for (const [key, facet] of Object.entries(facets)) {
        const dropRule = drops.get(key);
        if (dropRule !== undefined) {
          removedFacets.push(`${container}.${key}`);
          count(dropRule);
          continue;
        }
        let cleaned = scrub(facet, undefined);
        if (container === 'job' && key === 'sql' && isObject(cleaned) && typeof cleaned.query === 'string') {
          let query = sqlRules.length > 0 ? scrubString(cleaned.query, sqlRules) : cleaned.query;
          if (query.length > maxSqlLength) {
            query = cutString(query, maxSqlLength, SQL_MARKER);
            truncated++;
            count('maxSqlLength');
          }
          if (query !== cleaned.query) cleaned = { ...cleaned, query };
        }
        if (qualityRules.length > 0 && QUALITY_FACETS.has(key)) cleaned = dropDistributions(cleaned);
        if (Buffer.byteLength(JSON.stringify(cleaned)) > maxFacetBytes) {
          count('maxFacetBytes');
          if (!truncateOversized) {
            removedFacets.push(`${container}.${key}`);
            continue;
          }
          cleaned = truncateFacet(cleaned, maxFacetBytes);
          truncatedFacets.push(`${container}.${key}`);
        }
        out[key] = cleaned;
      }
      return out;
    };

    const each = (holder: unknown, field: string, container: string): void => {
      if (!isObject(holder)) return;
      const facets = holder[field];
      if (isObject(facets)) holder[field] = clean(container, facets);
    };
    each(event.run, 'facets', 'run');
    each(event.job, 'facets', 'job');
    each(event.dataset, 'facets', 'dataset');
    for (const dataset of asArray(event.inputs)) {
      each(dataset, 'facets', 'dataset');
      each(dataset, 'inputFacets', 'inputDataset');
    }
    for (const dataset of asArray(event.outputs)) {
      each(dataset, 'facets', 'dataset');
      each(dataset, 'outputFacets', 'outputDataset');
    }
    const report = { removedFacets, truncatedFacets, redacted, truncated, rules: ordered(counts) };
    if (options.recordFacet !== undefined && hygieneChanged(report)) {
      const facet: Json = {
        _producer: options.recordFacet.producer,
        _schemaURL: REDACTION_FACET_SCHEMA_URL,
        rules: Object.entries(report.rules).map(([name, changes]) => ({ name, changes })),
        removedFacets,
        truncatedFacets,
      };
      const subject = isObject(event.run) ? event.run : isObject(event.dataset) ? event.dataset : event.job;
      if (isObject(subject))
        subject.facets = { ...(isObject(subject.facets) ? subject.facets : {}), [REDACTION_FACET]: facet };
    }
    return { event, report };
  };
}

/** Whether a hygiene report records any change (an event it describes differs from the one given). */
export function hygieneChanged(report: HygieneReport): boolean {
  return Object.keys(report.rules).length > 0;
}

/**
 * `value` cut to at most `length` characters, ending with `marker` when there is room for it; never splits a
 * surrogate pair.
 */
function cutString(value: string, length: number, marker: string): string {
  const keep = marker.length < length ? length - marker.length : length;
  let end = Math.max(0, keep);
  // A high surrogate left at the end would be a lone one (invalid Unicode).
  if (end > 0 && /[\uD800-\uDBFF]/.test(value.charAt(end - 1))) end--;
  return value.slice(0, end) + (keep === length ? '' : marker);
}

/**
 * A facet over `maxBytes` made to fit: its longest strings cut (each marked), and if a few rounds of that are
 * not enough (a facet large by structure, not by text), only its base fields and a marker.
 */
function truncateFacet(facet: Json, maxBytes: number): Json {
  let current = facet;
  for (let round = 0; round < 16; round++) {
    const size = Buffer.byteLength(JSON.stringify(current));
    if (size <= maxBytes) return current;
    const longest = longestString(current);
    if (longest === undefined || longest.length < 256) break;
    // Each character cut takes at least one byte off; the marker adds back at most its own length (ASCII).
    const excess = size - maxBytes;
    const keep = Math.max(64, longest.length - excess - 64);
    const marker = `…[truncated ${longest.length - keep} characters]`;
    current = replaceString(current, longest, cutString(longest, keep + marker.length, marker));
  }
  if (Buffer.byteLength(JSON.stringify(current)) <= maxBytes) return current;
  const base = isObject(facet) ? facet : {};
  return {
    ...(base._producer !== undefined ? { _producer: base._producer } : {}),
    ...(base._schemaURL !== undefined ? { _schemaURL: base._schemaURL } : {}),
    headwater_truncated: { bytes: Buffer.byteLength(JSON.stringify(facet)), limit: maxBytes },
  };
}

function longestString(value: Json): string | undefined {
  let longest: string | undefined;
  const stack: Json[] = [value];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      if (longest === undefined || item.length > longest.length) longest = item;
    } else if (Array.isArray(item)) stack.push(...item);
    else if (isObject(item)) {
      for (const [key, child] of Object.entries(item))
        if (key !== '_producer' && key !== '_schemaURL') stack.push(child);
    }
  }
  return longest;
}

/** `value` with every occurrence of the string `from` (compared by identity of content) replaced by `to`. */
function replaceString(value: Json, from: string, to: string): Json {
  if (typeof value === 'string') return value === from ? to : value;
  if (Array.isArray(value)) return value.map((item) => replaceString(item, from, to));
  if (!isObject(value)) return value;
  const out: Record<string, Json> = {};
  for (const [key, child] of Object.entries(value))
    out[key] = key === '_producer' || key === '_schemaURL' ? child : replaceString(child, from, to);
  return out;
}

/**
 * The named rules of a redaction config (the `rules` list of a YAML or JSON file, already parsed), checked:
 *
 * ```yaml
 * rules:
 *   - { name: no-environment, type: dropFacets, facets: [environmentVariables, spark_properties] }
 *   - { name: emails, type: mask, builtin: email, replacement: "<email>" }
 *   - { name: customer-ids, type: mask, pattern: "CUST-[0-9]{6}" }    # a regular expression (flags: i, m, s, u)
 *   - { name: sql-literals, type: maskSqlLiterals }
 *   - { name: secrets, type: maskProperties, names: "password|secret|token" }
 *   - { name: no-distributions, type: dropQualityDistributions }       # fields: [min, max, sum, quantiles]
 * ```
 *
 * @param where The file (or key) the rules came from, for error messages.
 * @throws OpenLineageConfigError naming the rule and the key that is wrong.
 */
export function parseHygieneRules(value: unknown, where: string): HygieneRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OpenLineageConfigError(where, 'must be a list of rules');
  const names = new Set<string>();
  return value.map((item: unknown, index): HygieneRule => {
    const at = `${where}[${index}]`;
    if (!isObject(item)) throw new OpenLineageConfigError(at, 'must be a mapping with name and type');
    const { name, type } = item;
    if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,100}$/.test(name))
      throw new OpenLineageConfigError(
        `${at}.name`,
        'must be a name of letters, digits and . _ : - (it is recorded on the events it changes)',
      );
    if (names.has(name)) throw new OpenLineageConfigError(`${at}.name`, `${name} is used by another rule`);
    names.add(name);
    const replacement = optionalString(item.replacement, `${at}.replacement`);
    const known = ['name', 'type', 'replacement'];
    const only = (...keys: string[]) => {
      for (const key of Object.keys(item))
        if (!known.includes(key) && !keys.includes(key))
          throw new OpenLineageConfigError(
            `${at}.${key}`,
            `is not a setting of a ${JSON.stringify(type)} rule`,
          );
    };
    switch (type) {
      case 'dropFacets': {
        only('facets');
        return { name, type, facets: stringList(item.facets, `${at}.facets`) };
      }
      case 'mask': {
        only('builtin', 'pattern', 'flags');
        if ((item.builtin === undefined) === (item.pattern === undefined))
          throw new OpenLineageConfigError(
            at,
            `needs one of builtin (${Object.keys(BUILTIN_MASKS).join(', ')}) or pattern`,
          );
        if (item.builtin !== undefined) {
          const builtin = typeof item.builtin === 'string' ? BUILTIN_MASKS[item.builtin] : undefined;
          if (builtin === undefined)
            throw new OpenLineageConfigError(
              `${at}.builtin`,
              `must be one of ${Object.keys(BUILTIN_MASKS).join(', ')}; got ${JSON.stringify(item.builtin)}`,
            );
          return { name, type, pattern: builtin, ...(replacement === undefined ? {} : { replacement }) };
        }
        const pattern = regex(item.pattern, item.flags, `${at}.pattern`, 'g');
        return { name, type, pattern, ...(replacement === undefined ? {} : { replacement }) };
      }
      case 'maskSqlLiterals':
        only();
        return { name, type, ...(replacement === undefined ? {} : { replacement }) };
      case 'maskProperties':
        only('names', 'flags');
        return { name, type, names: regex(item.names, item.flags ?? 'i', `${at}.names`, '') };
      case 'dropQualityDistributions':
        only('fields');
        return {
          name,
          type,
          ...(item.fields === undefined ? {} : { fields: stringList(item.fields, `${at}.fields`) }),
        };
      default:
        throw new OpenLineageConfigError(
          `${at}.type`,
          'must be dropFacets, mask, maskSqlLiterals, maskProperties or dropQualityDistributions; ' +
            `got ${JSON.stringify(type)}`,
        );
    }
  });
}

function optionalString(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new OpenLineageConfigError(where, 'must be a string');
  return value;
}

function stringList(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string'))
    throw new OpenLineageConfigError(where, 'must be a non-empty list of strings');
  return value;
}

function regex(source: unknown, flags: unknown, where: string, extraFlags: string): RegExp {
  if (typeof source !== 'string' || source === '')
    throw new OpenLineageConfigError(where, 'must be a regular expression (a non-empty string)');
  if (flags !== undefined && (typeof flags !== 'string' || !/^[imsu]*$/.test(flags)))
    throw new OpenLineageConfigError(
      `${where.replace(/\.[a-z]+$/, '')}.flags`,
      'may hold only i, m, s and u',
    );
  try {
    return new RegExp(source, `${typeof flags === 'string' ? flags : ''}${extraFlags}`);
  } catch (error) {
    throw new OpenLineageConfigError(
      where,
      `is not a valid regular expression: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
