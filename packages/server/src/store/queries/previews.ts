/** The registry of previews (migration 220): which events are a preview's and how its names map onto production's. */
import type { PreviewMapping, PreviewRoute } from '../../model/previews.js';
import type { Queryable } from '../db.js';

/** A preview as registered. */
export interface PreviewRecord extends PreviewRoute {
  /** The production job namespace the preview's jobs stand in for. */
  readonly baseNamespace: string;
  readonly mappings: PreviewMapping[];
  readonly createdAt: Date;
  readonly createdBy: string;
  readonly expiresAt: Date | null;
}

const SELECT = `SELECT name, job_namespace AS "jobNamespace", base_namespace AS "baseNamespace",
  pull_request AS "pullRequest", commit_sha AS "commitSha", mappings, created_at AS "createdAt",
  created_by AS "createdBy", expires_at AS "expiresAt" FROM previews`;

/** Every registered preview, by name. */
export function listPreviews(db: Queryable): Promise<PreviewRecord[]> {
  return db.query<PreviewRecord>(`${SELECT} ORDER BY name`);
}

/** One preview, or undefined. */
export async function findPreview(db: Queryable, name: string): Promise<PreviewRecord | undefined> {
  const [row] = await db.query<PreviewRecord>(`${SELECT} WHERE name = $1`, [name]);
  return row;
}

/**
 * Registers a preview: true, or false when the name or the job namespace is taken (nothing changes then).
 */
export async function insertPreview(db: Queryable, preview: PreviewRecord): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO previews (name, job_namespace, base_namespace, pull_request, commit_sha, mappings, created_at,
                           created_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)
     ON CONFLICT DO NOTHING RETURNING name`,
    [
      preview.name,
      preview.jobNamespace,
      preview.baseNamespace,
      preview.pullRequest,
      preview.commitSha,
      JSON.stringify(preview.mappings),
      preview.createdAt.toISOString(),
      preview.createdBy,
      preview.expiresAt?.toISOString() ?? null,
    ],
  );
  return rows.length === 1;
}

/** Removes a preview from the registry: true if it was there. */
export async function deletePreview(db: Queryable, name: string): Promise<boolean> {
  return (await db.query('DELETE FROM previews WHERE name = $1 RETURNING name', [name])).length === 1;
}

/** The previews whose time ran out by `at`. */
export async function expiredPreviews(db: Queryable, at: Date): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    'SELECT name FROM previews WHERE expires_at <= $1 ORDER BY name',
    [at.toISOString()],
  );
  return rows.map((row) => row.name);
}

/** Drops the schema a preview's store kept in a PostgreSQL database (see store/preview-store.ts). */
export async function dropSchema(db: Queryable, schema: string): Promise<void> {
  if (!/^hw_preview_[a-z0-9_]+$/.test(schema)) throw new Error(`not a preview's schema: ${schema}`);
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}
