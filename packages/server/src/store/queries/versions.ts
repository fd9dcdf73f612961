import type { Queryable } from '../db.js';

/** A stored dataset or job version: its id, the id of the dataset or job it is a version of, and its uuid. */
export interface StoredVersionRow {
  readonly id: number;
  readonly owner: number;
  readonly version: string;
}

const VERSION_TABLES = {
  dataset: { table: 'dataset_versions', owner: 'dataset_id' },
  job: { table: 'job_versions', owner: 'job_id' },
} as const;

/** The stored versions of datasets (`kind` 'dataset') or jobs ('job') among the version uuids `versions`. */
export function findVersions(
  db: Queryable,
  kind: keyof typeof VERSION_TABLES,
  versions: readonly string[],
): Promise<StoredVersionRow[]> {
  const { table, owner } = VERSION_TABLES[kind];
  return db.query<StoredVersionRow>(
    `SELECT id, ${owner} AS owner, version::text AS version FROM ${table} WHERE version = ANY($1::uuid[])`,
    [versions],
  );
}
