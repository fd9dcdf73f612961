import type { JobType } from '../../model/entity-types.js';
import type { Queryable } from '../db.js';
import { RUN_ORDER } from './runs.js';

/** A job as the read API needs it: the row, its parent, its current version and its tags. */
export interface JobRecord {
  readonly id: number;
  readonly namespace: string;
  readonly name: string;
  readonly simpleName: string;
  readonly type: JobType;
  readonly description: string | null;
  readonly location: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly isHidden: boolean;
  readonly parentNamespace: string | null;
  readonly parentName: string | null;
  /** The current version's uuid. */
  readonly currentVersion: string | null;
  readonly tags: string[];
}

const SELECT = `
  SELECT j.id, n.name AS namespace, j.name, j.simple_name AS "simpleName", j.type, j.description, j.location,
         j.created_at AS "createdAt", j.updated_at AS "updatedAt", j.is_hidden AS "isHidden",
         pn.name AS "parentNamespace", p.name AS "parentName", jv.version::text AS "currentVersion",
         ARRAY(SELECT t.tag FROM job_tags t WHERE t.job_id = j.id ORDER BY t.tag) AS tags
  FROM jobs j
  JOIN namespaces n ON n.id = j.namespace_id
  LEFT JOIN jobs p ON p.id = j.parent_job_id
  LEFT JOIN namespaces pn ON pn.id = p.namespace_id
  LEFT JOIN job_versions jv ON jv.id = j.current_version_id`;

/** Jobs by id (hidden ones included), in no particular order. */
export function findJobs(db: Queryable, ids: readonly number[]): Promise<JobRecord[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.query<JobRecord>(`${SELECT} WHERE j.id = ANY($1::int[])`, [ids]);
}

/** Which jobs to list. */
export interface JobFilter {
  /** Only this namespace; all namespaces when undefined. */
  readonly namespaceId?: number | undefined;
  /** Only these namespaces (what the caller may read); all when undefined. */
  readonly namespaceIds?: readonly number[] | undefined;
  /** Only jobs whose latest run is in one of these states (jobs without runs have none). */
  readonly lastRunStates?: readonly string[] | undefined;
}

function where(filter: JobFilter, params: unknown[]): string {
  const conditions = ['NOT j.is_hidden'];
  if (filter.namespaceId !== undefined) {
    params.push(filter.namespaceId);
    conditions.push(`j.namespace_id = $${params.length}`);
  }
  if (filter.namespaceIds !== undefined) {
    params.push(filter.namespaceIds);
    conditions.push(`j.namespace_id = ANY($${params.length}::int[])`);
  }
  if (filter.lastRunStates !== undefined) {
    params.push(filter.lastRunStates);
    conditions.push(
      `(SELECT r.state FROM runs r WHERE r.job_id = j.id ORDER BY ${RUN_ORDER} LIMIT 1) = ANY($${params.length}::text[])`,
    );
  }
  return conditions.join(' AND ');
}

/** Visible jobs, most recently updated first. */
export function listJobs(
  db: Queryable,
  filter: JobFilter,
  limit: number,
  offset: number,
): Promise<JobRecord[]> {
  const params: unknown[] = [];
  const condition = where(filter, params);
  params.push(limit, offset);
  return db.query<JobRecord>(
    `${SELECT} WHERE ${condition} ORDER BY j.updated_at DESC, j.id DESC
     LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
}

/** How many visible jobs match `filter`. */
export async function countJobs(db: Queryable, filter: JobFilter): Promise<number> {
  const params: unknown[] = [];
  const [row] = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM jobs j WHERE ${where(filter, params)}`,
    params,
  );
  return row?.count ?? 0;
}

/** A version of a job: what it ran (code location) and the datasets it read and wrote. */
export interface JobVersionRecord {
  readonly id: number;
  readonly version: string;
  readonly location: string | null;
  readonly inputs: { namespace: string; name: string }[];
  readonly outputs: { namespace: string; name: string }[];
  readonly createdAt: Date;
  /** The newest run of this version. */
  readonly latestRun: string | null;
}

const VERSION_SELECT = `
  SELECT jv.id, jv.version::text AS version, jv.location, jv.inputs, jv.outputs, jv.created_at AS "createdAt",
         (SELECT r.uuid::text FROM runs r WHERE r.job_version_id = jv.id ORDER BY ${RUN_ORDER} LIMIT 1)
           AS "latestRun"
  FROM job_versions jv`;

/** The versions of a job, newest first. */
export function listJobVersions(
  db: Queryable,
  jobId: number,
  limit: number,
  offset: number,
): Promise<JobVersionRecord[]> {
  return db.query<JobVersionRecord>(
    `${VERSION_SELECT} WHERE jv.job_id = $1 ORDER BY jv.created_at DESC, jv.id DESC LIMIT $2 OFFSET $3`,
    [jobId, limit, offset],
  );
}

/** The version `version` (a valid uuid) of a job, if it is one of its versions. */
export async function findJobVersion(
  db: Queryable,
  jobId: number,
  version: string,
): Promise<JobVersionRecord | undefined> {
  const [row] = await db.query<JobVersionRecord>(
    `${VERSION_SELECT} WHERE jv.job_id = $1 AND jv.version = $2::uuid`,
    [jobId, version],
  );
  return row;
}

/** Soft-deletes a job. */
export async function hideJob(db: Queryable, jobId: number): Promise<void> {
  await db.query('UPDATE jobs SET is_hidden = true WHERE id = $1', [jobId]);
}

/** Tags a job, creating the tag if it does not exist (two statements: run it in a transaction). */
export async function tagJob(tx: Queryable, jobId: number, tag: string): Promise<void> {
  await tx.query('INSERT INTO tags (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [tag]);
  await tx.query('INSERT INTO job_tags (job_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING', [jobId, tag]);
}

/** Removes a tag from a job (nothing happens if it was not tagged). */
export async function untagJob(db: Queryable, jobId: number, tag: string): Promise<void> {
  await db.query('DELETE FROM job_tags WHERE job_id = $1 AND tag = $2', [jobId, tag]);
}

/** The tags of jobs; jobs without tags are absent. */
export async function jobTags(db: Queryable, ids: readonly number[]): Promise<Map<number, string[]>> {
  const result = new Map<number, string[]>();
  if (ids.length === 0) return result;
  for (const { id, tag } of await db.query<{ id: number; tag: string }>(
    'SELECT job_id AS id, tag FROM job_tags WHERE job_id = ANY($1::int[]) ORDER BY job_id, tag',
    [ids],
  )) {
    const list = result.get(id);
    if (list) list.push(tag);
    else result.set(id, [tag]);
  }
  return result;
}
