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

/** A source as Marquez's legacy `PUT /api/v1/sources/{name}` declares it, with the id the writer gave it. */
export interface SourceDeclaration {
  readonly id: number;
  readonly name: string;
  readonly type: string;
  readonly connectionUrl: string;
  readonly description: string | null;
  readonly at: Date;
}

/**
 * Creates the source or replaces its type, connection URL and description (its id and creation time stay).
 * Only the writer calls this, in the transaction of an edit (store/edits.ts, IngestPipeline.declareSource).
 */
export async function upsertSource(db: Queryable, source: SourceDeclaration): Promise<SourceRecord> {
  const [row] = await db.query<SourceRecord>(
    `INSERT INTO sources (id, name, type, connection_url, description, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (name) DO UPDATE SET type = EXCLUDED.type, connection_url = EXCLUDED.connection_url,
       description = EXCLUDED.description, updated_at = EXCLUDED.updated_at
     RETURNING name, type, connection_url AS "connectionUrl", description,
               created_at AS "createdAt", updated_at AS "updatedAt"`,
    [source.id, source.name, source.type, source.connectionUrl, source.description, source.at],
  );
  return row!;
}
