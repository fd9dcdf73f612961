/**
 * The SQL of lineage analysis (src/analysis): batched reads keyed by lists of ids (`= ANY($1)` or `unnest`),
 * one query per kind of fact whatever the number of nodes. Every time-based read is bounded by `at`, the
 * moment the analysis looks at, so that an as-of analysis can reuse them unchanged.
 */
import { ERROR_FACETS, runErrorOf } from '../../model/error-facets.js';
import type { AssertionResult } from '../../model/assertions.js';
import type { ExecutionOutcome } from '../../model/execution.js';
import type { Queryable } from '../db.js';
import { compareText } from './lookup.js';
import { RUN_ORDER, runIo } from './runs.js';

/** A run as analysis reports it. */
export interface RunOutcome {
  readonly uuid: string;
  readonly jobId: number;
  readonly state: string;
  readonly startedAt: Date | null;
  readonly endedAt: Date | null;
  /** The terminal states the run's events reported, as bits (see contradictoryStates in model/run-state.ts). */
  readonly terminalsSeen: number;
  /** The message of the run's error (runErrorOf: errorMessage, spark.exception). */
  readonly errorMessage: string | null;
  /** Whether the run executed (model/execution.ts); a run no event said otherwise of executed. */
  readonly execution: ExecutionOutcome;
}

// The latest value of each error facet of the run, as {name: facet}; runErrorOf reads the error from them.
const OUTCOME_COLUMNS = `r.uuid::text AS uuid, r.job_id AS "jobId", r.state,
  COALESCE(r.started_at, r.first_running_at) AS "startedAt", r.ended_at AS "endedAt",
  r.terminals_seen AS "terminalsSeen", COALESCE(r.execution, 'executed') AS execution,
  (SELECT jsonb_object_agg(e.name, e.facet) FROM (
     SELECT DISTINCT ON (f.name) f.name, f.facet FROM run_facets f
     WHERE f.run_uuid = r.uuid AND f.name IN (${ERROR_FACETS.map((name) => `'${name}'`).join(', ')})
     ORDER BY f.name, f.event_time DESC, f.hash DESC) e) AS "errorFacets"`;

/** The SQL condition that run `r` executed (see RunOutcome.execution). */
export const EXECUTED = `(r.execution IS NULL OR r.execution = 'executed')`;

type OutcomeRow = Omit<RunOutcome, 'errorMessage'> & { errorFacets: Record<string, unknown> | null };

const outcomeOf = ({ errorFacets, ...row }: OutcomeRow): RunOutcome => ({
  ...row,
  errorMessage: runErrorOf(errorFacets)?.message ?? null,
});

/** The time of the newest stored event, or null for an empty store. */
export async function latestEventTime(db: Queryable): Promise<Date | null> {
  const [row] = await db.query<{ at: Date | null }>('SELECT max(event_time) AS at FROM events');
  return row?.at ?? null;
}

/**
 * The newest run of each job that had begun by `at` (by Marquez's startedAt, as run lists order runs) and that
 * executed (a skipped, reused or no-op run is not a job's latest real run), with its error message: job id ->
 * run. Jobs without such a run are absent. With `completed`, only runs in state COMPLETED count: the newest
 * completed run.
 */
export async function latestRunOfJobs(
  db: Queryable,
  jobIds: readonly number[],
  at: Date,
  { completed = false }: { completed?: boolean } = {},
): Promise<Map<number, RunOutcome>> {
  if (jobIds.length === 0) return new Map();
  const rows = await db.query<OutcomeRow>(
    `SELECT ${OUTCOME_COLUMNS} FROM unnest($1::int[]) AS wanted(job_id)
     CROSS JOIN LATERAL (
       SELECT r.uuid FROM runs r WHERE r.job_id = wanted.job_id AND r.created_at <= $2 AND ${EXECUTED}
         ${completed ? "AND r.state = 'COMPLETED'" : ''}
       ORDER BY ${RUN_ORDER} LIMIT 1) latest
     JOIN runs r ON r.uuid = latest.uuid`,
    [jobIds, at.toISOString()],
  );
  return new Map(rows.map((row) => [row.jobId, outcomeOf(row)]));
}

/**
 * The visible child jobs of each job in `parentIds` at `at`: parent id -> child ids, ascending. A job is a child of
 * every parent that names it, not only of the newest one `jobs.parent_job_id` keeps (a Kedro node belongs to every
 * registered pipeline that includes it):
 * - observed: one of its runs at or before `at` named a run of the parent in its parent facet;
 * - declared: a JobEvent of it named the parent in its headwater_parentJob facet, no older than the parent's own
 *   latest JobEvent at `at`. A push sends the pipeline with its nodes, so the pipeline's latest push says which nodes
 *   it has now: a node pushed under it before and left out since is no longer its child by declaration.
 */
export async function childJobsOf(
  db: Queryable,
  parentIds: readonly number[],
  at: Date,
): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>();
  if (parentIds.length === 0) return result;
  const rows = await db.query<{ parentId: number; jobId: number }>(
    `SELECT DISTINCT s.parent_job_id AS "parentId", s.job_id AS "jobId"
     FROM unnest($1::int[]) AS wanted(id)
     LEFT JOIN LATERAL (
       SELECT max(d.event_time) AS at FROM job_sightings d
       WHERE d.job_id = wanted.id AND d.kind = 0 AND d.run_uuid IS NULL AND d.event_time <= $2) pushed ON true
     JOIN job_sightings s ON s.parent_job_id = wanted.id AND s.kind = 0 AND s.event_time <= $2
       AND (s.run_uuid IS NOT NULL OR pushed.at IS NULL OR s.event_time >= pushed.at)
     JOIN jobs j ON j.id = s.job_id AND NOT j.is_hidden
     WHERE s.job_id <> wanted.id
     ORDER BY 1, 2`,
    [parentIds, at.toISOString()],
  );
  for (const row of rows) {
    const children = result.get(row.parentId);
    if (children) children.push(row.jobId);
    else result.set(row.parentId, [row.jobId]);
  }
  return result;
}

/** What a job's latest JobEvent declared: when, and the datasets it reads (direction 0) and writes (1). */
export interface Declaration {
  readonly at: Date;
  readonly edges: { readonly direction: number; readonly datasetId: number }[];
}

/**
 * The latest JobEvent (by eventTime, then arrival) of each job in `jobIds` at or before `at`, with the inputs and
 * outputs it declared: job id -> declaration. Jobs no JobEvent described are absent.
 */
export async function latestDeclarations(
  db: Queryable,
  jobIds: readonly number[],
  at: Date,
): Promise<Map<number, Declaration>> {
  const result = new Map<number, Declaration>();
  if (jobIds.length === 0) return result;
  const rows = await db.query<{
    jobId: number;
    at: Date;
    direction: number | null;
    datasetId: number | null;
  }>(
    `SELECT wanted.job_id AS "jobId", latest.event_time AS at, d.kind AS direction, d.dataset_id AS "datasetId"
     FROM unnest($1::int[]) AS wanted(job_id)
     CROSS JOIN LATERAL (
       SELECT s.event_hash, s.event_time FROM job_sightings s
       WHERE s.job_id = wanted.job_id AND s.kind = 0 AND s.run_uuid IS NULL AND s.event_time <= $2
       ORDER BY s.event_time DESC, s.seq DESC LIMIT 1) latest
     LEFT JOIN dataset_sightings d ON d.job_id = wanted.job_id AND d.kind IN (0, 1)
       AND d.event_time = latest.event_time AND d.event_hash = latest.event_hash
     ORDER BY wanted.job_id, d.kind, d.dataset_id`,
    [jobIds, at.toISOString()],
  );
  for (const row of rows) {
    let declaration = result.get(row.jobId);
    if (!declaration) result.set(row.jobId, (declaration = { at: row.at, edges: [] }));
    if (row.direction !== null && row.datasetId !== null) {
      declaration.edges.push({ direction: row.direction, datasetId: row.datasetId });
    }
  }
  return result;
}

/** Runs by uuid with their error messages; unknown uuids are absent. */
export async function runOutcomes(db: Queryable, uuids: readonly string[]): Promise<Map<string, RunOutcome>> {
  if (uuids.length === 0) return new Map();
  const rows = await db.query<OutcomeRow>(
    `SELECT ${OUTCOME_COLUMNS} FROM runs r WHERE r.uuid = ANY($1::uuid[])`,
    [uuids],
  );
  return new Map(rows.map((row) => [row.uuid, outcomeOf(row)]));
}

/** The run that created the current version of each dataset: dataset id -> run uuid (absent when none did). */
export async function currentVersionCreators(
  db: Queryable,
  datasetIds: readonly number[],
): Promise<Map<number, string>> {
  if (datasetIds.length === 0) return new Map();
  const rows = await db.query<{ id: number; run: string }>(
    `SELECT d.id, v.created_by_run::text AS run FROM datasets d JOIN dataset_versions v ON v.id = d.current_version_id
     WHERE d.id = ANY($1::int[]) AND v.created_by_run IS NOT NULL`,
    [datasetIds],
  );
  return new Map(rows.map((row) => [row.id, row.run]));
}

/** A data-quality assertion result, as stored (the fields a producer sent are those of src/model/assertions.ts). */
export interface AssertionRecord extends AssertionResult {
  readonly datasetId: number;
  readonly runUuid: string;
  readonly at: Date;
}

const ASSERTION_COLUMNS = `a.dataset_id AS "datasetId", a.run_uuid::text AS "runUuid", a.identity, a.assertion,
  a.column_name AS column, a.name, a.description, a.success, a.skipped, a.severity, a.expected, a.actual,
  a.event_time AS at`;

/**
 * Where an assertion stands by a time: its newest result and its newest result of a check that ran, and whether
 * it was retired.
 *
 * The retirement rule: a run's results for a dataset are taken as the whole set of checks its job makes on that
 * dataset (a dbt model's tests in one run, a Great Expectations suite, a Kedro run's checks). An assertion is
 * retired once a later run of the job that last reported it reports results for the dataset without it: the test
 * was renamed (dbt names a test after its arguments, so a test fixed by changing it comes back under a new name)
 * or deleted. A retired assertion keeps its history and comes back if a later run reports it again. Skipped
 * results count as reports (the test still exists); results of other jobs do not.
 */
export interface AssertionStatus {
  /** The newest result, of a check that ran or not. */
  readonly reported: AssertionRecord;
  /** The newest result of a check that ran; null when it never ran by then. */
  readonly evaluated: AssertionRecord | null;
  /** The later run of the same job that reported on the dataset without it, and when; null while it stands. */
  readonly retired: { readonly runUuid: string; readonly at: Date } | null;
}

/**
 * Every assertion reported on the datasets by `at` (null: now), with where it stands ({@link AssertionStatus}).
 * One query, whatever the history.
 */
export async function assertionStatuses(
  db: Queryable,
  datasetIds: readonly number[],
  at: Date | null,
): Promise<AssertionStatus[]> {
  if (datasetIds.length === 0) return [];
  // One statement: the newest result of each assertion with the newest report of its job on the dataset, and
  // the newest result of a check that ran.
  type Row = AssertionRecord & {
    job_id: number;
    newest: boolean;
    reportRun: string | null;
    reportAt: Date | null;
  };
  const rows = await db.query<Row>(
    `WITH results AS (
       SELECT a.*, r.job_id FROM dq_assertions a JOIN runs r ON r.uuid = a.run_uuid
       WHERE a.dataset_id = ANY($1::int[]) AND ($2::timestamptz IS NULL OR a.event_time <= $2)),
     reports AS (
       SELECT DISTINCT ON (dataset_id, job_id) dataset_id, job_id, run_uuid, event_time FROM results
       ORDER BY dataset_id, job_id, event_time DESC, run_uuid DESC)
     SELECT latest.*, p.run_uuid::text AS "reportRun", p.event_time AS "reportAt" FROM (
       SELECT DISTINCT ON (a.dataset_id, a.identity) ${ASSERTION_COLUMNS}, a.job_id, true AS newest
       FROM results a ORDER BY a.dataset_id, a.identity, a.event_time DESC, a.run_uuid DESC) latest
     LEFT JOIN reports p ON p.dataset_id = latest."datasetId" AND p.job_id = latest.job_id
     UNION ALL
     SELECT evaluated.*, NULL, NULL FROM (
       SELECT DISTINCT ON (a.dataset_id, a.identity) ${ASSERTION_COLUMNS}, a.job_id, false AS newest
       FROM results a WHERE NOT a.skipped
       ORDER BY a.dataset_id, a.identity, a.event_time DESC, a.run_uuid DESC) evaluated`,
    [datasetIds, at?.toISOString() ?? null],
  );
  const key = (record: AssertionRecord) => `${record.datasetId}\u0000${record.identity}`;
  const evaluated = new Map<string, AssertionRecord>();
  const statuses: AssertionStatus[] = [];
  const strip = ({ newest: _n, reportRun: _r, reportAt: _a, job_id: _j, ...record }: Row): AssertionRecord =>
    record;
  for (const row of rows) if (!row.newest) evaluated.set(key(row), strip(row));
  for (const row of rows) {
    if (!row.newest) continue;
    const reported = strip(row);
    const { reportRun, reportAt } = row;
    const retired =
      reportRun !== null && reportAt !== null && reportRun !== reported.runUuid && reportAt > reported.at
        ? { runUuid: reportRun, at: reportAt }
        : null;
    statuses.push({ reported, evaluated: evaluated.get(key(reported)) ?? null, retired });
  }
  return statuses.sort(
    (a, b) =>
      a.reported.datasetId - b.reported.datasetId ||
      compareText(a.reported.assertion, b.reported.assertion) ||
      compareText(a.reported.column, b.reported.column) ||
      compareText(a.reported.identity, b.reported.identity),
  );
}

/** The failing ones among {@link latestAssertions}. */
export async function latestFailedAssertions(
  db: Queryable,
  datasetIds: readonly number[],
  at: Date,
): Promise<AssertionRecord[]> {
  return (await latestAssertions(db, datasetIds, at)).filter((assertion) => !assertion.success);
}

/**
 * A dataset's quality by `at`: the latest result of a check that ran of each assertion (by identity) that stands
 * ({@link AssertionStatus}: not retired), from any run that reported on it, so that a failing test is not hidden
 * by a later run that checked something else (dbt-ol sends one run per test), nor by a run that skipped it (the
 * data it judged is still the data there). Ordered by dataset, assertion, column and identity.
 */
export async function latestAssertions(
  db: Queryable,
  datasetIds: readonly number[],
  at: Date | null,
): Promise<AssertionRecord[]> {
  const current: AssertionRecord[] = [];
  for (const status of await assertionStatuses(db, datasetIds, at)) {
    if (status.retired === null && status.evaluated !== null) current.push(status.evaluated);
  }
  return current;
}

/**
 * The results of each assertion on a dataset (by `at` unless null), newest first per identity, at most
 * `perAssertion` of each: the history behind {@link latestAssertions} (its first row per identity is the latest).
 */
export function assertionHistory(
  db: Queryable,
  datasetId: number,
  at: Date | null,
  perAssertion: number,
): Promise<AssertionRecord[]> {
  return db.query<AssertionRecord>(
    `SELECT "datasetId", "runUuid", identity, assertion, "column", name, description, success, skipped, severity,
            expected, actual, at FROM (
       SELECT ${ASSERTION_COLUMNS},
              row_number() OVER (PARTITION BY a.identity ORDER BY a.event_time DESC, a.run_uuid DESC) AS n
       FROM dq_assertions a
       WHERE a.dataset_id = $1 AND ($2::timestamptz IS NULL OR a.event_time <= $2)) ranked
     WHERE n <= $3 ORDER BY identity, at DESC, "runUuid" DESC`,
    [datasetId, at?.toISOString() ?? null, perAssertion],
  );
}

/** The assertions the runs reported, ordered by run, dataset, assertion, column and identity. */
export function runAssertions(db: Queryable, uuids: readonly string[]): Promise<AssertionRecord[]> {
  if (uuids.length === 0) return Promise.resolve([]);
  return db.query<AssertionRecord>(
    `SELECT ${ASSERTION_COLUMNS} FROM dq_assertions a WHERE a.run_uuid = ANY($1::uuid[])
     ORDER BY a.run_uuid, a.dataset_id, a.assertion, a.column_name, a.identity`,
    [uuids],
  );
}

/** A completed write of a dataset: the writing job and when its run ended. */
export interface WriteRecord {
  readonly jobId: number;
  readonly endedAt: Date;
}

/**
 * When the last `perJob` COMPLETED runs that executed (a skipped or reused run refreshed nothing) of each job that
 * wrote each dataset ended, by `at` (out of the dataset's
 * last 1,000 completed writes), newest first: dataset id -> writes. Datasets no completed run wrote are absent.
 */
export async function completedWrites(
  db: Queryable,
  datasetIds: readonly number[],
  at: Date,
  perJob: number,
): Promise<Map<number, WriteRecord[]>> {
  const result = new Map<number, WriteRecord[]>();
  if (datasetIds.length === 0) return result;
  const rows = await db.query<WriteRecord & { id: number }>(
    `SELECT wanted.id, w.job_id AS "jobId", w.ended_at AS "endedAt" FROM unnest($1::int[]) AS wanted(id)
     CROSS JOIN LATERAL (
       SELECT job_id, ended_at FROM (
         SELECT job_id, ended_at, row_number() OVER (PARTITION BY job_id ORDER BY ended_at DESC) AS n FROM (
           SELECT r.job_id, r.ended_at FROM run_io io JOIN runs r ON r.uuid = io.run_uuid
           WHERE io.dataset_id = wanted.id AND io.direction = 1 AND r.state = 'COMPLETED' AND r.ended_at <= $2
             AND ${EXECUTED}
           ORDER BY r.ended_at DESC LIMIT 1000) recent) ranked
       WHERE n <= $3) w
     ORDER BY wanted.id, w.ended_at DESC, w.job_id`,
    [datasetIds, at.toISOString(), perJob],
  );
  for (const { id, ...write } of rows) {
    let list = result.get(id);
    if (!list) result.set(id, (list = []));
    list.push(write);
  }
  return result;
}

/** A dataset version with the fields of the version before it. */
export interface VersionChangeRecord {
  readonly datasetId: number;
  readonly version: string;
  readonly createdAt: Date;
  readonly createdByRun: string | null;
  readonly fields: unknown[];
  readonly previousVersion: string | null;
  readonly previousFields: unknown[] | null;
}

/**
 * The versions of each dataset created after its `since` time (null: ever) and by `at`, each with the
 * version before it, oldest first per dataset.
 */
export function versionsCreatedSince(
  db: Queryable,
  datasetIds: readonly number[],
  since: readonly (Date | null)[],
  at: Date,
): Promise<VersionChangeRecord[]> {
  if (datasetIds.length === 0) return Promise.resolve([]);
  return db.query<VersionChangeRecord>(
    `SELECT v."datasetId", v.version, v."createdAt", v."createdByRun", v.fields, v."previousVersion",
            v."previousFields"
     FROM unnest($1::int[], $2::timestamptz[]) AS wanted(id, since)
     CROSS JOIN LATERAL (
       SELECT dataset_id AS "datasetId", version::text AS version, created_at AS "createdAt",
              created_by_run::text AS "createdByRun", fields,
              lag(version::text) OVER w AS "previousVersion", lag(fields) OVER w AS "previousFields"
       FROM dataset_versions WHERE dataset_id = wanted.id AND created_at <= $3
       WINDOW w AS (ORDER BY created_at, id)) v
     WHERE wanted.since IS NULL OR v."createdAt" > wanted.since
     ORDER BY v."datasetId", v."createdAt", v.version`,
    [datasetIds, since.map((time) => time?.toISOString() ?? null), at.toISOString()],
  );
}

/** A version of a dataset. */
export interface VersionRecord {
  readonly version: string;
  readonly createdAt: Date;
  readonly fields: unknown[];
}

/** The newest `count` versions of each dataset, newest first: dataset id -> versions (absent: none). */
export async function newestVersions(
  db: Queryable,
  datasetIds: readonly number[],
  count: number,
): Promise<Map<number, VersionRecord[]>> {
  const result = new Map<number, VersionRecord[]>();
  if (datasetIds.length === 0) return result;
  const rows = await db.query<VersionRecord & { datasetId: number }>(
    `SELECT wanted.id AS "datasetId", v.version, v."createdAt", v.fields FROM unnest($1::int[]) AS wanted(id)
     CROSS JOIN LATERAL (
       SELECT version::text AS version, created_at AS "createdAt", fields, id FROM dataset_versions
       WHERE dataset_id = wanted.id ORDER BY created_at DESC, id DESC LIMIT $2) v
     ORDER BY wanted.id, v."createdAt" DESC, v.id DESC`,
    [datasetIds, count],
  );
  for (const { datasetId, ...version } of rows) {
    let list = result.get(datasetId);
    if (!list) result.set(datasetId, (list = []));
    list.push(version);
  }
  return result;
}

/** Versions of a dataset by uuid; unknown ones are absent. */
export async function versionsByUuid(
  db: Queryable,
  datasetId: number,
  versions: readonly string[],
): Promise<Map<string, VersionRecord>> {
  if (versions.length === 0) return new Map();
  const rows = await db.query<VersionRecord>(
    `SELECT version::text AS version, created_at AS "createdAt", fields FROM dataset_versions
     WHERE dataset_id = $1 AND version::text = ANY($2::text[])`,
    [datasetId, versions.map((version) => version.toLowerCase())],
  );
  return new Map(rows.map((row) => [row.version, row]));
}

/** A dataset a run read or wrote, with the version it saw and the run's input or output facets for it. */
export interface RunIoDetail {
  readonly runUuid: string;
  readonly direction: number;
  readonly datasetId: number;
  readonly version: string | null;
  readonly fields: unknown[] | null;
  readonly facets: Record<string, unknown>;
}

/**
 * The datasets each run read and wrote, ordered by run, direction and dataset id: the versions and facets the
 * run API shows (see runIo), with each version's fields.
 */
export async function runIoDetails(db: Queryable, uuids: readonly string[]): Promise<RunIoDetail[]> {
  const io = [...(await runIo(db, uuids)).values()].flat();
  if (io.length === 0) return [];
  const fields = new Map(
    (
      await db.query<{ version: string; fields: unknown[] }>(
        'SELECT version::text AS version, fields FROM dataset_versions WHERE version = ANY($1::uuid[])',
        [[...new Set(io.map((entry) => entry.version))]],
      )
    ).map((row) => [row.version, row.fields]),
  );
  return io
    .map((entry) => ({
      runUuid: entry.runUuid,
      direction: entry.direction,
      datasetId: entry.datasetId,
      version: entry.version,
      // A version no event described (a dataset named before any schema) has no fields.
      fields: fields.get(entry.version) ?? [],
      facets: entry.facets,
    }))
    .sort(
      (a, b) => compareText(a.runUuid, b.runUuid) || a.direction - b.direction || a.datasetId - b.datasetId,
    );
}
