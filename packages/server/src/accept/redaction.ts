/**
 * Limits and redaction at ingest (README, "Limits and redaction"): what the server changes in an event before it
 * is hashed and stored, so that the stored text, the facet tables and every answer hold the redacted form. The
 * rule engine is the TypeScript client's hygiene (`@headwater/openlineage`), so a rule means the same on both
 * sides; this module reads the server's settings and the redaction config file into it.
 */
import path from 'node:path';
import {
  createFacetHygiene,
  OpenLineageConfigError,
  parseHygieneRules,
  type FacetHygiene,
  type HygieneRule,
} from '@headwater/openlineage';
import { readConfigFile, type ConfigReader } from '../core/config-reader.js';
import { HeadwaterError } from '../core/errors.js';
import { DEFAULT_EVENT_LIMITS, type EventLimits } from './limits.js';

/** What the server does to events at ingest beyond checking them. */
export interface RedactionConfig {
  /** Largest facet, in bytes of its JSON. @default 1 MiB */
  readonly maxFacetBytes: number;
  /**
   * A facet over `maxFacetBytes`: `'reject'` refuses the event (422, alone in a batch); `'truncate'` stores it
   * with that facet's longest strings cut and marked (or only its base fields, when that is not enough).
   * @default 'reject'
   */
  readonly oversizedFacets: 'reject' | 'truncate';
  /** Longest `sql.query` stored; longer ones are cut, ending with `…[truncated]`. @default undefined (whole) */
  readonly maxSqlLength: number | undefined;
  /** The redaction config file the rules came from (`--redaction-config`). */
  readonly file: string | undefined;
  /** Its named rules, in order. */
  readonly rules: readonly HygieneRule[];
}

/** The `headwater serve` flags of this module, for the CLI's parser. */
export const redactionFlags = {
  'max-facet-bytes': { type: 'string' },
  'oversized-facets': { type: 'string' },
  'max-sql-length': { type: 'string' },
  'redaction-config': { type: 'string' },
} as const;

/** The `_producer` of the `headwater_redaction` facets the server writes. */
export const SERVER_PRODUCER = 'https://github.com/headwater/headwater/tree/v0.1.0/packages/server';

/** Resolves the settings (flags, then HEADWATER_* variables, then defaults) and reads the rules file. */
export function resolveRedactionConfig({ pick, integer }: ConfigReader): RedactionConfig {
  const mode = pick('oversized-facets', 'HEADWATER_OVERSIZED_FACETS');
  const oversizedFacets = mode.value ?? 'reject';
  if (oversizedFacets !== 'reject' && oversizedFacets !== 'truncate')
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `${mode.source} must be reject or truncate; got ${JSON.stringify(oversizedFacets)}.`,
    );
  const sql = integer('max-sql-length', 'HEADWATER_MAX_SQL_LENGTH', 0, 0, 100 * 1024 * 1024);
  const setting = pick('redaction-config', 'HEADWATER_REDACTION_CONFIG');
  const file = setting.value === undefined ? undefined : path.resolve(setting.value);
  return Object.freeze({
    maxFacetBytes: integer(
      'max-facet-bytes',
      'HEADWATER_MAX_FACET_BYTES',
      DEFAULT_EVENT_LIMITS.maxFacetBytes,
      1024,
      1024 ** 3,
    ),
    oversizedFacets,
    maxSqlLength: sql === 0 ? undefined : sql,
    file,
    rules: Object.freeze(file === undefined ? [] : loadRedactionRules(file, setting.source)),
  });
}

/**
 * The rules of a redaction config file: YAML or JSON, `rules:` a list (see `parseHygieneRules` in the client
 * package for the rule types).
 * @throws HeadwaterError INVALID_CONFIG naming the file and the rule.
 */
export function loadRedactionRules(file: string, source = '--redaction-config'): HygieneRule[] {
  const tree = readConfigFile(file, `${source}: the redaction config`);
  const rules =
    typeof tree === 'object' && tree !== null ? (tree as Record<string, unknown>).rules : undefined;
  if (!Array.isArray(rules))
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `${file} must be a mapping with a list of rules, e.g. rules: [{ name: emails, type: mask, builtin: email }].`,
    );
  try {
    return parseHygieneRules(rules, `${file}: rules`);
  } catch (error) {
    if (error instanceof OpenLineageConfigError)
      throw new HeadwaterError('INVALID_CONFIG', error.message.replace(/^OpenLineage configuration: /, ''), {
        cause: error,
      });
    throw error;
  }
}

/** What the front door applies to every event: the limits it checks, and the hygiene it runs, if any. */
export interface IngestPolicy {
  readonly limits: EventLimits;
  /** Undefined when nothing is configured to change events (they are then stored exactly as sent). */
  readonly hygiene: FacetHygiene | undefined;
}

/** The default policy: the default limits, no changes. */
export const DEFAULT_INGEST_POLICY: IngestPolicy = Object.freeze({
  limits: DEFAULT_EVENT_LIMITS,
  hygiene: undefined,
});

/** The policy of a configuration. */
export function ingestPolicy(config: RedactionConfig | undefined): IngestPolicy {
  if (config === undefined) return DEFAULT_INGEST_POLICY;
  const truncate = config.oversizedFacets === 'truncate';
  // In truncate mode the limit check leaves facet size to the hygiene, which cuts instead of refusing.
  const limits = { ...DEFAULT_EVENT_LIMITS, maxFacetBytes: truncate ? Infinity : config.maxFacetBytes };
  const changes = truncate || config.maxSqlLength !== undefined || config.rules.length > 0;
  return Object.freeze({
    limits,
    hygiene: changes
      ? createFacetHygiene({
          // Only what is configured: none of the client's defaults (sensitive names, URL passwords).
          sensitiveNames: null,
          urlCredentials: false,
          maxSqlLength: config.maxSqlLength ?? Infinity,
          maxFacetBytes: truncate ? config.maxFacetBytes : Infinity,
          oversizedFacets: 'truncate',
          rules: config.rules,
          recordFacet: { producer: SERVER_PRODUCER },
        })
      : undefined,
  });
}
