import type { Queryable } from '../db.js';

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
 * with the newest eventTime. Owners without facets are absent from the map.
 */
export async function latestFacets<K extends string | number>(
  db: Queryable,
  owner: FacetOwner,
  ids: readonly K[],
): Promise<Map<K, Facets>> {
  if (ids.length === 0) return new Map();
  const { table, column, type } = FACET_TABLES[owner];
  const rows = await db.query<FacetRow>(
    `SELECT DISTINCT ON (${column}, name) ${column}${type === 'uuid' ? '::text' : ''} AS owner, name, facet
     FROM ${table} WHERE ${column} = ANY($1::${type}[])
     ORDER BY ${column}, name, event_time DESC, hash DESC`,
    [ids],
  );
  return mergeFacetRows<K>(rows);
}
