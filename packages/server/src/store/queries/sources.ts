import type { Queryable } from '../db.js';

/** A source (where datasets live), from the dataSource facet; "default" when a dataset names none. */
export interface SourceRecord {
  readonly name: string;
  readonly type: string;
  readonly connectionUrl: string;
  readonly description: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const SELECT = `SELECT name, type, connection_url AS "connectionUrl", description,
                       created_at AS "createdAt", updated_at AS "updatedAt"
                FROM sources`;

/** Sources ordered by name. */
export function listSources(db: Queryable, limit: number, offset: number): Promise<SourceRecord[]> {
  return db.query<SourceRecord>(`${SELECT} ORDER BY name LIMIT $1 OFFSET $2`, [limit, offset]);
}

/** The source called `name`, if any. */
export async function findSource(db: Queryable, name: string): Promise<SourceRecord | undefined> {
  const [row] = await db.query<SourceRecord>(`${SELECT} WHERE name = $1`, [name]);
  return row;
}
