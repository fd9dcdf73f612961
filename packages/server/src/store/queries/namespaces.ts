import type { Queryable } from '../db.js';

/** A namespace as the read API needs it. */
export interface NamespaceRecord {
  readonly id: number;
  readonly name: string;
  readonly ownerName: string;
  readonly description: string | null;
  readonly isHidden: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const SELECT = `SELECT id, name, owner_name AS "ownerName", description, is_hidden AS "isHidden",
                       created_at AS "createdAt", updated_at AS "updatedAt"
                FROM namespaces`;

/** Namespaces ordered by name, hidden ones included (the Marquez UI filters on isHidden). */
export function listNamespaces(db: Queryable, limit: number, offset: number): Promise<NamespaceRecord[]> {
  return db.query<NamespaceRecord>(`${SELECT} ORDER BY name LIMIT $1 OFFSET $2`, [limit, offset]);
}

/** The namespace called `name`, if any. */
export async function findNamespace(db: Queryable, name: string): Promise<NamespaceRecord | undefined> {
  const [row] = await db.query<NamespaceRecord>(`${SELECT} WHERE name = $1`, [name]);
  return row;
}

/** What PUT /namespaces/{name} writes. */
export interface NamespaceWrite {
  /** The id to use if the namespace is new (ids are assigned by the writer). */
  readonly id: number;
  readonly name: string;
  readonly ownerName: string;
  /** Left unchanged when undefined. */
  readonly description: string | undefined;
  readonly now: Date;
}

/**
 * Creates or updates a namespace's owner and description, and un-hides it (an explicit PUT brings a
 * soft-deleted namespace back, as in Marquez). Returns the stored row.
 */
export async function upsertNamespace(db: Queryable, write: NamespaceWrite): Promise<NamespaceRecord> {
  const [row] = await db.query<NamespaceRecord>(
    `INSERT INTO namespaces AS t (id, name, owner_name, description, is_hidden, created_at, updated_at)
     VALUES ($1, $2, $3, $4, false, $5::timestamptz, $5::timestamptz)
     ON CONFLICT (name) DO UPDATE SET owner_name = EXCLUDED.owner_name,
       description = CASE WHEN $6 THEN EXCLUDED.description ELSE t.description END,
       is_hidden = false, updated_at = GREATEST(t.updated_at, EXCLUDED.updated_at)
     RETURNING id, name, owner_name AS "ownerName", description, is_hidden AS "isHidden",
               created_at AS "createdAt", updated_at AS "updatedAt"`,
    [
      write.id,
      write.name,
      write.ownerName,
      write.description ?? null,
      write.now.toISOString(),
      write.description !== undefined,
    ],
  );
  return row!;
}

/**
 * Soft-deletes a namespace with all its datasets and jobs; returns the datasets and jobs it hid. Three statements:
 * run it in a transaction (the writer's, see store/edits.ts).
 */
export async function hideNamespace(
  tx: Queryable,
  namespaceId: number,
): Promise<{ datasetIds: number[]; jobIds: number[] }> {
  await tx.query('UPDATE namespaces SET is_hidden = true WHERE id = $1', [namespaceId]);
  const datasets = await tx.query<{ id: number }>(
    'UPDATE datasets SET is_hidden = true WHERE namespace_id = $1 AND NOT is_hidden RETURNING id',
    [namespaceId],
  );
  const jobs = await tx.query<{ id: number }>(
    'UPDATE jobs SET is_hidden = true WHERE namespace_id = $1 AND NOT is_hidden RETURNING id',
    [namespaceId],
  );
  return { datasetIds: datasets.map((row) => row.id), jobIds: jobs.map((row) => row.id) };
}
