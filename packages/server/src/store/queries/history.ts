import type { Queryable } from '../db.js';
import { nominalTimesOf } from '../../model/describing-facets.js';
import { applyRunEvent, initialRunState, runStartedAt, runStateOf } from '../../model/run-state.js';
import type { EventType, RunStateAggregate } from '../../model/run-state.js';
import { mergeFacetRows, type FacetRow, type Facets } from './facets.js';
import type { RunRecord } from './runs.js';

/**
 * Reads of the model as it was at an event time `at` (inclusive), from the history tables of migration 005:
 * each answer is what a store holding only the events with eventTime <= `at` would give. Ties between events
 * with equal eventTimes are decided by arrival order, as the writer decides them.
 */

/** What a dataset was at `at`; absent from the result when no event had named it by then. */
export interface DatasetAsOf {
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Whether a run, job or DatasetEvent had named it by then (not only a column-lineage facet). */
  readonly named: boolean;
  readonly lastModifiedAt: Date | null;
  /** The version current then; null when nothing had described the dataset (see emptyVersion). */
  readonly version: string | null;
  readonly fields: unknown[] | null;
  readonly lifecycleState: string | null;
}

/** Datasets as they were at `at`. */
export async function datasetsAsOf(
  db: Queryable,
  ids: readonly number[],
  at: Date,
): Promise<Map<number, DatasetAsOf>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<DatasetAsOf & { id: number }>(
    `WITH seen AS (
       SELECT s.dataset_id,
              min(s.event_time) AS created_at,
              -- The writer starts a row's updatedAt at its first-arrived sighting, then moves it to each newer
              -- event naming the dataset itself (not as a column-lineage input).
              GREATEST(max(s.event_time) FILTER (WHERE s.kind <> 3),
                       (array_agg(s.event_time ORDER BY s.seq))[1]) AS updated_at,
              max(s.event_time) FILTER (WHERE s.modifies) AS last_modified_at,
              bool_or(s.kind <> 3) AS named,
              (array_agg(s.version_id ORDER BY s.event_time DESC, s.seq DESC)
                 FILTER (WHERE s.defines_version))[1] AS version_id,
              (array_agg(v.lifecycle_state ORDER BY s.event_time DESC, s.seq DESC)
                 FILTER (WHERE s.defines_version AND v.lifecycle_state IS NOT NULL))[1] AS lifecycle_state
       FROM dataset_sightings s LEFT JOIN dataset_versions v ON v.id = s.version_id
       WHERE s.dataset_id = ANY($1::int[]) AND s.event_time <= $2::timestamptz
       GROUP BY s.dataset_id)
     SELECT seen.dataset_id AS id, seen.created_at AS "createdAt", seen.updated_at AS "updatedAt",
            seen.last_modified_at AS "lastModifiedAt", v.version::text AS version, v.fields, seen.named,
            seen.lifecycle_state AS "lifecycleState"
     FROM seen LEFT JOIN dataset_versions v ON v.id = seen.version_id`,
    [ids, at.toISOString()],
  );
  return new Map(rows.map(({ id, ...row }) => [id, row]));
}

/** What a job was at `at`; absent when no event had named it by then. */
export interface JobAsOf {
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** The job of the parent run named by its newest event that named one. */
  readonly parentJobId: number | null;
}

/** Jobs as they were at `at`. */
export async function jobsAsOf(
  db: Queryable,
  ids: readonly number[],
  at: Date,
): Promise<Map<number, JobAsOf>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<JobAsOf & { id: number }>(
    `WITH seen AS (
       SELECT job_id, min(event_time) AS created_at,
              -- As for datasets: the first-arrived sighting, then each newer event of the job's own.
              GREATEST(max(event_time) FILTER (WHERE kind = 0), (array_agg(event_time ORDER BY seq))[1])
                AS updated_at,
              (array_agg(parent_job_id ORDER BY event_time DESC, seq DESC)
                 FILTER (WHERE kind = 0 AND parent_job_id IS NOT NULL))[1] AS parent_job_id
       FROM job_sightings
       WHERE job_id = ANY($1::int[]) AND event_time <= $2::timestamptz
       GROUP BY job_id)
     SELECT seen.job_id AS id, seen.created_at AS "createdAt", seen.updated_at AS "updatedAt",
            seen.parent_job_id AS "parentJobId"
     FROM seen`,
    [ids, at.toISOString()],
  );
  return new Map(rows.map(({ id, ...row }) => [id, row]));
}

/** Where each owner's facet sightings are: table, owner column, the jsonb column of name -> hash, values. */
const SIGHTINGS = {
  dataset: {
    table: 'dataset_sightings',
    column: 'dataset_id',
    type: 'int',
    hashes: 'facets',
    values: 'dataset_facets',
  },
  job: { table: 'job_sightings', column: 'job_id', type: 'int', hashes: 'facets', values: 'job_facets' },
  run: {
    table: 'job_sightings',
    column: 'run_uuid',
    type: 'uuid',
    hashes: 'run_facets',
    values: 'run_facets',
  },
} as const;

/**
 * The merged facets of datasets, jobs or runs as they were at `at`: per owner and name, the value of the newest
 * event that gave one by then (equal times: the larger hash, as for the present facets). Only `names`, if given.
 */
export async function facetsAsOf<K extends string | number>(
  db: Queryable,
  owner: keyof typeof SIGHTINGS,
  ids: readonly K[],
  at: Date,
  names: readonly string[] | null = null,
): Promise<Map<K, Facets>> {
  if (ids.length === 0) return new Map();
  const { table, column, type, hashes, values } = SIGHTINGS[owner];
  const rows = await db.query<FacetRow>(
    `SELECT DISTINCT ON (s.${column}, f.name) s.${column}${type === 'uuid' ? '::text' : ''} AS owner,
            f.name, v.facet
     FROM ${table} s
     CROSS JOIN LATERAL jsonb_each_text(s.${hashes}) AS f(name, hash)
     JOIN ${values} v ON v.${column} = s.${column} AND v.name = f.name AND v.hash = f.hash::bigint
     WHERE s.${column} = ANY($1::${type}[]) AND s.${column} IS NOT NULL AND s.event_time <= $2::timestamptz
       AND ($3::text[] IS NULL OR (s.${hashes} ?| $3::text[] AND f.name = ANY($3::text[])))
     ORDER BY s.${column}, f.name, s.event_time DESC, f.hash::bigint DESC`,
    [ids, at.toISOString(), names],
  );
  return mergeFacetRows<K>(rows);
}

/** A run as it was at `at`: its state folded from its events up to then. */
export interface RunAsOf {
  readonly uuid: string;
  readonly jobId: number;
  readonly aggregate: RunStateAggregate;
  /** Arrival order of its last-arrived event by then: equal times are decided by it, as the writer does. */
  readonly lastSeq: bigint;
}

/** What made a job's version current at `at`: its latest terminal run, or a JobEvent (with its version). */
export type CurrentVersionSource = { readonly run: RunAsOf } | { readonly version: string | null };

/** The runs of a job known at `at` and the source of its version then. */
export interface JobRunsAsOf {
  /** Newest first (the order of every run list), at most `perJob`. */
  readonly runs: RunAsOf[];
  readonly current: CurrentVersionSource | null;
}

/**
 * The runs of each job known at `at`, newest first, at most `perJob` each, and what made the job's version
 * current then. A run named only as a parent by then is known, NEW, as it would be in a store holding only those
 * events.
 */
export async function runsOfJobsAsOf(
  db: Queryable,
  jobIds: readonly number[],
  at: Date,
  perJob: number,
): Promise<Map<number, JobRunsAsOf>> {
  const result = new Map<number, JobRunsAsOf>();
  if (jobIds.length === 0) return result;
  const rows = await db.query<{
    jobId: number;
    uuid: string | null;
    eventType: EventType | null;
    at: Date;
    seq: string | number;
    jobVersion: string | null;
  }>(
    `SELECT s.job_id AS "jobId", s.run_uuid::text AS uuid, s.event_type AS "eventType", s.event_time AS at,
            s.seq, jv.version::text AS "jobVersion"
     FROM job_sightings s LEFT JOIN job_versions jv ON jv.id = s.version_id
     WHERE s.job_id = ANY($1::int[]) AND s.event_time <= $2::timestamptz
       AND (s.run_uuid IS NOT NULL OR s.kind = 0)
     ORDER BY s.event_time, s.seq`,
    [jobIds, at.toISOString()],
  );
  const runs = new Map<string, { jobId: number; aggregate: RunStateAggregate; lastSeq: bigint }>();
  // The latest JobEvent of each job: its time, arrival and version.
  const jobEvents = new Map<number, { at: number; seq: bigint; version: string | null }>();
  for (const row of rows) {
    const t = row.at.getTime();
    const seq = BigInt(row.seq);
    if (row.uuid === null) {
      jobEvents.set(row.jobId, { at: t, seq, version: row.jobVersion });
      continue;
    }
    const eventType = row.eventType ?? undefined;
    const known = runs.get(row.uuid);
    if (!known) {
      runs.set(row.uuid, { jobId: row.jobId, aggregate: initialRunState(eventType, t), lastSeq: seq });
    } else {
      known.aggregate = applyRunEvent(known.aggregate, eventType, t);
      if (seq > known.lastSeq) known.lastSeq = seq;
    }
  }
  const byJob = new Map<number, RunAsOf[]>();
  for (const [uuid, run] of runs) {
    let list = byJob.get(run.jobId);
    if (!list) byJob.set(run.jobId, (list = []));
    list.push({ uuid, ...run });
  }
  for (const jobId of jobIds) {
    const list = byJob.get(jobId) ?? [];
    // The version follows the run with the newest terminal event (equal times: the later arrival) ...
    let latest: RunAsOf | undefined;
    for (const run of list) {
      const terminal = run.aggregate.terminal;
      if (terminal === null) continue;
      const best = latest?.aggregate.terminal;
      if (!best || terminal.at > best.at || (terminal.at === best.at && run.lastSeq > latest!.lastSeq)) {
        latest = run;
      }
    }
    // ... unless a JobEvent came later.
    const jobEvent = jobEvents.get(jobId);
    let current: CurrentVersionSource | null = latest ? { run: latest } : null;
    if (jobEvent && (!latest || jobEvent.at >= latest.aggregate.terminal!.at)) {
      current = { version: jobEvent.version };
    }
    if (list.length > 0 || current) {
      result.set(jobId, { runs: list.sort(compareRuns).slice(0, perJob), current });
    }
  }
  return result;
}

/**
 * Newest first, as RUN_ORDER in runs.ts: by start, else end (runs with neither last), then first event, then
 * uuid.
 */
function compareRuns(a: RunAsOf, b: RunAsOf): number {
  const startA = runStartedAt(a.aggregate) ?? a.aggregate.terminal?.at ?? null;
  const startB = runStartedAt(b.aggregate) ?? b.aggregate.terminal?.at ?? null;
  if (startA !== startB) {
    if (startA === null) return 1;
    if (startB === null) return -1;
    return startB - startA;
  }
  if (a.aggregate.firstEventAt !== b.aggregate.firstEventAt) {
    return b.aggregate.firstEventAt - a.aggregate.firstEventAt;
  }
  return a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0;
}

/**
 * A run record (from findRuns) as it was: the state and times of `asOf`, its nominal times from its facets of
 * then, and `jobVersion` (null until the run had reached a terminal state).
 */
export function runRecordAsOf(
  record: RunRecord,
  asOf: RunAsOf,
  facets: Facets,
  jobVersion: string | null,
): RunRecord {
  const { aggregate } = asOf;
  const nominal = nominalTimesOf(facets.nominalTime);
  return {
    ...record,
    state: runStateOf(aggregate),
    createdAt: new Date(aggregate.firstEventAt),
    updatedAt: new Date(aggregate.lastEventAt),
    startedAt: runStartedAt(aggregate) === null ? null : new Date(runStartedAt(aggregate)!),
    endedAt: aggregate.terminal === null ? null : new Date(aggregate.terminal.at),
    terminalsSeen: aggregate.terminalsSeen,
    jobVersion: aggregate.terminal === null ? null : jobVersion,
    nominalStartTime: nominal.startMs === null ? null : new Date(nominal.startMs),
    nominalEndTime: nominal.endMs === null ? null : new Date(nominal.endMs),
  };
}

/**
 * The code each run ran, as known at `at`: the url of the newest sourceCodeLocation facet among the run's events up
 * to then (equal times: the greater url); for a run whose events named none, its job's newest by the run's last
 * event. One query for all `runs`, in their order.
 */
export async function runLocationsAsOf(
  db: Queryable,
  runs: readonly RunAsOf[],
  at: Date,
): Promise<(string | null)[]> {
  if (runs.length === 0) return [];
  const newest = (where: string) =>
    `SELECT v.facet->>'url' AS url FROM job_sightings s
     JOIN job_facets v ON v.job_id = s.job_id AND v.name = 'sourceCodeLocation'
       AND v.hash = (s.facets->>'sourceCodeLocation')::bigint
     WHERE ${where} AND s.kind = 0 AND s.facets ? 'sourceCodeLocation'
     ORDER BY s.event_time DESC, COALESCE(v.facet->>'url', '') COLLATE "C" DESC LIMIT 1`;
  const rows = await db.query<{
    index: string | number;
    own: { url: string | null } | null;
    job: string | null;
  }>(
    `SELECT w.index,
       (SELECT row_to_json(o) FROM (${newest('s.run_uuid = w.uuid AND s.run_uuid IS NOT NULL AND s.event_time <= $4::timestamptz')}) o) AS own,
       (${newest('s.job_id = w.job_id AND s.event_time <= w.last_at')}) AS job
     FROM unnest($1::uuid[], $2::int[], $3::timestamptz[]) WITH ORDINALITY AS w(uuid, job_id, last_at, index)`,
    [
      runs.map((run) => run.uuid),
      runs.map((run) => run.jobId),
      runs.map((run) => new Date(run.aggregate.lastEventAt).toISOString()),
      at.toISOString(),
    ],
  );
  const result: (string | null)[] = runs.map(() => null);
  for (const row of rows) result[Number(row.index) - 1] = row.own ? row.own.url : row.job;
  return result;
}

/**
 * The row count each dataset's newest write reported by `at` (the outputStatistics facet of the newest COMPLETE
 * that wrote it with one). Datasets without one are absent.
 */
export async function latestRowCounts(
  db: Queryable,
  datasetIds: readonly number[],
  at: Date,
): Promise<Map<number, number>> {
  if (datasetIds.length === 0) return new Map();
  const rows = await db.query<{ id: number; rows: number | null }>(
    `SELECT DISTINCT ON (dataset_id) dataset_id AS id, (io_facets->'outputStatistics'->>'rowCount')::float8 AS rows
     FROM dataset_sightings
     WHERE dataset_id = ANY($1::int[]) AND modifies AND event_time <= $2::timestamptz
       AND jsonb_typeof(io_facets->'outputStatistics'->'rowCount') = 'number'
     ORDER BY dataset_id, event_time DESC, seq DESC`,
    [datasetIds, at.toISOString()],
  );
  return new Map(rows.flatMap((row) => (row.rows === null ? [] : [[row.id, row.rows] as const])));
}

/**
 * Which of these datasets or jobs an event named between `from` (exclusive) and `to` (inclusive): only those can
 * differ between the two times.
 */
export async function namedBetween(
  db: Queryable,
  owner: 'dataset' | 'job',
  ids: readonly number[],
  from: Date,
  to: Date,
): Promise<number[]> {
  if (ids.length === 0) return [];
  const [table, column] =
    owner === 'dataset' ? ['dataset_sightings', 'dataset_id'] : ['job_sightings', 'job_id'];
  const rows = await db.query<{ id: number }>(
    `SELECT DISTINCT ${column} AS id FROM ${table}
     WHERE ${column} = ANY($1::int[]) AND event_time > $2::timestamptz AND event_time <= $3::timestamptz`,
    [ids, from.toISOString(), to.toISOString()],
  );
  return rows.map((row) => row.id);
}
