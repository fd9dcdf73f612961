import type { Queryable } from '../db.js';
import { latestAssertions, type AssertionRecord } from './analysis.js';

/** Facets by name, as the API returns them. */
export type Facets = Record<string, unknown>;

/** The facet history tables and the column naming their entity. */
const FACET_TABLES = {
  dataset: { table: 'dataset_facets', column: 'dataset_id', type: 'int' },
  job: { table: 'job_facets', column: 'job_id', type: 'int' },
  run: { table: 'run_facets', column: 'run_uuid', type: 'uuid' },
} as const;

/** Whose facets: datasets and jobs are keyed by id, runs by uuid. */
export type FacetOwner = keyof typeof FACET_TABLES;

/** The value of one facet of an owner. */
export interface FacetRow {
  owner: string | number;
  name: string;
  facet: unknown;
}

/**
 * Folds facet rows (exactly one per owner and name: its latest value) into a merged view per owner. A facet whose latest
 * value carries `"_deleted": true` was removed by its producer (OpenLineage spec), so the name is dropped
 * rather than falling back to an older value.
 */
export function mergeFacetRows<K extends string | number>(rows: readonly FacetRow[]): Map<K, Facets> {
  const merged = new Map<K, Facets>();
  for (const row of rows) {
    const owner = row.owner as K;
    let facets = merged.get(owner);
    if (!facets) merged.set(owner, (facets = {}));
    const { facet } = row;
    if (typeof facet === 'object' && facet !== null && (facet as Record<string, unknown>)._deleted === true) {
      continue;
    }
    facets[row.name] = facet;
  }
  return merged;
}

/**
 * The latest merged facets of many datasets, jobs or runs in one query: per owner and facet name, the value
 * with the newest eventTime. Owners without facets are absent from the map. `names`: only these facets.
 */
export async function latestFacets<K extends string | number>(
  db: Queryable,
  owner: FacetOwner,
  ids: readonly K[],
  names?: readonly string[],
): Promise<Map<K, Facets>> {
  if (ids.length === 0) return new Map();
  const { table, column, type } = FACET_TABLES[owner];
  const rows = await db.query<FacetRow>(
    `SELECT DISTINCT ON (${column}, name) ${column}${type === 'uuid' ? '::text' : ''} AS owner, name, facet
     FROM ${table} WHERE ${column} = ANY($1::${type}[]) AND ($2::text[] IS NULL OR name = ANY($2::text[]))
     ORDER BY ${column}, name, event_time DESC, hash DESC`,
    [ids, names ?? null],
  );
  return mergeFacetRows<K>(rows);
}

/**
 * The facets of many datasets as Marquez shows them: their dataset facets (`dataset`: the latest values, or
 * those of time `at`), over the input facets runs reported for them (such as `dataQualityAssertions`, where the
 * spec and the Python client put them), per name the one with the newest eventTime up to `at`. A name both
 * give is the dataset facet's. `dataQualityAssertions` lists the dataset's quality (the latest result of each
 * assertion from any run, see {@link latestAssertions}), which is what the Marquez UI's Quality column reads.
 */
export async function withInputFacets(
  db: Queryable,
  dataset: ReadonlyMap<number, Facets>,
  ids: readonly number[],
  at?: Date,
): Promise<Map<number, Facets>> {
  if (ids.length === 0) return new Map();
  // The history rows (one per event that read the dataset) rather than run_io, whose facets per run are merged
  // in arrival order: the answer must not depend on the order events arrived in, now or as of a time.
  const rows = await db.query<FacetRow>(
    `SELECT DISTINCT ON (s.dataset_id, f.key) s.dataset_id AS owner, f.key AS name, f.value AS facet
     FROM dataset_sightings s CROSS JOIN LATERAL jsonb_each(s.io_facets) f
     WHERE s.kind = 0 AND s.io_facets <> '{}'::jsonb AND s.dataset_id = ANY($1::int[])
       AND ($2::timestamptz IS NULL OR s.event_time <= $2::timestamptz)
     ORDER BY s.dataset_id, f.key, s.event_time DESC, s.seq DESC`,
    [ids, at?.toISOString() ?? null],
  );
  const inputs = mergeFacetRows<number>(rows);
  const quality = new Map<number, AssertionRecord[]>();
  for (const a of await latestAssertions(db, ids, at ?? null)) {
    quality.set(a.datasetId, [...(quality.get(a.datasetId) ?? []), a]);
  }
  const merged = new Map<number, Facets>();
  for (const id of ids) {
    const facets = { ...inputs.get(id), ...dataset.get(id) };
    const assertions = quality.get(id);
    if (assertions) facets.dataQualityAssertions = qualityFacet(facets.dataQualityAssertions, assertions);
    if (Object.keys(facets).length > 0) merged.set(id, facets);
  }
  return merged;
}

/** A `dataQualityAssertions` facet listing `assertions`, with the producer and schema of the latest one sent. */
function qualityFacet(sent: unknown, assertions: readonly AssertionRecord[]): Facets {
  const { _producer, _schemaURL } = (typeof sent === 'object' && sent !== null ? sent : {}) as Facets;
  return {
    _producer: _producer ?? 'headwater',
    _schemaURL:
      _schemaURL ?? 'https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json',
    assertions: assertions.map((a) => ({
      assertion: a.assertion,
      success: a.success,
      ...(a.column ? { column: a.column } : {}),
      ...(a.name === null ? {} : { name: a.name }),
      ...(a.description === null ? {} : { description: a.description }),
      ...(a.severity === null ? {} : { severity: a.severity }),
      ...(a.expected === null ? {} : { expected: a.expected }),
      ...(a.actual === null ? {} : { actual: a.actual }),
    })),
  };
}

/** The facets of many datasets now: {@link withInputFacets} over their latest dataset facets. */
export async function datasetFacets(db: Queryable, ids: readonly number[]): Promise<Map<number, Facets>> {
  return withInputFacets(db, await latestFacets<number>(db, 'dataset', ids), ids);
}
