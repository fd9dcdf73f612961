import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configReader, type ConfigFlags } from './config-reader.js';
import { HeadwaterError } from './errors.js';
import { resolveKafkaConfig, type KafkaIngestConfig } from './streams/kafka-config.js';
import { resolveSecurityConfig, type SecurityConfig } from './security/config.js';

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
  /** Reject what the official schemas reject, instead of Marquez-like leniency. @default false */
  readonly strict: boolean;
  /** Largest request body accepted. @default 10 MiB */
  readonly maxBodyBytes: number;
  /** Most events in one batch request. @default 10000 */
  readonly maxBatchEvents: number;
  /** Folder of the published OpenLineage JSON Schemas, laid out by `$id` (needed by strict mode). */
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
  /** Authentication, authorisation, request checks and rate limits (see src/security/config.ts). */
  readonly security: SecurityConfig;
}

const LOG_LEVELS = new Set(['silent', 'error', 'warn', 'info', 'debug']);

/**
 * Resolves the configuration: flags, then HEADWATER_* environment variables (DATABASE_URL for the database),
 * then defaults. Throws a HeadwaterError naming the flag or variable for any bad value.
 */
export function resolveConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const reader = configReader(flags, env);
  const { pick, integer, duration } = reader;
  const strictValue = flags.strict === true ? 'true' : pick('strict', 'HEADWATER_STRICT').value;
  if (strictValue !== undefined && !['true', 'false', '1', '0'].includes(strictValue)) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `HEADWATER_STRICT must be true or false; got ${JSON.stringify(strictValue)}.`,
    );
  }
  const strict = strictValue === 'true' || strictValue === '1';
  const logLevel = pick('log-level', 'HEADWATER_LOG_LEVEL').value ?? 'warn';
  if (!LOG_LEVELS.has(logLevel)) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `--log-level must be one of ${[...LOG_LEVELS].join(', ')}; got ${logLevel}.`,
    );
  }
  const specDirFlag = pick('spec-dir', 'HEADWATER_SPEC_DIR').value;
  const specDir = specDirFlag ? path.resolve(specDirFlag) : findBundledSpecDir();
  if (strict && (specDir === undefined || !existsSync(specDir))) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      'Strict mode needs the published OpenLineage JSON Schemas: pass --spec-dir (or HEADWATER_SPEC_DIR) pointing ' +
        'at a folder laid out like https://openlineage.io/spec/ (e.g. <dir>/2-0-2/OpenLineage.json).',
    );
  }
  const databaseUrl = pick('database-url', 'DATABASE_URL').value;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new HeadwaterError('INVALID_CONFIG', '--database-url must be a postgres:// or postgresql:// URL.');
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
    security: resolveSecurityConfig(flags, reader),
  });
}

/**
 * The OpenLineage schemas of this repository's checkout (../shared/conformance/spec-published beside the repo).
 * An installed package has none; strict mode then needs --spec-dir.
 */
function findBundledSpecDir(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, '..', 'shared', 'conformance', 'spec-published');
    if (existsSync(path.join(dir, 'packages')) && existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}
