import type { Queryable } from './db.js';

/** A dataset's current schema fields and tags, for lineage nodes. */
export interface DatasetNodeExtras {
  readonly fields: unknown[];
  readonly tags: string[];
  readonly fieldTags: Map<string, string[]>;
}

/** Loads fields (of the current version) and tags of many datasets in two queries. */
export async function datasetNodeExtras(
  db: Queryable,
  datasets: readonly { id: number; currentVersionId: number | null }[],
): Promise<Map<number, DatasetNodeExtras>> {
  const result = new Map<number, DatasetNodeExtras>();
  if (datasets.length === 0) return result;
  for (const dataset of datasets) result.set(dataset.id, { fields: [], tags: [], fieldTags: new Map() });
  const versionIds = datasets.flatMap((dataset) =>
    dataset.currentVersionId === null ? [] : [dataset.currentVersionId],
  );
  const ids = datasets.map((dataset) => dataset.id);
  const [versions, tags, fieldTags] = await Promise.all([
    versionIds.length === 0
      ? []
      : db.query<{ dataset_id: number; fields: unknown[] }>(
          'SELECT dataset_id, fields FROM dataset_versions WHERE id = ANY($1::bigint[])',
          [versionIds],
        ),
    db.query<{ dataset_id: number; tag: string }>(
      'SELECT dataset_id, tag FROM dataset_tags WHERE dataset_id = ANY($1::int[]) ORDER BY tag',
      [ids],
    ),
    db.query<{ dataset_id: number; field: string; tag: string }>(
      'SELECT dataset_id, field, tag FROM dataset_field_tags WHERE dataset_id = ANY($1::int[]) ORDER BY tag',
      [ids],
    ),
  ]);
  for (const row of versions) {
    const entry = result.get(row.dataset_id);
    if (entry) (entry as { fields: unknown[] }).fields = Array.isArray(row.fields) ? row.fields : [];
  }
  for (const row of tags) result.get(row.dataset_id)?.tags.push(row.tag);
  for (const row of fieldTags) {
    const map = result.get(row.dataset_id)?.fieldTags;
    if (map) map.set(row.field, [...(map.get(row.field) ?? []), row.tag]);
  }
  return result;
}

/** The latest run of each job (by start, then creation), as raw rows. */
export async function latestRunIds(db: Queryable, jobIds: readonly number[]): Promise<Map<number, string>> {
  if (jobIds.length === 0) return new Map();
  const rows = await db.query<{ job_id: number; uuid: string }>(
    `SELECT j.id AS job_id, r.uuid::text AS uuid
     FROM unnest($1::int[]) AS j(id)
     CROSS JOIN LATERAL (
       SELECT uuid FROM runs WHERE job_id = j.id
       ORDER BY started_at DESC NULLS LAST, created_at DESC LIMIT 1
     ) r`,
    [jobIds],
  );
  return new Map(rows.map((row) => [row.job_id, row.uuid]));
}
