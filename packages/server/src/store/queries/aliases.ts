import type { Queryable } from '../db.js';

/** One declared alias: dataset `datasetId` is dataset `targetId`. */
export interface AliasRow {
  readonly datasetId: number;
  readonly targetId: number;
}

/** An alias with when it was declared. */
export interface AliasRecord extends AliasRow {
  readonly createdAt: Date;
}

const COLUMNS = 'dataset_id AS "datasetId", target_id AS "targetId", created_at AS "createdAt"';

/** Every alias in the store, by alias id. */
export function readAliases(db: Queryable): Promise<AliasRecord[]> {
  return db.query<AliasRecord>(`SELECT ${COLUMNS} FROM dataset_aliases ORDER BY dataset_id`);
}

/** The aliases that `ids` take part in, as alias or as target. */
export function aliasesTouching(db: Queryable, ids: readonly number[]): Promise<AliasRecord[]> {
  return db.query<AliasRecord>(
    `SELECT ${COLUMNS} FROM dataset_aliases WHERE dataset_id = ANY($1::int[]) OR target_id = ANY($1::int[])
     ORDER BY dataset_id`,
    [ids],
  );
}

/** Records that dataset `datasetId` is `targetId`, declared by `actor` (the caller checks chains and cycles). */
export async function insertAlias(
  db: Queryable,
  datasetId: number,
  targetId: number,
  actor: string,
): Promise<AliasRecord> {
  const [row] = await db.query<AliasRecord>(
    `INSERT INTO dataset_aliases (dataset_id, target_id, created_by) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [datasetId, targetId, actor],
  );
  return row!;
}

/** Removes the alias `datasetId` is `targetId`; returns it, or undefined when there was no such alias. */
export async function deleteAlias(
  db: Queryable,
  datasetId: number,
  targetId: number,
): Promise<AliasRecord | undefined> {
  const [row] = await db.query<AliasRecord>(
    `DELETE FROM dataset_aliases WHERE dataset_id = $1 AND target_id = $2 RETURNING ${COLUMNS}`,
    [datasetId, targetId],
  );
  return row;
}
