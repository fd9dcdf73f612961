/**
 * The alerts configuration: read from the YAML file of `headwater serve --alerts-config FILE` or taken from an API
 * body, checked once against {@link alertsConfigSchema} and then for what a schema cannot say, and resolved into a
 * frozen {@link AlertsConfig}: durations in milliseconds, lists where one value was allowed, `${ENV_VAR}`
 * references replaced, the e-mail channel for owners' addresses chosen.
 *
 * Every problem names its path in the document (`rules[2].retryGrace`) and, from a file, its line and column.
 * All problems are reported at once, so a user fixes the file in one pass.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LineCounter, isMap, isNode, isScalar, parseDocument } from 'yaml';
import type { Document } from 'yaml';
import { HeadwaterError } from '../core/errors.js';
import type { OwnerScope, SignalKind } from './config-schema.js';
import { parseDurationMs } from '../core/config-reader.js';
import { alertsConfigSchema } from './config-schema.js';

export { alertsConfigSchema, signalKinds, ownerScopes } from './config-schema.js';
export type { OwnerScope, SignalKind } from './config-schema.js';

/** A channel that POSTs signed JSON (Standard Webhooks). */
export interface WebhookChannel {
  readonly type: 'webhook';
  readonly name: string;
  readonly url: string;
  /** `whsec_` and the key in base64. */
  readonly secret: string;
}

/** A channel that POSTs to a Slack incoming webhook. */
export interface SlackChannel {
  readonly type: 'slack';
  readonly name: string;
  readonly url: string;
}

/** How to reach an SMTP server. */
export interface SmtpSettings {
  readonly host: string;
  /** @default 465 when `secure`, else 587 */
  readonly port: number;
  /** TLS from the start; otherwise STARTTLS when the server offers it. @default true on port 465 */
  readonly secure: boolean;
  readonly user: string | undefined;
  readonly password: string | undefined;
}

/** A channel that sends e-mail over SMTP, to its own `to` and to owners' e-mail addresses. */
export interface EmailChannel {
  readonly type: 'email';
  readonly name: string;
  readonly smtp: SmtpSettings;
  /** The sender, `addr` or `Name <addr>`. */
  readonly from: string;
  /** Addresses told when this channel is itself a recipient (named by an owner or a rule). @default [] */
  readonly to: readonly string[];
}

/** Any channel. */
export type Channel = WebhookChannel | SlackChannel | EmailChannel;

/** Where an owner is told: one of the channels, or an e-mail address sent through the e-mail channel. */
export type OwnerAddress = { readonly channel: string } | { readonly email: string };

/** Globs a rule's signals must match; a missing filter matches everything. */
export interface RuleFilter {
  readonly namespace: readonly string[] | undefined;
  readonly dataset: readonly string[] | undefined;
  readonly job: readonly string[] | undefined;
}

/** Who a rule tells. */
export interface RuleNotify {
  /** @default 'both' */
  readonly owners: OwnerScope;
  /** How many hops downstream impacted owners are told; undefined for no limit. @default undefined */
  readonly depth: number | undefined;
  /** Channels told of every matching incident, besides owners. @default [] */
  readonly channels: readonly string[];
}

/** One rule: which signals open incidents and who hears of them. */
export interface AlertRule {
  /** The rule's `name`, else its place (`rules[0]`). */
  readonly name: string;
  readonly on: readonly SignalKind[];
  readonly where: RuleFilter;
  /**
   * How long a failed run waits for a retry before it opens an incident (`run_failed` only).
   * @default 600000 (10m: Airflow's default retry_delay is 5 minutes)
   */
  readonly retryGraceMs: number;
  readonly notify: RuleNotify;
  /**
   * The shortest time between two `updated` messages of one incident; openings, acknowledgements and
   * resolutions are always sent. 0 for none. @default 0
   */
  readonly throttleMs: number;
}

/** The resolved, frozen alerts configuration. */
export interface AlertsConfig {
  /** The explorer's base URL for links in messages; undefined for messages without links. */
  readonly explorerUrl: string | undefined;
  /** The e-mail channel that sends to owners' e-mail addresses; undefined when none is needed. */
  readonly emailChannel: string | undefined;
  readonly channels: Readonly<Record<string, Channel>>;
  readonly owners: Readonly<Record<string, readonly OwnerAddress[]>>;
  readonly rules: readonly AlertRule[];
}

/** One thing wrong with a configuration. */
export interface AlertsConfigProblem {
  /** Where, as `rules[2].retryGrace`; `` for the whole document. */
  readonly path: string;
  /** What is wrong and what would be right, without the path. */
  readonly message: string;
  /** Whether the key at `path` is wrong (unknown, or not a valid name), rather than its value. */
  readonly key?: true;
  /** 1-based line and column in the YAML file, when read from one. */
  readonly line?: number;
  readonly column?: number;
}

/** The outcome of {@link checkAlertsConfig}. */
export type AlertsConfigCheck =
  | { readonly ok: true; readonly config: AlertsConfig }
  | { readonly ok: false; readonly problems: readonly AlertsConfigProblem[] };

/** Options of {@link checkAlertsConfig} and {@link parseAlertsConfig}. */
export interface AlertsConfigOptions {
  /** Where `${ENV_VAR}` references are looked up. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** No channels, owners or rules: alerts off (what a transition made then is told to no one). */
export const NO_ALERTS: AlertsConfig = Object.freeze({
  explorerUrl: undefined,
  emailChannel: undefined,
  channels: Object.freeze({}),
  owners: Object.freeze({}),
  rules: Object.freeze([]),
});

/** The retry grace of a `run_failed` rule that sets none. */
export const DEFAULT_RETRY_GRACE_MS = 600_000;

/**
 * Milliseconds of a duration such as `90s`, `10m`, `1h30m` or `2d` (a unit is required), or undefined when the
 * text is not one.
 * @example durationMs('1h30m') // 5400000
 */
export const durationMs = (text: string): number | undefined => parseDurationMs(text, { bareSeconds: false });

let compiled: ValidateFunction<RawConfig> | undefined;
function schemaValidator(): ValidateFunction<RawConfig> {
  // Compiled on first use, once: most servers never load an alerts configuration.
  compiled ??= new Ajv2020({
    allErrors: true,
    verbose: true,
    discriminator: true,
    allowUnionTypes: true,
  }).compile<RawConfig>(alertsConfigSchema);
  return compiled;
}

/**
 * Checks an alerts configuration given as data (a parsed YAML file, or an API body) and resolves it. Never throws
 * for a bad configuration: the API answers 400 with the problems, the CLI prints them.
 *
 * @example
 * ```ts
 * const check = checkAlertsConfig(request.body, { env: process.env });
 * if (!check.ok) throw new HeadwaterError('BAD_REQUEST', 'invalid alerts configuration', {
 *   details: check.problems.map(formatAlertsConfigProblem),
 * });
 * ```
 */
export function checkAlertsConfig(input: unknown, options: AlertsConfigOptions = {}): AlertsConfigCheck {
  const document = input ?? {};
  const validate = schemaValidator();
  if (!validate(document)) return { ok: false, problems: schemaProblems(validate.errors ?? [], document) };
  return resolve(document, options.env ?? process.env);
}

/**
 * Parses the YAML text of an alerts configuration file and resolves it.
 * @param file The file's name, for messages.
 * @throws HeadwaterError INVALID_CONFIG listing every problem with its line, column and path.
 */
export function parseAlertsConfig(
  text: string,
  file: string,
  options: AlertsConfigOptions = {},
): AlertsConfig {
  return parseAlertsDocument(text, file, options).config;
}

/** A configuration as written (its `${ENV_VAR}` references kept), and as resolved. */
export interface AlertsDocument {
  readonly document: unknown;
  readonly config: AlertsConfig;
}

/**
 * {@link parseAlertsConfig}, also giving the document as written: what the server stores and the API shows
 * (redacted), so that secrets given as `${ENV_VAR}` stay in the environment.
 */
export function parseAlertsDocument(
  text: string,
  file: string,
  options: AlertsConfigOptions = {},
): AlertsDocument {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  let problems: AlertsConfigProblem[];
  if (doc.errors.length > 0) {
    problems = doc.errors.map((error) => {
      const at = error.linePos?.[0];
      // The message's first line, without the position that `line` and `column` give.
      const message = `not valid YAML: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
      return at === undefined ? { path: '', message } : { path: '', message, line: at.line, column: at.col };
    });
  } else {
    const document: unknown = doc.toJS({ maxAliasCount: 100 });
    const check = checkAlertsConfig(document, options);
    if (check.ok) return { document, config: check.config };
    problems = check.problems
      .map((problem) => locate(problem, doc, lineCounter))
      .sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  }
  throw new HeadwaterError(
    'INVALID_CONFIG',
    `The alerts configuration ${file} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}; ` +
      `fix ${problems.length === 1 ? 'it' : 'them'} and start again:\n` +
      problems.map((problem) => `  ${formatAlertsConfigProblem(problem, file)}`).join('\n'),
    { details: problems.map((problem) => formatAlertsConfigProblem(problem, file)) },
  );
}

/**
 * Reads and resolves the alerts configuration file of `--alerts-config FILE`.
 * @throws HeadwaterError INVALID_CONFIG when the file cannot be read or has problems.
 */
export function readAlertsConfig(file: string, options: AlertsConfigOptions = {}): AlertsConfig {
  return readAlertsDocument(file, options).config;
}

/** {@link readAlertsConfig}, also giving the document as written (see {@link parseAlertsDocument}). */
export function readAlertsDocument(file: string, options: AlertsConfigOptions = {}): AlertsDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `--alerts-config: cannot read ${file}: ${(cause as Error).message}. Check the path and its permissions.`,
      { cause },
    );
  }
  return parseAlertsDocument(text, file, options);
}

/** One problem as a line: `file:line:column: path: message`, leaving out what is unknown. */
export function formatAlertsConfigProblem(problem: AlertsConfigProblem, file?: string): string {
  let where = file ?? '';
  if (problem.line !== undefined) where += `${where === '' ? '' : ':'}${problem.line}:${problem.column ?? 1}`;
  const prefix = [where, problem.path].filter((part) => part !== '').join(': ');
  return prefix === '' ? problem.message : `${prefix}: ${problem.message}`;
}

/**
 * A copy of a configuration document (as given, before resolution) with its secrets (webhook URLs and secrets,
 * Slack URLs, SMTP passwords) replaced by `[redacted]`, unless they are `${ENV_VAR}` references, which say
 * nothing secret. For showing a configuration through the API or in logs.
 */
export function redactAlertsDocument(input: unknown): unknown {
  if (!isRecord(input) || !isRecord(input.channels)) return input;
  const channels: Record<string, unknown> = {};
  for (const [name, channel] of Object.entries(input.channels)) {
    if (!isRecord(channel)) {
      channels[name] = channel;
      continue;
    }
    const copy: Record<string, unknown> = { ...channel };
    for (const key of ['url', 'secret']) if (key in copy) copy[key] = redacted(copy[key]);
    if (isRecord(copy.smtp) && 'password' in copy.smtp)
      copy.smtp = { ...copy.smtp, password: redacted(copy.smtp.password) };
    channels[name] = copy;
  }
  return { ...input, channels };
}

const redacted = (value: unknown): unknown =>
  typeof value === 'string' && /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(value) ? value : '[redacted]';

// ---------------------------------------------------------------------------------------------------------------
// Resolution: what the schema cannot check.

type OneOrMany = string | readonly string[];
interface RawChannel {
  readonly type: 'webhook' | 'slack' | 'email';
  readonly url?: string;
  readonly secret?: string;
  readonly smtp?: { host: string; port?: number; secure?: boolean; user?: string; password?: string };
  readonly from?: string;
  readonly to?: OneOrMany;
}
interface RawRule {
  readonly name?: string;
  readonly on: OneOrMany;
  readonly where?: { namespace?: OneOrMany; dataset?: OneOrMany; job?: OneOrMany };
  readonly retryGrace?: string;
  readonly notify?: { owners?: OwnerScope; depth?: number; channels?: OneOrMany };
  readonly throttle?: string;
}
interface RawConfig {
  readonly explorerUrl?: string;
  readonly emailChannel?: string;
  readonly channels?: Readonly<Record<string, RawChannel>>;
  readonly owners?: Readonly<Record<string, OneOrMany>>;
  readonly rules?: readonly RawRule[];
}

type Segments = readonly (string | number)[];

const list = (value: OneOrMany | undefined): readonly string[] | undefined =>
  value === undefined ? undefined : typeof value === 'string' ? [value] : [...value];

/** An e-mail address, or `Name <address>`; the address part is returned. */
function mailbox(text: string): string | undefined {
  const angle = /<([^<>]+)>\s*$/.exec(text);
  const address = (angle ? angle[1]! : text).trim();
  return /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+$/.test(address) ? address : undefined;
}

function resolve(raw: RawConfig, env: Readonly<Record<string, string | undefined>>): AlertsConfigCheck {
  const problems: AlertsConfigProblem[] = [];
  const problem = (segments: Segments, message: string): void => {
    problems.push({ path: formatPath(segments), message });
  };

  /** Replaces `${NAME}` references; `$${` is a literal `${`. */
  const expand = (value: string, segments: Segments): string =>
    value.replace(/\$(\$?)\{([^}]*)\}/g, (whole, escaped: string, name: string) => {
      if (escaped === '$') return whole.slice(1);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        problem(segments, `\${${name}} is not an environment variable reference like \${WEBHOOK_SECRET}.`);
        return '';
      }
      const found = env[name];
      if (found === undefined || found === '') {
        problem(
          segments,
          `the environment variable ${name} is not set; set it, or write the value in the file.`,
        );
        return '';
      }
      return found;
    });
  const fromEnv = (value: string): string => (/\$\{/.test(value) ? ' (after ${...} references)' : '');

  const httpUrl = (value: string, segments: Segments, what: string): string => {
    const url = expand(value, segments);
    if (url === '') return url;
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    // The value is not echoed: a Slack URL, or a webhook URL with a token, is itself a secret.
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      problem(segments, `${what} must be an http:// or https:// URL${fromEnv(value)}.`);
    return url;
  };

  const channels: Record<string, Channel> = {};
  for (const [name, rawChannel] of Object.entries(raw.channels ?? {})) {
    const at = ['channels', name];
    if (rawChannel.type === 'webhook') {
      const url = httpUrl(rawChannel.url!, [...at, 'url'], 'the webhook URL');
      const secret = expand(rawChannel.secret!, [...at, 'secret']);
      if (secret !== '') {
        const key = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret)?.[1];
        const bytes = key !== undefined && key.length % 4 === 0 ? Buffer.from(key, 'base64').length : 0;
        if (bytes < 24 || bytes > 64)
          problem(
            [...at, 'secret'],
            `the secret${fromEnv(rawChannel.secret!)} must be whsec_ followed by 24 to 64 random bytes in base64 ` +
              `(Standard Webhooks); make one with: node -e "console.log('whsec_' + ` +
              `require('crypto').randomBytes(32).toString('base64'))"`,
          );
      }
      channels[name] = { type: 'webhook', name, url, secret };
    } else if (rawChannel.type === 'slack') {
      channels[name] = {
        type: 'slack',
        name,
        url: httpUrl(rawChannel.url!, [...at, 'url'], "the Slack webhook's URL"),
      };
    } else {
      const smtp = rawChannel.smtp!;
      const secure = smtp.secure ?? smtp.port === 465;
      const user = smtp.user === undefined ? undefined : expand(smtp.user, [...at, 'smtp', 'user']);
      const password =
        smtp.password === undefined ? undefined : expand(smtp.password, [...at, 'smtp', 'password']);
      if (password !== undefined && user === undefined)
        problem([...at, 'smtp', 'password'], 'a password needs a user; add smtp.user.');
      const from = expand(rawChannel.from!, [...at, 'from']);
      if (from !== '' && mailbox(from) === undefined)
        problem([...at, 'from'], `${JSON.stringify(from)} is not an e-mail address like alerts@example.com.`);
      const to = (list(rawChannel.to) ?? []).map((address, index) => {
        const value = expand(address, [...at, 'to', index]);
        if (value !== '' && mailbox(value) === undefined)
          problem(
            typeof rawChannel.to === 'string' ? [...at, 'to'] : [...at, 'to', index],
            `${JSON.stringify(value)} is not an e-mail address like oncall@example.com.`,
          );
        return value;
      });
      channels[name] = {
        type: 'email',
        name,
        smtp: {
          host: expand(smtp.host, [...at, 'smtp', 'host']),
          port: smtp.port ?? (secure ? 465 : 587),
          secure,
          user,
          password,
        },
        from,
        to,
      };
    }
  }
  const channelNames = Object.keys(channels);
  const known = channelNames.length === 0 ? 'there are none' : `known: ${channelNames.join(', ')}`;
  const emailChannels = Object.values(channels).filter((channel) => channel.type === 'email');

  let emailChannel: string | undefined;
  if (raw.emailChannel !== undefined) {
    const chosen = channels[raw.emailChannel];
    if (chosen === undefined || !Object.hasOwn(channels, raw.emailChannel))
      problem(
        ['emailChannel'],
        `there is no channel ${JSON.stringify(raw.emailChannel)} in channels (${known}).`,
      );
    else if (chosen.type !== 'email')
      problem(
        ['emailChannel'],
        `the channel ${raw.emailChannel} is a ${chosen.type} channel, not an email one.`,
      );
    else emailChannel = raw.emailChannel;
  } else if (emailChannels.length === 1) emailChannel = emailChannels[0]!.name;

  const channelRef = (name: string, segments: Segments): void => {
    if (!Object.hasOwn(channels, name))
      problem(segments, `there is no channel ${JSON.stringify(name)} in channels (${known}).`);
  };

  const owners: Record<string, readonly OwnerAddress[]> = {};
  for (const [owner, value] of Object.entries(raw.owners ?? {})) {
    const many = typeof value !== 'string';
    owners[owner] = list(value)!.map((address, index): OwnerAddress => {
      const at: Segments = many ? ['owners', owner, index] : ['owners', owner];
      if (!address.includes('@')) {
        channelRef(address, at);
        const channel = channels[address];
        if (channel?.type === 'email' && channel.to.length === 0)
          problem(
            at,
            `the email channel ${address} has no \`to\`, so naming it sends nothing; write the owner's e-mail address instead, or add channels.${address}.to.`,
          );
        return { channel: address };
      }
      if (mailbox(address) !== address)
        problem(at, `${JSON.stringify(address)} is not an e-mail address like ann@example.com.`);
      else if (emailChannel === undefined && raw.emailChannel === undefined)
        problem(
          at,
          emailChannels.length === 0
            ? `an e-mail address needs an email channel to send through; add one to channels.`
            : `an e-mail address needs to know which email channel sends it (${emailChannels
                .map((channel) => channel.name)
                .join(', ')}); set emailChannel.`,
        );
      return { email: address };
    });
  }

  const rules = (raw.rules ?? []).map((rule, index): AlertRule => {
    const at = ['rules', index];
    const on = [...new Set(list(rule.on))] as SignalKind[];
    if (rule.retryGrace !== undefined && !on.includes('run_failed'))
      problem(
        [...at, 'retryGrace'],
        'a retry grace only applies to run_failed; add run_failed to on, or remove retryGrace.',
      );
    const channelsTold = list(rule.notify?.channels) ?? [];
    channelsTold.forEach((name, position) => {
      const where =
        typeof rule.notify?.channels === 'string'
          ? [...at, 'notify', 'channels']
          : [...at, 'notify', 'channels', position];
      channelRef(name, where);
      const channel = channels[name];
      if (channel?.type === 'email' && channel.to.length === 0)
        problem(
          where,
          `the email channel ${name} has no \`to\`, so a rule naming it sends nothing; add channels.${name}.to.`,
        );
    });
    return {
      name: rule.name ?? formatPath(at),
      on,
      where: {
        namespace: list(rule.where?.namespace),
        dataset: list(rule.where?.dataset),
        job: list(rule.where?.job),
      },
      // The schema's pattern has already vouched for these.
      retryGraceMs:
        rule.retryGrace !== undefined
          ? durationMs(rule.retryGrace)!
          : on.includes('run_failed')
            ? DEFAULT_RETRY_GRACE_MS
            : 0,
      notify: {
        owners: rule.notify?.owners ?? 'both',
        depth: rule.notify?.depth,
        channels: [...new Set(channelsTold)],
      },
      throttleMs: rule.throttle !== undefined ? durationMs(rule.throttle)! : 0,
    };
  });
  const names = new Map<string, number>();
  rules.forEach((rule, index) => {
    const first = names.get(rule.name);
    if (first !== undefined)
      problem(
        ['rules', index, 'name'],
        `the name ${rule.name} is already used by rules[${first}]; names must differ.`,
      );
    else names.set(rule.name, index);
  });

  let explorerUrl: string | undefined;
  if (raw.explorerUrl !== undefined) {
    explorerUrl = httpUrl(raw.explorerUrl, ['explorerUrl'], "the explorer's address").replace(/\/+$/, '');
  }

  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: deepFreeze({ explorerUrl, emailChannel, channels, owners, rules }) };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// Schema errors, in words.

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `['rules', 2, 'retryGrace']` as `rules[2].retryGrace`; keys that are not plain words are quoted. */
export function formatPath(segments: Segments): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function pointerSegments(pointer: string, data: unknown): (string | number)[] {
  if (pointer === '') return [];
  const segments: (string | number)[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const segment = Array.isArray(node) ? Number(key) : key;
    segments.push(segment);
    node = isRecord(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
  }
  return segments;
}

function describe(value: unknown): string {
  if (value === null) return 'nothing (null)';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return JSON.stringify(value);
  return `the ${typeof value} ${JSON.stringify(value)}`;
}

const descriptionOf = (schema: unknown): string | undefined =>
  isRecord(schema) && typeof schema.description === 'string' ? schema.description : undefined;

/** Words for one Ajv error, or undefined for errors whose cause is reported by another one. */
function schemaProblem(
  error: ErrorObject,
  root: unknown,
): { segments: Segments; message: string; key?: true } | undefined {
  const segments = pointerSegments(error.instancePath, root);
  const description = descriptionOf(error.parentSchema);
  const params: Record<string, unknown> = error.params;
  switch (error.keyword) {
    case 'if':
    case 'oneOf':
    case 'anyOf':
    case 'propertyNames':
      return undefined;
    case 'required': {
      const missing = String(params.missingProperty);
      const properties: unknown = isRecord(error.parentSchema) ? error.parentSchema.properties : undefined;
      const wanted = isRecord(properties) ? descriptionOf(properties[missing]) : undefined;
      return { segments, message: `${missing} is missing${wanted === undefined ? '' : `: give ${wanted}`}.` };
    }
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const allowed =
        isRecord(error.parentSchema) && isRecord(error.parentSchema.properties)
          ? Object.keys(error.parentSchema.properties)
          : [];
      const squash = (text: string): string => text.toLowerCase().replace(/[-_\s]/g, '');
      const near = allowed.find((name) => squash(name) === squash(key));
      return {
        segments: [...segments, key],
        key: true,
        message:
          `unknown key${near === undefined ? '' : `; did you mean ${near}?`}` +
          (allowed.length > 0
            ? ` (allowed here: ${allowed.filter((name) => name !== 'type').join(', ')})`
            : ''),
      };
    }
    case 'discriminator': {
      const value = isRecord(error.data) ? error.data.type : undefined;
      if (value === undefined) return undefined; // reported as missing by `required`
      return {
        segments: [...segments, 'type'],
        message: `${describe(value)} is not a channel type; use webhook, slack or email.`,
      };
    }
    case 'type':
      return {
        segments,
        message: `expected ${description ?? String(params.type)}, got ${describe(error.data)}.`,
      };
    default:
      if (error.propertyName !== undefined)
        return {
          segments: [...segments, error.propertyName],
          key: true,
          message: `${JSON.stringify(error.propertyName)} is not ${description ?? 'a valid key'}.`,
        };
      if (description !== undefined)
        return { segments, message: `${describe(error.data)} is not ${description}.` };
      return { segments, message: `${describe(error.data)}: ${error.message ?? 'is not valid'}.` };
  }
}

function schemaProblems(errors: readonly ErrorObject[], document: unknown): AlertsConfigProblem[] {
  const seen = new Set<string>();
  const problems: AlertsConfigProblem[] = [];
  for (const error of errors) {
    const found = schemaProblem(error, document);
    if (found === undefined) continue;
    const path = formatPath(found.segments);
    const key = `${path}\n${found.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(found.key ? { path, message: found.message, key: true } : { path, message: found.message });
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// Lines and columns, from the YAML document.

function locate(problem: AlertsConfigProblem, doc: Document, lineCounter: LineCounter): AlertsConfigProblem {
  const segments = parsePath(problem.path);
  const at = (offset: number): AlertsConfigProblem => {
    const position = lineCounter.linePos(offset);
    return { ...problem, line: position.line, column: position.col };
  };
  if (problem.key && segments.length > 0) {
    const parent: unknown = doc.getIn(segments.slice(0, -1), true);
    const name = String(segments[segments.length - 1]);
    const pair = isMap(parent)
      ? parent.items.find((item) => isScalar(item.key) && String(item.key.value) === name)
      : undefined;
    if (pair !== undefined && isScalar(pair.key) && pair.key.range) return at(pair.key.range[0]);
  }
  // The deepest node that exists: a bad value points at the value, a missing key at the map that lacks it.
  for (let length = segments.length; length >= 0; length--) {
    const node: unknown = length === 0 ? doc.contents : doc.getIn(segments.slice(0, length), true);
    if (isNode(node) && node.range) return at(node.range[0]);
  }
  return problem;
}

/** The inverse of {@link formatPath}. */
function parsePath(path: string): (string | number)[] {
  const segments: (string | number)[] = [];
  const pattern = /\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?([A-Za-z_][A-Za-z0-9_-]*)/gy;
  for (const match of path.matchAll(pattern)) {
    if (match[1] !== undefined) segments.push(Number(match[1]));
    else if (match[2] !== undefined) segments.push(JSON.parse(match[2]) as string);
    else if (match[3] !== undefined) segments.push(match[3]);
  }
  return segments;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
