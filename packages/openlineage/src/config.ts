import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { UndeliveredHandler } from './transports/async-transport.js';
import { createAsyncTransport } from './transports/async-transport.js';
import { createCompositeTransport } from './transports/composite-transport.js';
import { createConsoleTransport } from './transports/console-transport.js';
import type { FileTransportMode } from './transports/file-transport.js';
import { createFileTransport } from './transports/file-transport.js';
import type { HttpAuth, HttpTransportOptions } from './transports/http-transport.js';
import { createHttpTransport } from './transports/http-transport.js';
import { createKafkaTransport, KafkaConfigError } from './transports/kafka-transport.js';
import { createNoopTransport } from './transports/noop-transport.js';
import type { RetryOptions } from './transports/retry.js';
import { withRetry } from './transports/retry.js';
import type { EventTransformer } from './transports/transform-transport.js';
import { createTransformTransport } from './transports/transform-transport.js';
import type { Transport } from './transports/transport.js';

/** A configuration tree as found in `openlineage.yml` (keys as the Python client spells them). */
export type ConfigTree = { [key: string]: unknown };

/** Bad configuration: thrown once, when the client or transport is created. `key` names the culprit. */
export class OpenLineageConfigError extends Error {
  override readonly name = 'OpenLineageConfigError';
  constructor(
    /** Dotted path of the bad key, e.g. `transport.timeout`. */
    readonly key: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`OpenLineage configuration: ${key}: ${message}`, options);
  }
}

/** Where configuration is read from; every field defaults to the real process, and tests pass their own. */
export interface ConfigSources {
  /** @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Folder searched for `openlineage.yml`. @default process.cwd() */
  readonly cwd?: string;
  /** Home folder searched for `.openlineage/openlineage.yml`. @default os.homedir() */
  readonly homeDir?: string;
}

/** The configuration the client runs with, and where it came from. */
export interface ResolvedConfig {
  /** The merged tree: explicit config over the YAML file over `OPENLINEAGE__` variables. */
  readonly config: ConfigTree;
  /** The YAML file read, if any. */
  readonly configFile: string | undefined;
  /** `OPENLINEAGE_DISABLED` is `true` (any case). */
  readonly disabled: boolean;
  /** The environment after the Python client's aliasing of `OPENLINEAGE_URL`. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

const DYNAMIC_PREFIX = 'OPENLINEAGE__';
const DEFAULT_TRANSPORT_NAME = 'DEFAULT_HTTP';

/**
 * Reads configuration the way the Python client does: the explicit `config` tree, then the first readable
 * YAML file of `$OPENLINEAGE_CONFIG`, `./openlineage.yml`, `~/.openlineage/openlineage.yml`, then
 * `OPENLINEAGE__` variables, deep-merged with the earlier source winning.
 *
 * `OPENLINEAGE__TRANSPORT__TYPE=http` becomes `{ transport: { type: 'http' } }`: the name is split on `__`,
 * each key lowercased, and the value JSON-parsed when it parses (`5`, `true`, `{"type":"api_key"}`), else
 * kept as a string. A shorter variable beats a longer one it overlaps (`OPENLINEAGE__TRANSPORT` wins over
 * `OPENLINEAGE__TRANSPORT__TYPE`), as in Python.
 *
 * @throws OpenLineageConfigError when the YAML file cannot be parsed or is not a mapping.
 */
export function resolveConfig(explicit: ConfigTree | undefined, sources: ConfigSources = {}): ResolvedConfig {
  const env = aliasEnv(sources.env ?? process.env);
  const disabled = (env.OPENLINEAGE_DISABLED ?? '').trim().toLowerCase() === 'true';
  const configFile = findConfigFile(env, sources.cwd ?? process.cwd(), sources.homeDir ?? os.homedir());
  let config: ConfigTree = explicit === undefined ? {} : structuredClone(explicit);
  if (configFile !== undefined) config = deepMerge(readConfigFile(configFile), config);
  config = deepMerge(configFromEnv(env), config);
  return { config, configFile, disabled, env };
}

/**
 * When `OPENLINEAGE_URL` is set, the Python client also exposes it as a child named `default_http` of a
 * composite transport, and (for `OPENLINEAGE__TRANSPORT__TYPE=async_http`) as the async transport's URL.
 */
function aliasEnv(source: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const env = { ...source };
  const url = env.OPENLINEAGE_URL;
  if (url === undefined || url === '') return env;
  const prefix = `${DYNAMIC_PREFIX}TRANSPORT__TRANSPORTS__${DEFAULT_TRANSPORT_NAME}`;
  if (Object.keys(env).some((key) => key.startsWith(prefix))) return env;
  const apiKey = env.OPENLINEAGE_API_KEY;
  const endpoint = env.OPENLINEAGE_ENDPOINT;
  const auth = apiKey ? JSON.stringify({ type: 'api_key', apiKey }) : undefined;
  env[`${prefix}__TYPE`] = 'http';
  env[`${prefix}__URL`] = url;
  if (auth !== undefined) env[`${prefix}__AUTH`] = auth;
  if (endpoint) env[`${prefix}__ENDPOINT`] = endpoint;
  if (env[`${DYNAMIC_PREFIX}TRANSPORT__TYPE`] === 'async_http') {
    env[`${DYNAMIC_PREFIX}TRANSPORT__URL`] ||= url;
    if (auth !== undefined) env[`${DYNAMIC_PREFIX}TRANSPORT__AUTH`] ||= auth;
    if (endpoint) env[`${DYNAMIC_PREFIX}TRANSPORT__ENDPOINT`] ||= endpoint;
  }
  return env;
}

/** Builds the config tree of the `OPENLINEAGE__` variables. */
export function configFromEnv(env: Readonly<Record<string, string | undefined>>): ConfigTree {
  const config: ConfigTree = {};
  const entries = Object.entries(env)
    .filter(
      (entry): entry is [string, string] => entry[0].startsWith(DYNAMIC_PREFIX) && entry[1] !== undefined,
    )
    // Reverse order puts `A__B` before `A`, so the shorter (higher-level) variable is written last and wins.
    .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0));
  for (const [name, raw] of entries) {
    const keys = name
      .slice(DYNAMIC_PREFIX.length)
      .split('__')
      .map((key) => key.toLowerCase());
    if (keys.some((key) => key === '')) continue;
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Not JSON: keep the string, as Python does.
    }
    let node = config;
    for (const key of keys.slice(0, -1)) {
      const child = node[key];
      if (!isTree(child)) node[key] = {};
      node = node[key] as ConfigTree;
    }
    node[keys.at(-1)!] = value;
  }
  return config;
}

function findConfigFile(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  home: string,
): string | undefined {
  const candidates = [
    env.OPENLINEAGE_CONFIG,
    path.join(cwd, 'openlineage.yml'),
    path.join(home, '.openlineage', 'openlineage.yml'),
  ];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === '') continue;
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.R_OK);
      return candidate;
    } catch {
      // Missing or unreadable: try the next place, as Python does.
    }
  }
  return undefined;
}

function readConfigFile(file: string): ConfigTree {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new OpenLineageConfigError(
      file,
      `is not valid YAML (${(cause as Error).message}); fix or remove the file`,
      {
        cause,
      },
    );
  }
  // An empty file is ignored (Python logs an error and carries on).
  if (parsed === null || parsed === undefined) return {};
  if (!isTree(parsed))
    throw new OpenLineageConfigError(file, 'must hold a YAML mapping such as `transport: {type: http}`');
  return parsed;
}

/** Merges `override` into `base`; nested mappings merge, anything else in `override` replaces. */
export function deepMerge(base: ConfigTree, override: ConfigTree): ConfigTree {
  const out: ConfigTree = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const existing = out[key];
    out[key] = isTree(existing) && isTree(value) ? deepMerge(existing, value) : value;
  }
  return out;
}

function isTree(value: unknown): value is ConfigTree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Makes a transport from the options of a custom transport `type`. */
export type TransportFactory = (
  config: ConfigTree,
  key: string,
  context: TransportFactoryContext,
) => Transport;

/** What {@link createTransportFromConfig} passes to factories and needs from its caller. */
export interface TransportFactoryContext {
  /** Creates a nested transport (composite children, transform target). */
  readonly create: (config: unknown, key: string) => Transport;
  /** Receives events an async transport gave up on. */
  readonly onUndelivered?: UndeliveredHandler;
  /** Receives warnings about configuration accepted but not fully honoured. */
  readonly onWarning?: (message: string) => void;
}

/** Options of {@link createTransportFromConfig}. */
export interface TransportFromConfigOptions {
  /** Extra transport types by `type` name; they win over built-in ones of the same name. */
  readonly transportFactories?: Readonly<Record<string, TransportFactory>>;
  /** Transformers a `transform` transport can name in `transformer_class`. */
  readonly transformers?: Readonly<Record<string, (properties: ConfigTree) => EventTransformer>>;
  /** Receives events an `async_http` transport gave up on. */
  readonly onUndelivered?: UndeliveredHandler;
  /** Receives warnings about configuration accepted but not fully honoured. @default console.warn */
  readonly onWarning?: (message: string) => void;
  /** Retry settings used where the config has no `retry` (tests shorten the waits). */
  readonly retryDefaults?: RetryOptions;
}

/** The transformer the Python client ships: replaces the job namespace of every event. */
const JOB_NAMESPACE_REPLACE = 'openlineage.client.transport.transform.JobNamespaceReplaceTransformer';

/**
 * Creates a transport from a `transport` config tree, with the Python client's key names:
 *
 * | type | keys |
 * |---|---|
 * | `http` | `url`, `endpoint`, `timeout` (s), `auth` `{type: api_key, apiKey}`, `compression`, `custom_headers`, `url_params`, `retry` `{total, backoff_factor, max_delay}` |
 * | `async_http` | the `http` keys, `max_queue_size`, `batch_size`, `flush_interval` (s), `batch` (use `/lineage/batch`), `batch_endpoint` |
 * | `console`, `noop` | none |
 * | `kafka` | `topic`, `config` (librdkafka keys: `bootstrap.servers`, `security.protocol`, `sasl.*`, `ssl.*`), `messageKey`, `flush`; needs `@platformatic/kafka` |
 * | `file` | `log_file_path`, `append` (true: NDJSON; false: one file per event), `mode` (`append`, `overwrite`, `per-event`) |
 * | `composite` | `transports` (list, or map of name to config), `continue_on_failure`, `continue_on_success`, `sort_transports`; children may have `name`, `priority` |
 * | `transform` | `transport`, `transformer_class`, `transformer_properties` |
 *
 * @throws OpenLineageConfigError once, naming the key, for an unknown type, a missing or mistyped value, or an unknown key.
 */
export function createTransportFromConfig(
  config: unknown,
  options: TransportFromConfigOptions = {},
  key = 'transport',
): Transport {
  const onWarning = options.onWarning ?? ((message: string) => console.warn(message));
  const context: TransportFactoryContext = {
    create: (child, childKey) => createTransportFromConfig(child, options, childKey),
    onWarning,
    ...(options.onUndelivered === undefined ? {} : { onUndelivered: options.onUndelivered }),
  };
  if (!isTree(config))
    throw new OpenLineageConfigError(key, `must be a mapping with a "type", got ${describe(config)}`);
  const type = config.type;
  if (typeof type !== 'string' || type === '') {
    throw new OpenLineageConfigError(`${key}.type`, `is required; one of ${knownTypes(options).join(', ')}`);
  }
  const custom = options.transportFactories?.[type];
  if (custom !== undefined) return custom(config, key, context);
  const read = new ConfigReader(config, key);
  switch (type) {
    case 'console':
      read.done([]);
      return createConsoleTransport();
    case 'noop':
      read.done([]);
      return createNoopTransport();
    case 'http': {
      const http = httpOptions(read, false);
      const retry = retryOptions(read, options.retryDefaults);
      read.done(PYTHON_HTTP_IGNORED, onWarning);
      return withRetry(createHttpTransport(http), retry);
    }
    case 'async_http': {
      const http = httpOptions(read, true);
      const retry = retryOptions(read, options.retryDefaults);
      const maxQueueSize = read.positiveInteger('max_queue_size');
      const batchSize = read.positiveInteger('batch_size');
      const flushInterval = read.positiveNumber('flush_interval');
      read.done([...PYTHON_HTTP_IGNORED, 'max_concurrent_requests'], onWarning);
      return createAsyncTransport({
        transport: withRetry(createHttpTransport(http), retry),
        ...(maxQueueSize === undefined ? {} : { maxQueueSize }),
        ...(batchSize === undefined ? {} : { batchSize }),
        ...(flushInterval === undefined ? {} : { flushIntervalMs: flushInterval * 1000 }),
        ...(options.onUndelivered === undefined ? {} : { onUndelivered: options.onUndelivered }),
      });
    }
    case 'file': {
      const logFilePath = read.string('log_file_path', true);
      const append = read.boolean('append');
      const mode = read.oneOf<FileTransportMode>('mode', ['append', 'overwrite', 'per-event']);
      read.done(['storage_options', 'filesystem', 'fs_kwargs'], onWarning);
      return createFileTransport({
        path: logFilePath,
        mode: mode ?? (append === true ? 'append' : 'per-event'),
      });
    }
    case 'kafka': {
      const topic = read.string('topic', true);
      const kafkaConfig = read.stringMap('config');
      if (kafkaConfig === undefined)
        throw new OpenLineageConfigError(
          `${key}.config`,
          'is required: the Kafka settings, with bootstrap.servers',
        );
      const messageKey = read.string('messageKey') ?? read.string('message_key');
      // Each send resolves once the broker acknowledged it, which is what flush: true asks for.
      read.boolean('flush');
      read.done([]);
      try {
        return createKafkaTransport({
          topic,
          config: kafkaConfig,
          onWarning,
          ...(messageKey === undefined ? {} : { messageKey }),
        });
      } catch (cause) {
        if (!(cause instanceof KafkaConfigError)) throw cause;
        const where = cause.key === 'topic' ? `${key}.topic` : `${key}.config.${cause.key}`;
        throw new OpenLineageConfigError(where, cause.problem, { cause });
      }
    }
    case 'composite':
      return compositeTransport(read, context);
    case 'transform': {
      const inner = context.create(config.transport, `${key}.transport`);
      read.take('transport');
      const className = read.string('transformer_class', true);
      const properties = read.tree('transformer_properties') ?? {};
      read.done([]);
      const make = options.transformers?.[className] ?? builtInTransformer(className);
      if (make === undefined) {
        const known = [JOB_NAMESPACE_REPLACE, ...Object.keys(options.transformers ?? {})];
        throw new OpenLineageConfigError(
          `${key}.transformer_class`,
          `unknown transformer "${className}"; known: ${known.join(', ')} (register more with the "transformers" option)`,
        );
      }
      let transform: EventTransformer;
      try {
        transform = make(properties);
      } catch (cause) {
        if (cause instanceof OpenLineageConfigError) throw cause;
        throw new OpenLineageConfigError(`${key}.transformer_properties`, (cause as Error).message, {
          cause,
        });
      }
      return createTransformTransport({ transport: inner, transform });
    }
    default:
      throw new OpenLineageConfigError(
        `${key}.type`,
        `unknown transport type "${type}"; use one of ${knownTypes(options).join(', ')}, or register it with the "transportFactories" option`,
      );
  }
}

function knownTypes(options: TransportFromConfigOptions): string[] {
  const builtIn = ['http', 'async_http', 'console', 'file', 'kafka', 'composite', 'transform', 'noop'];
  return [...builtIn, ...Object.keys(options.transportFactories ?? {})];
}

function builtInTransformer(name: string): ((properties: ConfigTree) => EventTransformer) | undefined {
  if (name !== JOB_NAMESPACE_REPLACE && name !== 'JobNamespaceReplaceTransformer') return undefined;
  return (properties) => {
    const namespace = properties.new_job_namespace;
    if (typeof namespace !== 'string' || namespace === '') {
      throw new Error('new_job_namespace is required: the namespace to put on every job');
    }
    return (event) =>
      'job' in event && event.job !== undefined ? { ...event, job: { ...event.job, namespace } } : event;
  };
}

// Keys of the Python http transport that have no meaning here; accepted so existing files keep working.
const PYTHON_HTTP_IGNORED = ['verify', 'session', 'adapter'];

function httpOptions(read: ConfigReader, async: boolean): HttpTransportOptions {
  const url = read.string('url', true);
  const endpoint = read.string('endpoint');
  const timeout = read.positiveNumber('timeout');
  const compression = read.oneOf<'gzip'>('compression', ['gzip']);
  const headers = read.stringMap('custom_headers');
  const urlParams = read.stringMap('url_params');
  const auth = authOptions(read);
  const batch = async ? read.boolean('batch') : undefined;
  const batchEndpoint = async ? read.string('batch_endpoint') : undefined;
  // createHttpTransport validates the URL too; checked here so the error names the key.
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new OpenLineageConfigError(read.path('url'), `"${url}" is not an absolute http(s) URL`);
  }
  return createOptions({
    url,
    endpoint,
    timeoutMs: timeout === undefined ? undefined : timeout * 1000,
    compression,
    headers,
    urlParams,
    auth,
    batch,
    batchEndpoint,
  });
}

function createOptions(values: {
  url: string;
  endpoint: string | undefined;
  timeoutMs: number | undefined;
  compression: 'gzip' | undefined;
  headers: Record<string, string> | undefined;
  urlParams: Record<string, string> | undefined;
  auth: HttpAuth | undefined;
  batch: boolean | undefined;
  batchEndpoint: string | undefined;
}): HttpTransportOptions {
  const out: { -readonly [K in keyof HttpTransportOptions]?: HttpTransportOptions[K] } = { url: values.url };
  if (values.endpoint !== undefined) out.endpoint = values.endpoint;
  if (values.timeoutMs !== undefined) out.timeoutMs = values.timeoutMs;
  if (values.compression !== undefined) out.compression = values.compression;
  if (values.headers !== undefined) out.headers = values.headers;
  if (values.urlParams !== undefined) out.urlParams = values.urlParams;
  if (values.auth !== undefined) out.auth = values.auth;
  if (values.batch !== undefined) out.batch = values.batch;
  if (values.batchEndpoint !== undefined) out.batchEndpoint = values.batchEndpoint;
  return out as HttpTransportOptions;
}

function authOptions(read: ConfigReader): HttpAuth | undefined {
  const auth = read.tree('auth');
  if (auth === undefined) return undefined;
  const authRead = new ConfigReader(auth, read.path('auth'));
  const type = authRead.string('type', true);
  if (type !== 'api_key') {
    throw new OpenLineageConfigError(
      authRead.path('type'),
      `unsupported auth type "${type}"; use api_key, or pass { type: 'bearer', token } in code (jwt is not supported yet)`,
    );
  }
  // The Python client accepts all three spellings.
  const apiKey = authRead.string('apiKey') ?? authRead.string('apikey') ?? authRead.string('api_key');
  authRead.done([]);
  if (apiKey === undefined || apiKey === '') {
    throw new OpenLineageConfigError(authRead.path('apiKey'), 'is required for auth type api_key');
  }
  return { type: 'api_key', apiKey };
}

function retryOptions(read: ConfigReader, defaults: RetryOptions | undefined): RetryOptions {
  const retry = read.tree('retry');
  const out: { -readonly [K in keyof RetryOptions]: RetryOptions[K] } = { ...defaults };
  if (retry === undefined) return out;
  const retryRead = new ConfigReader(retry, read.path('retry'));
  const total = retryRead.nonNegativeInteger('total');
  const backoffFactor = retryRead.nonNegativeNumber('backoff_factor');
  const maxDelay = retryRead.positiveNumber('max_delay');
  // urllib3 settings with no counterpart: read, connect and status retries share `total` here, and the
  // retryable statuses are fixed (429, 5xx).
  retryRead.done(['read', 'connect', 'status', 'status_forcelist', 'allowed_methods', 'other', 'redirect']);
  if (total !== undefined) out.retries = total;
  if (backoffFactor !== undefined) out.baseDelayMs = backoffFactor * 1000;
  if (maxDelay !== undefined) out.maxDelayMs = maxDelay * 1000;
  return out;
}

function compositeTransport(read: ConfigReader, context: TransportFactoryContext): Transport {
  const raw = read.take('transports');
  const key = read.path('transports');
  const continueOnFailure = read.boolean('continue_on_failure') ?? true;
  const continueOnSuccess = read.boolean('continue_on_success') ?? true;
  const sort = read.boolean('sort_transports') ?? false;
  read.done([]);
  let children: { config: ConfigTree; key: string; priority: number }[];
  if (Array.isArray(raw)) {
    children = raw.map((child, index) => childOf(child, `${key}.${index}`));
  } else if (isTree(raw)) {
    // The map form (name -> config) is what OPENLINEAGE__TRANSPORT__TRANSPORTS__<NAME>__... produces.
    children = Object.entries(raw).map(([name, child]) => childOf(child, `${key}.${name}`));
  } else {
    throw new OpenLineageConfigError(
      key,
      `is required: a list of transport configs, or a map of name to config`,
    );
  }
  if (sort) children.sort((a, b) => b.priority - a.priority);
  const transports = children.map((child) => context.create(child.config, child.key));
  return createCompositeTransport({
    transports,
    requireAll: !continueOnFailure,
    strategy: continueOnSuccess ? 'fan-out' : 'failover',
  });
}

function childOf(child: unknown, key: string): { config: ConfigTree; key: string; priority: number } {
  if (!isTree(child))
    throw new OpenLineageConfigError(key, `must be a transport config mapping, got ${describe(child)}`);
  const { name: _name, priority, ...config } = child;
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isInteger(priority))) {
    throw new OpenLineageConfigError(`${key}.priority`, `must be an integer, got ${describe(priority)}`);
  }
  return { config, key, priority: priority ?? 0 };
}

function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `"${value}"`;
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** Reads typed values from one mapping, naming the full key in every error, and rejects unknown keys. */
class ConfigReader {
  readonly #tree: ConfigTree;
  readonly #key: string;
  readonly #seen = new Set<string>(['type']);

  constructor(tree: ConfigTree, key: string) {
    this.#tree = tree;
    this.#key = key;
  }

  path(name: string): string {
    return `${this.#key}.${name}`;
  }

  take(name: string): unknown {
    this.#seen.add(name);
    return this.#tree[name];
  }

  #present(name: string): unknown {
    const value = this.take(name);
    // YAML `key:` with no value is null; treat it as absent, as Python's dataclass defaults do.
    return value === null ? undefined : value;
  }

  string(name: string, required: true): string;
  string(name: string, required?: false): string | undefined;
  string(name: string, required = false): string | undefined {
    const value = this.#present(name);
    if (value === undefined) {
      if (required) throw new OpenLineageConfigError(this.path(name), 'is required');
      return undefined;
    }
    if (typeof value !== 'string')
      throw new OpenLineageConfigError(this.path(name), `must be a string, got ${describe(value)}`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    const value = this.#present(name);
    if (value === undefined) return undefined;
    // Environment variables arrive as strings when they are not JSON (e.g. "True").
    if (value === 'true' || value === 'True') return true;
    if (value === 'false' || value === 'False') return false;
    if (typeof value !== 'boolean')
      throw new OpenLineageConfigError(this.path(name), `must be true or false, got ${describe(value)}`);
    return value;
  }

  #number(name: string, check: (n: number) => boolean, words: string): number | undefined {
    let value = this.#present(name);
    if (value === undefined) return undefined;
    if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value)))
      value = Number(value);
    if (typeof value !== 'number' || !check(value)) {
      throw new OpenLineageConfigError(this.path(name), `must be ${words}, got ${describe(value)}`);
    }
    return value;
  }

  positiveNumber(name: string): number | undefined {
    return this.#number(name, (n) => Number.isFinite(n) && n > 0, 'a number greater than 0');
  }

  nonNegativeNumber(name: string): number | undefined {
    return this.#number(name, (n) => Number.isFinite(n) && n >= 0, 'a number of at least 0');
  }

  positiveInteger(name: string): number | undefined {
    return this.#number(name, (n) => Number.isInteger(n) && n > 0, 'a whole number greater than 0');
  }

  nonNegativeInteger(name: string): number | undefined {
    return this.#number(name, (n) => Number.isInteger(n) && n >= 0, 'a whole number of at least 0');
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.#present(name);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      throw new OpenLineageConfigError(
        this.path(name),
        `must be one of ${allowed.join(', ')}, got ${describe(value)}`,
      );
    }
    return value as T;
  }

  tree(name: string): ConfigTree | undefined {
    const value = this.#present(name);
    if (value === undefined) return undefined;
    if (!isTree(value))
      throw new OpenLineageConfigError(this.path(name), `must be a mapping, got ${describe(value)}`);
    return value;
  }

  stringMap(name: string): Record<string, string> | undefined {
    const tree = this.tree(name);
    if (tree === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(tree)) {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw new OpenLineageConfigError(
          `${this.path(name)}.${key}`,
          `must be a string, got ${describe(value)}`,
        );
      }
      out[key] = String(value);
    }
    return out;
  }

  /** Rejects keys not read; `tolerated` keys are accepted (with a warning when `onWarning` is given). */
  done(tolerated: readonly string[], onWarning?: (message: string) => void): void {
    for (const name of Object.keys(this.#tree)) {
      if (this.#seen.has(name)) continue;
      if (tolerated.includes(name)) {
        onWarning?.(
          `OpenLineage configuration: ${this.path(name)} is not supported by the TypeScript client and is ignored`,
        );
        continue;
      }
      const known = [...this.#seen].filter((key) => key !== 'type');
      throw new OpenLineageConfigError(
        this.path(name),
        `unknown key for transport type "${typeof this.#tree.type === 'string' ? this.#tree.type : ''}"${known.length > 0 ? `; known keys: ${known.join(', ')}` : ''}`,
      );
    }
  }
}
