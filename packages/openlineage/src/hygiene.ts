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
}

/** Options of {@link createFacetHygiene}: what is removed or changed in facets before an event is sent. */
export interface FacetHygieneOptions {
  /**
   * Longest `sql.query` (job facet `sql`) kept; longer queries are cut to this many characters.
   * `Infinity` keeps them whole.
   * @default 4000
   */
  readonly maxSqlLength?: number;
  /**
   * Largest facet, in bytes of its JSON; a larger facet is removed (and counted) rather than sent.
   * @default 1048576 (1 MiB)
   */
  readonly maxFacetBytes?: number;
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
   * Rules applied to every string value inside facets, after the built-in one that hides the password of
   * URLs such as `postgres://user:secret@host`.
   * @default []
   */
  readonly redact?: readonly RedactionRule[];
}

/** What hygiene did to one event. */
export interface HygieneReport {
  /** Facets removed, as `<container>.<key>` (disabled or too large). */
  readonly removedFacets: readonly string[];
  /** Number of strings changed by redaction. */
  readonly redacted: number;
  /** Number of SQL queries cut. */
  readonly truncated: number;
}

/** Applies the configured hygiene to an event; returns a new event and leaves the input untouched. */
export type FacetHygiene = (event: OpenLineageEvent) => { event: OpenLineageEvent; report: HygieneReport };

const DEFAULT_SENSITIVE =
  /pass(word|wd)?$|secret|token|api[-_]?key|credential|private[-_]?key|authorization/i;
// `scheme://user:password@host`: keep the user, hide the password.
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):([^@/\s]+)@/gi;
const MASK = '***';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type FacetMap = Record<string, Json>;

/**
 * Makes the hygiene step the client runs before sending: facet deny-list, redaction, SQL truncation, size
 * limit, in that order.
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
  const disabled = new Set(options.disabledFacets ?? []);
  const given = options.sensitiveNames === undefined ? DEFAULT_SENSITIVE : options.sensitiveNames;
  // A `g` or `y` flag would make `test()` remember its last position and skip matches.
  const sensitive = given === null ? null : new RegExp(given.source, given.flags.replace(/[gy]/g, ''));
  const rules = options.redact ?? [];

  return (input) => {
    // A JSON copy: the caller's object stays as it was, and non-JSON values (undefined, functions) vanish
    // exactly as they would on the wire.
    const event = JSON.parse(JSON.stringify(input)) as OpenLineageEvent & Record<string, Json>;
    const removedFacets: string[] = [];
    let redacted = 0;
    let truncated = 0;

    const scrubString = (value: string): string => {
      let out = value.replace(URL_CREDENTIALS, `$1:${MASK}@`);
      for (const rule of rules) {
        out =
          typeof rule.pattern === 'string'
            ? out.split(rule.pattern).join(rule.replacement ?? MASK)
            : out.replace(rule.pattern, rule.replacement ?? MASK);
      }
      if (out !== value) redacted++;
      return out;
    };

    const scrub = (value: Json, name: string | undefined): Json => {
      if (typeof value === 'string') {
        if (sensitive !== null && name !== undefined && sensitive.test(name) && value !== MASK) {
          redacted++;
          return MASK;
        }
        return scrubString(value);
      }
      if (Array.isArray(value)) return value.map((item) => scrub(item, undefined));
      if (value === null || typeof value !== 'object') return value;
      const pairName =
        typeof value.name === 'string' ? value.name : typeof value.key === 'string' ? value.key : undefined;
      const hidePairValue =
        sensitive !== null && pairName !== undefined && 'value' in value && sensitive.test(pairName);
      const out: Record<string, Json> = {};
      for (const [key, child] of Object.entries(value)) {
        // Base fields identify the facet's schema and producer; they are never redacted.
        if (key === '_producer' || key === '_schemaURL') out[key] = child;
        else if (key === 'value' && hidePairValue && child !== MASK) {
          redacted++;
          out[key] = MASK;
        } else out[key] = scrub(child, key);
      }
      return out;
    };

    const clean = (container: string, facets: FacetMap | undefined): FacetMap | undefined => {
      if (facets === undefined || facets === null || typeof facets !== 'object') return facets;
      const out: FacetMap = {};
      for (const [key, facet] of Object.entries(facets)) {
        if (disabled.has(key)) {
          removedFacets.push(`${container}.${key}`);
          continue;
        }
        let cleaned = scrub(facet, undefined);
        if (container === 'job' && key === 'sql' && isObject(cleaned) && typeof cleaned.query === 'string') {
          if (cleaned.query.length > maxSqlLength) {
            cleaned = { ...cleaned, query: cleaned.query.slice(0, maxSqlLength) };
            truncated++;
          }
        }
        if (Buffer.byteLength(JSON.stringify(cleaned)) > maxFacetBytes) {
          removedFacets.push(`${container}.${key}`);
          continue;
        }
        out[key] = cleaned;
      }
      return out;
    };

    const each = (holder: unknown, field: string, container: string): void => {
      if (!isObject(holder)) return;
      const facets = holder[field];
      if (isObject(facets)) holder[field] = clean(container, facets)!;
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
    return { event, report: { removedFacets, redacted, truncated } };
  };
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
