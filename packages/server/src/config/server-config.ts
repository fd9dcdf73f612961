import { existsSync } from 'node:fs';
import path from 'node:path';
import { configReader, type ConfigFlags } from '../core/config-reader.js';
import { HeadwaterError } from '../core/errors.js';
import { STRICT_LEVELS, type StrictLevel } from '../accept/validate.js';
import { resolveKafkaConfig, type KafkaIngestConfig } from '../streams/kafka-config.js';
import { resolveSecurityConfig, type SecurityConfig } from '../security/config.js';
import { resolveRedactionConfig, type RedactionConfig } from '../accept/redaction.js';

/** The server's configuration, validated once at start and frozen. */
export interface ServerConfig {
  /** @default 5000 */
  readonly port: number;
  /** @default '127.0.0.1' */
  readonly host: string;
  /** Where the embedded store lives when no database URL is given. @default './.headwater' */
  readonly dataDir: string;
  /** A PostgreSQL connection URL; when unset the embedded store in `dataDir` is used. */
  readonly databaseUrl: string | undefined;
  /** The embedded store's engine (see chooseEmbeddedEngine in store/db.ts). @default 'auto' */
  readonly embeddedEngine: 'auto' | 'postgres' | 'pglite';
  /**
   * Reject what the official OpenLineage schemas (bundled) reject, instead of Marquez-like leniency:
   * `'structure'` (structure, required fields, types, enums) or `'formats'` (also date-time, uuid, uri).
   * @default false
   */
  readonly strict: false | StrictLevel;
  /** Largest request body accepted. @default 10 MiB */
  readonly maxBodyBytes: number;
  /** Most events in one batch request. @default 10000 */
  readonly maxBatchEvents: number;
  /** More OpenLineage JSON Schemas for strict mode (e.g. newer facet versions), laid out by `$id`. Optional. */
  readonly specDir: string | undefined;
  /**
   * Where the other replicas of this database reach this server when it is the writer (they forward writes to
   * it). @default the address it listens on
   */
  readonly advertiseUrl: string | undefined;
  /**
   * A RUNNING run with no event for longer than this is flagged `stale` in the run API (its events are not
   * changed): Spark's internal jobs and producers that died send START and nothing more. @default 24 h
   */
  readonly staleRunAfterMs: number;
  /** Log requests and errors to stderr. @default 'warn' */
  readonly logLevel: 'silent' | 'error' | 'warn' | 'info' | 'debug';
  /** Kafka ingest (`--kafka-brokers`, `--kafka-topic`...); off when no brokers are given. */
  readonly kafka: KafkaIngestConfig | undefined;
  /** A sinks-and-routes file (the proxy's format): what is stored is forwarded through those sinks. */
  readonly forwardConfig: string | undefined;
  /**
   * The alerts configuration file (alerts/config.ts: channels, owners, rules): incidents are opened and their
   * owners told. @default undefined (no incidents)
   */
  readonly alertsConfig: string | undefined;
  /** Authentication, authorisation, request checks and rate limits (see src/security/config.ts). */
  readonly security: SecurityConfig;
  /** Facet size limit and mode, SQL truncation and redaction rules at ingest (see src/accept/redaction.ts). */
  readonly redaction: RedactionConfig;
  /**
   * Raw events and history older than this many days are deleted in the background, the present kept (see
   * store/retention.ts). @default undefined (off)
   */
  readonly retentionDays: number | undefined;
  /** How often a retention pass runs (the first one a minute after start, sooner if this is shorter). @default 1 h */
  readonly retentionIntervalMs: number;
}

const LOG_LEVELS = new Set(['silent', 'error', 'warn', 'info', 'debug']);

/**
 * Resolves the configuration: flags, then HEADWATER_* environment variables (DATABASE_URL for the database),
 * then defaults. Throws a HeadwaterError naming the flag or variable for any bad value.
 */
export function resolveConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const reader = configReader(flags, env);
  const { pick, integer, duration } = reader;
  const strict = strictLevel(
    flags.strict === true ? { value: 'true', source: '--strict' } : pick('strict', 'HEADWATER_STRICT'),
  );
  const logLevel = pick('log-level', 'HEADWATER_LOG_LEVEL').value ?? 'warn';
  if (!LOG_LEVELS.has(logLevel)) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `--log-level must be one of ${[...LOG_LEVELS].join(', ')}; got ${logLevel}.`,
    );
  }
  const specDirSetting = pick('spec-dir', 'HEADWATER_SPEC_DIR');
  const specDir = specDirSetting.value === undefined ? undefined : path.resolve(specDirSetting.value);
  if (strict !== false && specDir !== undefined && !existsSync(specDir)) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `${specDirSetting.source} ${specDir} does not exist. It is optional (strict mode uses the bundled OpenLineage ` +
        'schemas); give it only for more schemas, in a folder laid out like https://openlineage.io/spec/ ' +
        '(e.g. <dir>/facets/1-3-0/ParentRunFacet.json).',
    );
  }
  const databaseUrl = pick('database-url', 'DATABASE_URL').value;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new HeadwaterError('INVALID_CONFIG', '--database-url must be a postgres:// or postgresql:// URL.');
  }
  const engine = pick('embedded-engine', 'HEADWATER_EMBEDDED_ENGINE');
  const embeddedEngine = engine.value ?? 'auto';
  if (embeddedEngine !== 'auto' && embeddedEngine !== 'postgres' && embeddedEngine !== 'pglite') {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `${engine.source} must be auto, postgres or pglite; got ${JSON.stringify(embeddedEngine)}.`,
    );
  }
  const advertiseUrl = pick('advertise-url', 'HEADWATER_ADVERTISE_URL').value;
  if (advertiseUrl !== undefined && !/^https?:\/\/[^/]+/.test(advertiseUrl)) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `--advertise-url must be an http:// or https:// URL such as http://10.0.0.5:5000; got ${JSON.stringify(advertiseUrl)}.`,
    );
  }
  return Object.freeze({
    advertiseUrl,
    port: integer('port', 'HEADWATER_PORT', 5000, 0, 65535),
    host: pick('host', 'HEADWATER_HOST').value ?? '127.0.0.1',
    dataDir: path.resolve(pick('data-dir', 'HEADWATER_DATA_DIR').value ?? '.headwater'),
    databaseUrl,
    embeddedEngine,
    strict,
    maxBodyBytes: integer('max-body-bytes', 'HEADWATER_MAX_BODY_BYTES', 10 * 1024 * 1024, 1024, 1024 ** 3),
    maxBatchEvents: integer('max-batch-events', 'HEADWATER_MAX_BATCH_EVENTS', 10_000, 1, 1_000_000),
    specDir,
    staleRunAfterMs: duration('stale-run-after', 'HEADWATER_STALE_RUN_AFTER', 24 * 3_600_000),
    logLevel: logLevel as ServerConfig['logLevel'],
    kafka: resolveKafkaConfig(flags, env),
    forwardConfig: ((file) => (file === undefined ? undefined : path.resolve(file)))(
      pick('forward-config', 'HEADWATER_FORWARD_CONFIG').value,
    ),
    alertsConfig: ((file) => (file === undefined ? undefined : path.resolve(file)))(
      pick('alerts-config', 'HEADWATER_ALERTS_CONFIG').value,
    ),
    security: resolveSecurityConfig(flags, reader),
    redaction: resolveRedactionConfig(reader),
    retentionDays: integer('retention-days', 'HEADWATER_RETENTION_DAYS', 0, 0, 1_000_000) || undefined,
    retentionIntervalMs: duration('retention-interval', 'HEADWATER_RETENTION_INTERVAL', 3_600_000),
  });
}

/**
 * The command line with `--strict` given a value for `parseArgs` (which has no optional values): a bare
 * `--strict` becomes `--strict=structure`, and `--strict formats` becomes `--strict=formats`.
 *
 * @example
 * strictFlagArgs(['--strict', '--port', '5000']); // ['--strict=structure', '--port', '5000']
 */
export function strictFlagArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== '--strict') {
      out.push(args[i]!);
      continue;
    }
    const next = args[i + 1];
    const level = STRICT_LEVELS.find((known) => known === next);
    if (level !== undefined) i++;
    out.push(`--strict=${level ?? 'structure'}`);
  }
  return out;
}

const STRICT_OFF = new Set(['false', '0']);
const STRICT_DEFAULT = new Set(['true', '1']);

/** `--strict [structure|formats]` or HEADWATER_STRICT: `true`/`1` mean `structure`; `false`/`0` lenient. */
function strictLevel(setting: { value: string | undefined; source: string }): false | StrictLevel {
  const { value, source } = setting;
  if (value === undefined || STRICT_OFF.has(value)) return false;
  if (STRICT_DEFAULT.has(value)) return 'structure';
  const level = STRICT_LEVELS.find((known) => known === value);
  if (level !== undefined) return level;
  throw new HeadwaterError(
    'INVALID_CONFIG',
    `${source} must be ${STRICT_LEVELS.join(' or ')} (true or 1 mean structure; false or 0 lenient); ` +
      `got ${JSON.stringify(value)}.`,
  );
}
