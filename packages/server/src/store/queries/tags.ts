import type { Queryable } from '../db.js';

/** A tag that datasets, fields and jobs can carry. */
export interface TagRecord {
  readonly name: string;
  readonly description: string | null;
}

/** Tags ordered by name. */
export function listTags(db: Queryable, limit: number, offset: number): Promise<TagRecord[]> {
  return db.query<TagRecord>('SELECT name, description FROM tags ORDER BY name LIMIT $1 OFFSET $2', [
    limit,
    offset,
  ]);
}

/** Creates a tag or replaces its description; returns it. */
export async function upsertTag(db: Queryable, name: string, description: string | null): Promise<TagRecord> {
  const [row] = await db.query<TagRecord>(
    `INSERT INTO tags (name, description) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, updated_at = now()
     RETURNING name, description`,
    [name, description],
  );
  return row!;
}
