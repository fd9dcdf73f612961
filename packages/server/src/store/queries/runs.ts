import { datasetVersionUuid } from '../../model/identity.js';
import type { ExecutionOutcome } from '../../model/execution.js';
import type { RunState } from '../../model/run-state.js';
import type { Queryable } from '../db.js';

/**
 * Newest run first, the order of every run list and of latestRun: by Marquez's startedAt (the earliest START,
 * else the earliest RUNNING), else by when it ended (a run that only reported COMPLETE); runs with neither last
 * (a run known only from a child's parent facet, state NEW, must not hide the job's real runs), then by first
 * event. Matches the index runs_job_started (migration 101).
 */
export const RUN_ORDER =
  'COALESCE(r.started_at, r.first_running_at, r.ended_at) DESC NULLS LAST, r.created_at DESC, r.uuid';

/** A run as the read API needs it. Times are eventTimes. */
export interface RunRecord {
  readonly uuid: string;
  readonly jobId: number;
  readonly namespace: string;
  readonly jobName: string;
  /** The uuid of the job version the run ran, once it reached a terminal state. */
  readonly jobVersion: string | null;
  readonly state: RunState;
  /** First and last eventTime of the run. */
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly nominalStartTime: Date | null;
  readonly nominalEndTime: Date | null;
  /** The earliest START, else the earliest RUNNING. */
  readonly startedAt: Date | null;
  /** The terminal event's time. */
  readonly endedAt: Date | null;
  /** The terminal states the run's events reported, as bits (see contradictoryStates in model/run-state.ts). */
  readonly terminalsSeen: number;
  /** Whether the run executed (model/execution.ts). */
  readonly execution: ExecutionOutcome;
}

const COLUMNS = `r.uuid::text AS uuid, r.job_id AS "jobId", n.name AS namespace, j.name AS "jobName",
  jv.version::text AS "jobVersion", r.state, r.created_at AS "createdAt", r.updated_at AS "updatedAt",
  r.nominal_start_time AS "nominalStartTime", r.nominal_end_time AS "nominalEndTime",
  COALESCE(r.started_at, r.first_running_at) AS "startedAt", r.ended_at AS "endedAt",
  r.terminals_seen AS "terminalsSeen", COALESCE(r.execution, 'executed') AS execution`;

const JOINS = `JOIN jobs j ON j.id = r.job_id
  JOIN namespaces n ON n.id = j.namespace_id
  LEFT JOIN job_versions jv ON jv.id = r.job_version_id`;

/** Whether each run executed (absent: unknown uuid). */
export async function runExecutions(
  db: Queryable,
  uuids: readonly string[],
): Promise<Map<string, ExecutionOutcome>> {
  if (uuids.length === 0) return new Map();
  const rows = await db.query<{ uuid: string; execution: ExecutionOutcome }>(
    `SELECT uuid::text AS uuid, COALESCE(execution, 'executed') AS execution FROM runs WHERE uuid = ANY($1::uuid[])`,
    [uuids],
  );
  return new Map(rows.map((row) => [row.uuid, row.execution]));
}

/** Runs by uuid, in no particular order. */
export function findRuns(db: Queryable, uuids: readonly string[]): Promise<RunRecord[]> {
  if (uuids.length === 0) return Promise.resolve([]);
  return db.query<RunRecord>(`SELECT ${COLUMNS} FROM runs r ${JOINS} WHERE r.uuid = ANY($1::uuid[])`, [
    uuids,
  ]);
}

/** The namespace of the job of each run among `uuids` that exists, `id` being the run's uuid as text. */
export function findRunNamespaces(
  db: Queryable,
  uuids: readonly string[],
): Promise<{ id: string; namespace: string }[]> {
  return db.query<{ id: string; namespace: string }>(
    `SELECT r.uuid::text AS id, n.name AS namespace FROM runs r JOIN jobs j ON j.id = r.job_id
     JOIN namespaces n ON n.id = j.namespace_id WHERE r.uuid = ANY($1::uuid[])`,
    [uuids],
  );
}

/** The runs of a job, newest first. */
export function listJobRuns(
  db: Queryable,
  jobId: number,
  limit: number,
  offset: number,
): Promise<RunRecord[]> {
  return db.query<RunRecord>(
    `SELECT ${COLUMNS} FROM runs r ${JOINS} WHERE r.job_id = $1 ORDER BY ${RUN_ORDER} LIMIT $2 OFFSET $3`,
    [jobId, limit, offset],
  );
}

/**
 * A run that never ran: it never reported START or RUNNING and ended ABORTED (a pipeline's node that a failure
 * elsewhere stopped before it started) or is NEW (known only as a parent, or from events without a type). A run
 * that reported only COMPLETE or FAIL did run: some producers send no START.
 */
const NEVER_RAN = `(r.started_at IS NULL AND r.first_running_at IS NULL AND r.state IN ('NEW', 'ABORTED'))`;

/**
 * The child runs of a run in the order they ran: the runs whose newest event's `parent` facet names it (the
 * rule of derive/derive.ts, kept in runs.parent_run_uuid), by start (else end), those with neither last.
 */
export function listChildRuns(
  db: Queryable,
  parentUuid: string,
  limit: number,
  offset: number,
): Promise<(RunRecord & { neverRan: boolean })[]> {
  return db.query<RunRecord & { neverRan: boolean }>(
    `SELECT ${COLUMNS}, ${NEVER_RAN} AS "neverRan" FROM runs r ${JOINS}
     WHERE r.parent_run_uuid = $1::uuid
     ORDER BY COALESCE(r.started_at, r.first_running_at, r.ended_at) ASC NULLS LAST, r.created_at, r.uuid
     LIMIT $2 OFFSET $3`,
    [parentUuid, limit, offset],
  );
}

/** How many child runs a run has, by state, and how many of them never ran (see listChildRuns). */
export async function countChildRuns(
  db: Queryable,
  parentUuid: string,
): Promise<{ total: number; neverRan: number; byState: Record<string, number> }> {
  const rows = await db.query<{ state: string; count: number; neverRan: number }>(
    `SELECT r.state, count(*)::int AS count, (count(*) FILTER (WHERE ${NEVER_RAN}))::int AS "neverRan"
     FROM runs r WHERE r.parent_run_uuid = $1::uuid GROUP BY r.state ORDER BY r.state`,
    [parentUuid],
  );
  const byState: Record<string, number> = {};
  let total = 0;
  let neverRan = 0;
  for (const row of rows) {
    byState[row.state] = row.count;
    total += row.count;
    neverRan += row.neverRan;
  }
  return { total, neverRan, byState };
}

/** How many runs a job has. */
export async function countJobRuns(db: Queryable, jobId: number): Promise<number> {
  const [row] = await db.query<{ count: number }>('SELECT count(*) AS count FROM runs WHERE job_id = $1', [
    jobId,
  ]);
  return row?.count ?? 0;
}

/** The newest `perJob` runs of each job in one query: job id -> its runs, newest first. */
export async function latestRunsOfJobs(
  db: Queryable,
  jobIds: readonly number[],
  perJob: number,
): Promise<Map<number, RunRecord[]>> {
  const result = new Map<number, RunRecord[]>();
  if (jobIds.length === 0 || perJob <= 0) return result;
  const rows = await db.query<RunRecord>(
    `SELECT ${COLUMNS} FROM unnest($1::int[]) AS wanted(job_id)
     CROSS JOIN LATERAL (
       SELECT r.uuid FROM runs r WHERE r.job_id = wanted.job_id ORDER BY ${RUN_ORDER} LIMIT $2) latest
     JOIN runs r ON r.uuid = latest.uuid
     ${JOINS}
     ORDER BY r.job_id, ${RUN_ORDER}`,
    [jobIds, perJob],
  );
  for (const run of rows) {
    let list = result.get(run.jobId);
    if (!list) result.set(run.jobId, (list = []));
    list.push(run);
  }
  return result;
}

/** A dataset version a run read or wrote, with the run's input or output facets for it. */
export interface RunIoRecord {
  readonly runUuid: string;
  /** 0: input, 1: output. */
  readonly direction: number;
  readonly datasetId: number;
  readonly namespace: string;
  readonly name: string;
  readonly version: string;
  readonly facets: Record<string, unknown>;
}

/**
 * The dataset versions each run read and wrote (by `asOf`, when given), in one query, ordered by direction,
 * namespace and name. The version is the one the run's newest event named: if that event described the dataset,
 * its version; otherwise the version current at that event's time (the dataset's newest description by then),
 * whatever order the events arrived in. The input/output facets are merged from the run's events in arrival order.
 */
export async function runIo(
  db: Queryable,
  uuids: readonly string[],
  asOf?: Date,
): Promise<Map<string, RunIoRecord[]>> {
  const result = new Map<string, RunIoRecord[]>();
  if (uuids.length === 0) return result;
  const rows = await db.query<
    RunIoRecord & { at: Date; seq: string | number; facets: Record<string, unknown> }
  >(
    `SELECT s.run_uuid::text AS "runUuid", s.kind AS direction, s.dataset_id AS "datasetId", n.name AS namespace,
            d.name,
            CASE WHEN s.defines_version THEN v.version::text ELSE (
              SELECT dv.version::text FROM dataset_sightings described
              JOIN dataset_versions dv ON dv.id = described.version_id
              WHERE described.dataset_id = s.dataset_id AND described.defines_version
                AND described.event_time <= s.event_time
              ORDER BY described.event_time DESC, described.seq DESC LIMIT 1) END AS version,
            s.io_facets AS facets, s.event_time AS at, s.seq
     FROM dataset_sightings s
     JOIN datasets d ON d.id = s.dataset_id
     JOIN namespaces n ON n.id = d.namespace_id
     LEFT JOIN dataset_versions v ON v.id = s.version_id
     WHERE s.run_uuid = ANY($1::uuid[]) AND s.run_uuid IS NOT NULL AND s.kind IN (0, 1)
       AND ($2::timestamptz IS NULL OR s.event_time <= $2)
     ORDER BY s.run_uuid, s.kind, n.name, d.name, s.seq`,
    [uuids, asOf?.toISOString() ?? null],
  );
  // Rows come in arrival order per dataset: facets accumulate, the version is the newest event's.
  const merged = new Map<string, { record: RunIoRecord; at: number; seq: bigint }>();
  for (const { at, seq, ...row } of rows) {
    const record = { ...row, version: row.version ?? datasetVersionUuid(row.namespace, row.name) };
    const key = `${row.runUuid}\u0000${row.direction}\u0000${row.namespace}\u0000${row.name}`;
    const known = merged.get(key);
    const t = at.getTime();
    if (!known) {
      merged.set(key, { record, at: t, seq: BigInt(seq) });
      continue;
    }
    const newer = t > known.at || (t === known.at && BigInt(seq) > known.seq);
    known.record = {
      ...known.record,
      version: newer ? record.version : known.record.version,
      facets: { ...known.record.facets, ...record.facets },
    };
    if (newer) {
      known.at = t;
      known.seq = BigInt(seq);
    }
  }
  for (const { record } of merged.values()) {
    let list = result.get(record.runUuid);
    if (!list) result.set(record.runUuid, (list = []));
    list.push(record);
  }
  return result;
}
