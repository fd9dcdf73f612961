/**
 * The evidence of a data journey (analysis/journey.ts), read from the history tables: which runs moved data
 * from one dataset to another within a window, the events that prove it, and what the jobs and datasets were
 * then (versions, SQL, code locations, lifecycle changes).
 */
import type { Queryable } from '../db.js';

/** One run that, within the window, read `source` and wrote `target`. */
export interface JourneyStep {
  readonly source: number;
  readonly target: number;
  readonly jobId: number;
  readonly runId: string;
  /** The run's first read of `source` and last write of `target` in the window. */
  readonly readAt: Date;
  readonly wroteAt: Date;
  /** The hashes of the events that read and wrote. */
  readonly readEvent: string;
  readonly writeEvent: string;
}

/**
 * The runs that moved data from or into `datasetIds` within [`from`, `to`] (event time): `downstream`, those
 * that read one of them and wrote another dataset; `upstream`, those that wrote one of them and read another.
 * Each run's reads and writes are its events' in the window (a START may name the inputs, its COMPLETE the
 * outputs).
 */
export function journeySteps(
  db: Queryable,
  datasetIds: readonly number[],
  direction: 'downstream' | 'upstream',
  from: Date,
  to: Date,
): Promise<JourneyStep[]> {
  if (datasetIds.length === 0) return Promise.resolve([]);
  const known = direction === 'downstream' ? 'r' : 'w';
  return db.query<JourneyStep>(
    `SELECT r.dataset_id AS source, w.dataset_id AS target, w.job_id AS "jobId", w.run_uuid::text AS "runId",
            min(r.event_time) AS "readAt", max(w.event_time) AS "wroteAt",
            (array_agg(r.event_hash::text ORDER BY r.event_time, r.seq))[1] AS "readEvent",
            (array_agg(w.event_hash::text ORDER BY w.event_time DESC, w.seq DESC))[1] AS "writeEvent"
     FROM dataset_sightings r
     JOIN dataset_sightings w ON w.run_uuid = r.run_uuid AND w.kind = 1 AND w.dataset_id <> r.dataset_id
     WHERE r.kind = 0 AND ${known}.dataset_id = ANY($1::int[]) AND r.run_uuid IS NOT NULL
       AND r.event_time >= $2 AND r.event_time <= $3 AND w.event_time >= $2 AND w.event_time <= $3
       AND w.job_id IS NOT NULL
     GROUP BY r.dataset_id, w.dataset_id, w.job_id, w.run_uuid
     ORDER BY 1, 2, 3, 5, 4`,
    [datasetIds, from.toISOString(), to.toISOString()],
  );
}

/** The ids of events by their hashes: hash -> id. */
export async function eventIds(db: Queryable, hashes: readonly string[]): Promise<Map<string, number>> {
  if (hashes.length === 0) return new Map();
  const rows = await db.query<{ id: number; hash: string }>(
    'SELECT id, hash::text AS hash FROM events WHERE hash = ANY($1::uuid[])',
    [hashes],
  );
  return new Map(rows.map((row) => [row.hash, row.id]));
}

/** What a job was within a window: its versions, and the values of some of its facets its events gave. */
export interface JobInWindow {
  readonly versions: string[];
  /** Facet name -> the distinct values the job's events in the window gave, in the order first given. */
  readonly facets: Map<string, unknown[]>;
}

/** The versions and the values of facets `names` the events of each job gave within [`from`, `to`]. */
export async function jobsInWindow(
  db: Queryable,
  jobIds: readonly number[],
  names: readonly string[],
  from: Date,
  to: Date,
): Promise<Map<number, JobInWindow>> {
  const result = new Map<number, JobInWindow>();
  if (jobIds.length === 0) return result;
  for (const id of jobIds) result.set(id, { versions: [], facets: new Map() });
  const params = [jobIds, from.toISOString(), to.toISOString()];
  const [versions, facets] = await Promise.all([
    db.query<{ jobId: number; version: string }>(
      `SELECT s.job_id AS "jobId", v.version::text AS version
       FROM job_sightings s JOIN runs r ON r.uuid = s.run_uuid JOIN job_versions v ON v.id = r.job_version_id
       WHERE s.job_id = ANY($1::int[]) AND s.kind = 0 AND s.event_time >= $2 AND s.event_time <= $3
       GROUP BY s.job_id, v.version ORDER BY s.job_id, min(s.event_time), v.version`,
      params,
    ),
    db.query<{ jobId: number; name: string; facet: unknown }>(
      `SELECT f.job_id AS "jobId", f.name, f.facet
       FROM job_sightings s
       CROSS JOIN LATERAL jsonb_each_text(s.facets) AS named(name, hash)
       JOIN job_facets f ON f.job_id = s.job_id AND f.name = named.name AND f.hash = named.hash::bigint
       WHERE s.job_id = ANY($1::int[]) AND s.kind = 0 AND s.event_time >= $2 AND s.event_time <= $3
         AND named.name = ANY($4::text[])
       GROUP BY f.job_id, f.name, f.hash, f.facet ORDER BY f.job_id, f.name, min(s.event_time), f.hash`,
      [...params, names],
    ),
  ]);
  for (const { jobId, version } of versions) result.get(jobId)!.versions.push(version);
  for (const { jobId, name, facet } of facets) {
    const values = result.get(jobId)!.facets;
    let list = values.get(name);
    if (!list) values.set(name, (list = []));
    list.push(facet);
  }
  return result;
}

/** One value of a dataset facet an event gave within a window, with when. */
export interface DatasetFacetSighting {
  readonly datasetId: number;
  readonly name: string;
  readonly facet: unknown;
  readonly at: Date;
}

/** The values of facets `names` the events naming each dataset gave within [`from`, `to`], in time order. */
export function datasetFacetsInWindow(
  db: Queryable,
  datasetIds: readonly number[],
  names: readonly string[],
  from: Date,
  to: Date,
): Promise<DatasetFacetSighting[]> {
  if (datasetIds.length === 0) return Promise.resolve([]);
  return db.query<DatasetFacetSighting>(
    `SELECT f.dataset_id AS "datasetId", f.name, f.facet, min(s.event_time) AS at
     FROM dataset_sightings s
     CROSS JOIN LATERAL jsonb_each_text(s.facets) AS named(name, hash)
     JOIN dataset_facets f ON f.dataset_id = s.dataset_id AND f.name = named.name AND f.hash = named.hash::bigint
     WHERE s.dataset_id = ANY($1::int[]) AND s.event_time >= $2 AND s.event_time <= $3
       AND named.name = ANY($4::text[])
     GROUP BY f.dataset_id, f.name, f.hash, f.facet ORDER BY f.dataset_id, min(s.event_time), f.name, f.hash`,
    [datasetIds, from.toISOString(), to.toISOString(), names],
  );
}

/** The datasets whose latest `datasetType` facet says they are a MODEL (an ML model, as the spec names it). */
export async function modelDatasets(db: Queryable): Promise<number[]> {
  const rows = await db.query<{ id: number }>(
    `SELECT id FROM (
       SELECT DISTINCT ON (dataset_id) dataset_id AS id, facet FROM dataset_facets
       WHERE name = 'datasetType' ORDER BY dataset_id, event_time DESC, hash DESC) latest
     WHERE upper(latest.facet->>'datasetType') = 'MODEL' AND latest.facet->'_deleted' IS DISTINCT FROM 'true'::jsonb
     ORDER BY id`,
  );
  return rows.map((row) => row.id);
}

/** An assertion that failed on a dataset within a window: its first failure there, and how many runs failed it. */
export interface FailedAssertion {
  readonly datasetId: number;
  readonly assertion: string;
  readonly column: string;
  readonly firstAt: Date;
  readonly runs: number;
}

/** The assertions that failed on `datasetIds` within [`from`, `to`] (a skipped check is no failure). */
export function failedAssertionsBetween(
  db: Queryable,
  datasetIds: readonly number[],
  from: Date,
  to: Date,
): Promise<FailedAssertion[]> {
  if (datasetIds.length === 0) return Promise.resolve([]);
  return db.query<FailedAssertion>(
    `SELECT dataset_id AS "datasetId", assertion, column_name AS column, min(event_time) AS "firstAt",
            count(DISTINCT run_uuid)::int AS runs
     FROM dq_assertions
     WHERE dataset_id = ANY($1::int[]) AND NOT success AND NOT skipped AND event_time >= $2 AND event_time <= $3
     GROUP BY dataset_id, identity, assertion, column_name
     ORDER BY dataset_id, min(event_time), assertion, column_name`,
    [datasetIds, from.toISOString(), to.toISOString()],
  );
}

/**
 * The erasures of `datasetIds` events told within [`from`, `to`]: lifecycleStateChange facets saying DROP or
 * TRUNCATE (the data is gone), the first time each was given.
 */
export async function erasuresBetween(
  db: Queryable,
  datasetIds: readonly number[],
  from: Date,
  to: Date,
): Promise<{ datasetId: number; state: string; at: Date }[]> {
  const rows = await datasetFacetsInWindow(db, datasetIds, ['lifecycleStateChange'], from, to);
  return rows.flatMap((row) => {
    const value = (row.facet as { lifecycleStateChange?: unknown }).lifecycleStateChange;
    const state = typeof value === 'string' ? value.toUpperCase() : '';
    return state === 'DROP' || state === 'TRUNCATE' ? [{ datasetId: row.datasetId, state, at: row.at }] : [];
  });
}
