import type { DatasetType } from '../../model/entity-types.js';
import type { Queryable } from '../db.js';
import { mergeFacetRows, type FacetRow, type Facets } from './facets.js';

/** A dataset as the read API needs it: the row, its source, its current version's fields and its tags. */
export interface DatasetRecord {
  readonly id: number;
  readonly namespace: string;
  readonly name: string;
  readonly type: DatasetType;
  readonly sourceName: string;
  readonly description: string | null;
  readonly lifecycleState: string | null;
  readonly lastModifiedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly isHidden: boolean;
  /** The current version's uuid. */
  readonly currentVersion: string | null;
  /** The current version's schema fields, as the schema facet gave them. */
  readonly fields: unknown[] | null;
  readonly tags: string[];
  /** Field name -> its tags. */
  readonly fieldTags: Record<string, string[]> | null;
}

const SELECT = `
  SELECT d.id, n.name AS namespace, d.name, d.type, s.name AS "sourceName", d.description,
         d.lifecycle_state AS "lifecycleState", d.last_modified_at AS "lastModifiedAt",
         d.created_at AS "createdAt", d.updated_at AS "updatedAt", d.is_hidden AS "isHidden",
         v.version::text AS "currentVersion", v.fields,
         ARRAY(SELECT t.tag FROM dataset_tags t WHERE t.dataset_id = d.id ORDER BY t.tag) AS tags,
         (SELECT json_object_agg(ft.field, ft.tags) FROM (
            SELECT field, array_agg(tag ORDER BY tag) AS tags FROM dataset_field_tags
            WHERE dataset_id = d.id GROUP BY field) ft) AS "fieldTags"
  FROM datasets d
  JOIN namespaces n ON n.id = d.namespace_id
  JOIN sources s ON s.id = d.source_id
  LEFT JOIN dataset_versions v ON v.id = d.current_version_id`;

/** Datasets by id (hidden ones included), in no particular order. */
export function findDatasets(db: Queryable, ids: readonly number[]): Promise<DatasetRecord[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.query<DatasetRecord>(`${SELECT} WHERE d.id = ANY($1::int[])`, [ids]);
}

/** The visible datasets of a namespace, ordered by name. */
export function listDatasets(
  db: Queryable,
  namespaceId: number,
  limit: number,
  offset: number,
): Promise<DatasetRecord[]> {
  return db.query<DatasetRecord>(
    `${SELECT} WHERE d.namespace_id = $1 AND NOT d.is_hidden ORDER BY d.name LIMIT $2 OFFSET $3`,
    [namespaceId, limit, offset],
  );
}

/** How many visible datasets a namespace has. */
export async function countDatasets(db: Queryable, namespaceId: number): Promise<number> {
  const [row] = await db.query<{ count: number }>(
    'SELECT count(*) AS count FROM datasets WHERE namespace_id = $1 AND NOT is_hidden',
    [namespaceId],
  );
  return row?.count ?? 0;
}

/** One input field of a column-lineage edge into a dataset. */
export interface ColumnLineageRecord {
  readonly outputField: string;
  readonly namespace: string;
  readonly dataset: string;
  readonly field: string;
  /** '' when the producer gave none. */
  readonly transformationType: string;
  readonly transformationSubtype: string;
  readonly transformationDescription: string | null;
  /** Whether the transformation masks the input (the spec's `masking`). */
  readonly masking: boolean;
}

/**
 * One level of column lineage into each of `ids` (as of `asOf`: the edges seen by then): for every output field,
 * the input fields it was derived from, ordered by output field, then input namespace, dataset and field.
 */
export async function columnLineageInto(
  db: Queryable,
  ids: readonly number[],
  asOf?: Date,
): Promise<Map<number, ColumnLineageRecord[]>> {
  const result = new Map<number, ColumnLineageRecord[]>();
  if (ids.length === 0) return result;
  const rows = await db.query<ColumnLineageRecord & { id: number }>(
    `SELECT cl.output_dataset_id AS id, cl.output_field AS "outputField", n.name AS namespace, d.name AS dataset,
            cl.input_field AS field, cl.transformation_type AS "transformationType",
            cl.transformation_subtype AS "transformationSubtype",
            cl.transformation_description AS "transformationDescription", cl.masking
     FROM column_lineage cl
     JOIN datasets d ON d.id = cl.input_dataset_id
     JOIN namespaces n ON n.id = d.namespace_id
     WHERE cl.output_dataset_id = ANY($1::int[]) AND ($2::timestamptz IS NULL OR cl.first_seen <= $2)
     ORDER BY cl.output_dataset_id, cl.output_field, n.name, d.name, cl.input_field,
              cl.transformation_type, cl.transformation_subtype`,
    [ids, asOf?.toISOString() ?? null],
  );
  for (const { id, ...row } of rows) {
    let list = result.get(id);
    if (!list) result.set(id, (list = []));
    list.push(row);
  }
  return result;
}

/** A version of a dataset. */
export interface DatasetVersionRecord {
  readonly id: number;
  readonly version: string;
  readonly fields: unknown[];
  readonly lifecycleState: string | null;
  readonly createdAt: Date;
  /** The run that wrote this version first, if a run did. */
  readonly createdByRun: string | null;
  /**
   * When the next version was created (null for the current version): the version's facets are those
   * reported before then.
   */
  readonly validTo: Date | null;
}

const VERSION_SELECT = `
  SELECT id, version, fields, "lifecycleState", "createdAt", "createdByRun", "validTo" FROM (
    SELECT v.id, v.version::text AS version, v.fields, v.lifecycle_state AS "lifecycleState",
           v.created_at AS "createdAt", v.created_by_run::text AS "createdByRun",
           CASE WHEN v.id = d.current_version_id THEN NULL
                ELSE lead(v.created_at) OVER (ORDER BY v.created_at, v.id) END AS "validTo"
    FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id
    WHERE v.dataset_id = $1) versions`;

/** The versions of a dataset, newest first. */
export function listDatasetVersions(
  db: Queryable,
  datasetId: number,
  limit: number,
  offset: number,
): Promise<DatasetVersionRecord[]> {
  return db.query<DatasetVersionRecord>(
    `${VERSION_SELECT} ORDER BY "createdAt" DESC, id DESC LIMIT $2 OFFSET $3`,
    [datasetId, limit, offset],
  );
}

/** How many versions a dataset has. */
export async function countDatasetVersions(db: Queryable, datasetId: number): Promise<number> {
  const [row] = await db.query<{ count: number }>(
    'SELECT count(*) AS count FROM dataset_versions WHERE dataset_id = $1',
    [datasetId],
  );
  return row?.count ?? 0;
}

/** The version `version` (a uuid) of a dataset, if it is one of its versions. */
export async function findDatasetVersion(
  db: Queryable,
  datasetId: number,
  version: string,
): Promise<DatasetVersionRecord | undefined> {
  const [row] = await db.query<DatasetVersionRecord>(`${VERSION_SELECT} WHERE version = $2::text`, [
    datasetId,
    version.toLowerCase(),
  ]);
  return row;
}

/**
 * The facets of each version in one query: the dataset facets reported before the next version was created,
 * merged (for the current version, the latest merged facets).
 */
export async function datasetVersionFacets(
  db: Queryable,
  datasetId: number,
  versions: readonly DatasetVersionRecord[],
): Promise<Map<number, Facets>> {
  if (versions.length === 0) return new Map();
  const rows = await db.query<FacetRow>(
    `SELECT v.id AS owner, f.name, f.facet
     FROM unnest($2::bigint[], $3::timestamptz[]) AS v(id, valid_to)
     CROSS JOIN LATERAL (
       SELECT DISTINCT ON (name) name, facet FROM dataset_facets
       WHERE dataset_id = $1 AND (v.valid_to IS NULL OR event_time < v.valid_to)
       ORDER BY name, event_time DESC, hash DESC) f
     ORDER BY v.id, f.name`,
    [
      datasetId,
      versions.map((version) => version.id),
      versions.map((version) => version.validTo?.toISOString() ?? null),
    ],
  );
  return mergeFacetRows<number>(rows);
}

/** Soft-deletes a dataset. */
export async function hideDataset(db: Queryable, datasetId: number): Promise<void> {
  await db.query('UPDATE datasets SET is_hidden = true WHERE id = $1', [datasetId]);
}

/** Tags a dataset, creating the tag if it does not exist (two statements: run it in a transaction). */
export async function tagDataset(tx: Queryable, datasetId: number, tag: string): Promise<void> {
  await tx.query('INSERT INTO tags (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [tag]);
  await tx.query('INSERT INTO dataset_tags (dataset_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    datasetId,
    tag,
  ]);
}

/** Removes a tag from a dataset (nothing happens if it was not tagged). */
export async function untagDataset(db: Queryable, datasetId: number, tag: string): Promise<void> {
  await db.query('DELETE FROM dataset_tags WHERE dataset_id = $1 AND tag = $2', [datasetId, tag]);
}

/** Tags a field of a dataset, creating the tag if it does not exist (two statements: run it in a transaction). */
export async function tagDatasetField(
  tx: Queryable,
  datasetId: number,
  field: string,
  tag: string,
): Promise<void> {
  await tx.query('INSERT INTO tags (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [tag]);
  await tx.query(
    'INSERT INTO dataset_field_tags (dataset_id, field, tag) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [datasetId, field, tag],
  );
}

/** Removes a tag from a field of a dataset. */
export async function untagDatasetField(
  db: Queryable,
  datasetId: number,
  field: string,
  tag: string,
): Promise<void> {
  await db.query('DELETE FROM dataset_field_tags WHERE dataset_id = $1 AND field = $2 AND tag = $3', [
    datasetId,
    field,
    tag,
  ]);
}

/** The tags of datasets and of their fields; datasets with neither are absent. */
export async function datasetTags(
  db: Queryable,
  ids: readonly number[],
): Promise<Map<number, { tags: string[]; fieldTags: Record<string, string[]> | null }>> {
  const result = new Map<number, { tags: string[]; fieldTags: Record<string, string[]> | null }>();
  if (ids.length === 0) return result;
  const rows = await db.query<{ id: number; field: string | null; tag: string }>(
    `SELECT dataset_id AS id, NULL AS field, tag FROM dataset_tags WHERE dataset_id = ANY($1::int[])
     UNION ALL
     SELECT dataset_id, field, tag FROM dataset_field_tags WHERE dataset_id = ANY($1::int[])
     ORDER BY id, field NULLS FIRST, tag`,
    [ids],
  );
  for (const { id, field, tag } of rows) {
    let entry = result.get(id);
    if (!entry) result.set(id, (entry = { tags: [], fieldTags: null }));
    if (field === null) entry.tags.push(tag);
    else ((entry.fieldTags ??= {})[field] ??= []).push(tag);
  }
  return result;
}
