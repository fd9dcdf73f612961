import type { Db, Queryable } from './db.js';
import type { ModelState } from './model-state.js';

/**
 * The retention window: deletes the raw events and history older than a cutoff without changing the present or
 * any answer about a time at or after the cutoff (see the README's "Retention"). The rules, per table:
 *
 * - An event older than the cutoff is deleted with everything derived from it alone (its sightings) unless it is
 *   a witness: the newest sighting before the cutoff of a fact that time travel or the present reads as "the
 *   newest one by then" (each edge, a dataset's version, lifecycle, modification, row count, each facet name,
 *   each input facet, a job's parent and JobEvent), or the earliest and first-arrived one (creation times).
 *   Every answer of store/queries/history.ts and read-model/lineage-graph.ts is a newest or an earliest over the
 *   sightings up to a time, so it is the same at any time from the cutoff on.
 * - A run goes only whole, and only when all its events are older than the cutoff, none is a witness, and the
 *   same holds for all its child runs; it is kept whole otherwise. Each job keeps its latest run (the present
 *   one), the one that ended last before the cutoff (the version's source then) and the completed one that
 *   started last (the lineage cutoff then); each assertion keeps the run of its newest result before the cutoff.
 *   With a run go its run_io, run facets, quality assertions and metrics.
 * - Facet values, dataset versions and job versions go once nothing left names them and they are not current.
 * - Datasets, jobs, namespaces, sources, current edges (lineage_edges), job_cutoffs, column lineage (which has no
 *   history of its own), tags and owners are the present and are never deleted. event_counts follows the events.
 * - Incidents resolved before the cutoff go with their signals, transitions and deliveries; open ones stay.
 *
 * Deletion runs in chunks, each one transaction on the writer with its commit-feed entry, so ingest waits at most
 * one chunk and the writer's mirror and the followers never see half of one.
 */

/** What a pass deleted, by table. */
export type RetentionCounts = Record<string, number>;

/** The outcome of one pass. */
export interface RetentionResult {
  /** Events older than this were considered. */
  readonly cutoff: Date;
  readonly deleted: RetentionCounts;
  /** Transactions the deletion took. */
  readonly chunks: number;
  readonly durationMs: number;
}

/**
 * Runs a deleting step on the writer, when no batch is being written, in one transaction with its commit-feed
 * entry; `apply` then updates the writer's mirror once the step has committed (see IngestPipeline.maintain).
 */
export type RetentionStep = <T>(
  fn: (tx: Queryable) => Promise<T>,
  apply: (result: T, state: ModelState) => void,
) => Promise<T>;

/** Options of {@link retentionPass}. */
export interface RetentionPassOptions {
  /** Candidate events per chunk. @default 500 */
  readonly chunkEvents?: number;
  /** Datasets or jobs (by id) per chunk of the witness search and the sweeps. @default 500 */
  readonly chunkEntities?: number;
  /** Asked between chunks: a pass stops early (what it deleted stays deleted) once it answers true. */
  readonly stopped?: () => boolean;
}

/** The first eventTime whose history is complete (none before any pass). */
export async function historyFrom(db: Queryable): Promise<Date | undefined> {
  const [row] = await db.query<{ at: Date }>('SELECT history_from AS at FROM retention_horizon');
  return row?.at;
}

const HOUR_BIN = `date_bin('1 hour', event_time, TIMESTAMPTZ '2000-01-01T00:00:00Z')`;

/** The newest row of `from` per `by` (ordered by `order`), as one arm of a union of witnesses. */
const newest = (from: string, by: string, order: string, where = 'true', hash = 'event_hash') =>
  `(SELECT DISTINCT ON (${by}) ${hash} AS event_hash FROM ${from} WHERE ${where} ORDER BY ${by}, ${order})`;

/** Witnesses among the dataset sightings of datasets `$1` <= id < `$2` older than `$3`. */
const DATASET_WITNESSES_SQL = `
  WITH s AS MATERIALIZED (
    SELECT dataset_id, kind, event_hash, event_time, seq, job_id, version_id, defines_version, modifies, facets,
           io_facets
    FROM dataset_sightings WHERE dataset_id >= $1 AND dataset_id < $2 AND event_time < $3)
  INSERT INTO retention_keep (event_hash)
  SELECT DISTINCT event_hash FROM (
    ${[
      newest('s', 'dataset_id', 'event_time, seq'),
      newest('s', 'dataset_id', 'seq'),
      newest('s', 'dataset_id', 'event_time DESC, seq DESC', 'kind <> 3'),
      newest('s', 'dataset_id', 'event_time DESC, seq DESC', 'modifies'),
      newest(
        's',
        'dataset_id',
        'event_time DESC, seq DESC',
        `modifies AND jsonb_typeof(io_facets->'outputStatistics'->'rowCount') = 'number'`,
      ),
      newest('s', 'dataset_id', 'event_time DESC, seq DESC', 'defines_version'),
      newest(
        's JOIN dataset_versions v ON v.id = s.version_id',
        's.dataset_id',
        's.event_time DESC, s.seq DESC',
        's.defines_version AND v.lifecycle_state IS NOT NULL',
        's.event_hash',
      ),
      newest(
        's',
        'dataset_id, kind, job_id',
        'event_time DESC, seq DESC',
        'job_id IS NOT NULL AND kind IN (0, 1)',
      ),
      newest(
        's CROSS JOIN LATERAL jsonb_each_text(s.facets) f(name, hash)',
        's.dataset_id, f.name',
        's.event_time DESC, f.hash::bigint DESC',
        'true',
        's.event_hash',
      ),
      newest(
        's CROSS JOIN LATERAL jsonb_object_keys(s.io_facets) f(key)',
        's.dataset_id, f.key',
        's.event_time DESC, s.seq DESC',
        `s.kind = 0 AND s.io_facets <> '{}'::jsonb`,
        's.event_hash',
      ),
      // The run of each assertion's newest result before the cutoff (kept whole, as runs are), and of its newest
      // result of a check that ran (an assertion stands as that: assertionStatuses in queries/analysis.ts).
      `(SELECT e.hash FROM (SELECT DISTINCT ON (dataset_id, identity) run_uuid FROM dq_assertions
          WHERE dataset_id >= $1 AND dataset_id < $2 AND event_time < $3
          ORDER BY dataset_id, identity, event_time DESC, run_uuid DESC) a
        JOIN events e ON e.run_uuid = a.run_uuid)`,
      `(SELECT e.hash FROM (SELECT DISTINCT ON (dataset_id, identity) run_uuid FROM dq_assertions
          WHERE dataset_id >= $1 AND dataset_id < $2 AND event_time < $3 AND NOT skipped
          ORDER BY dataset_id, identity, event_time DESC, run_uuid DESC) a
        JOIN events e ON e.run_uuid = a.run_uuid)`,
    ].join('\n    UNION ALL ')}
  ) w
  ON CONFLICT DO NOTHING`;

/** Witnesses among the job sightings and runs of jobs `$1` <= id < `$2`, before `$3`. */
const JOB_WITNESSES_SQL = `
  WITH s AS MATERIALIZED (
    SELECT job_id, kind, event_hash, event_time, seq, run_uuid, parent_job_id, facets
    FROM job_sightings WHERE job_id >= $1 AND job_id < $2 AND event_time < $3),
  old AS (SELECT job_id, uuid, ended_at, created_at, terminals_seen,
                 (execution IS NULL OR execution = 'executed') AS executed FROM runs
          WHERE job_id >= $1 AND job_id < $2 AND updated_at < $3),
  kept_runs AS (
    -- The present latest run (RUN_ORDER in queries/runs.ts), and the latest that executed (root cause's).
    (SELECT DISTINCT ON (job_id) uuid FROM runs WHERE job_id >= $1 AND job_id < $2
     ORDER BY job_id, COALESCE(started_at, first_running_at, ended_at) DESC NULLS LAST, created_at DESC, uuid)
    UNION
    (SELECT DISTINCT ON (job_id) uuid FROM runs WHERE job_id >= $1 AND job_id < $2
       AND (execution IS NULL OR execution = 'executed')
     ORDER BY job_id, COALESCE(started_at, first_running_at, ended_at) DESC NULLS LAST, created_at DESC, uuid)
    UNION
    -- The runs that ended last before the cutoff (the job's version then), of all and of those that executed ...
    SELECT o.uuid FROM old o JOIN (SELECT job_id, max(ended_at) AS at FROM old GROUP BY job_id) m
      ON m.job_id = o.job_id AND m.at = o.ended_at
    UNION
    SELECT o.uuid FROM old o JOIN (SELECT job_id, max(ended_at) AS at FROM old WHERE executed GROUP BY job_id) m
      ON m.job_id = o.job_id AND m.at = o.ended_at AND o.executed
    UNION
    -- ... and the completed ones that started last (its lineage cutoff then).
    SELECT o.uuid FROM old o JOIN (SELECT job_id, max(created_at) AS at FROM old WHERE terminals_seen & 1 = 1
                                   GROUP BY job_id) m
      ON m.job_id = o.job_id AND m.at = o.created_at AND o.terminals_seen & 1 = 1)
  INSERT INTO retention_keep (event_hash)
  SELECT DISTINCT event_hash FROM (
    ${[
      newest('s', 'job_id', 'event_time, seq'),
      newest('s', 'job_id', 'seq'),
      newest('s', 'job_id', 'event_time DESC, seq DESC', 'kind = 0'),
      newest('s', 'job_id', 'event_time DESC, seq DESC', 'kind = 0 AND parent_job_id IS NOT NULL'),
      newest('s', 'job_id', 'event_time DESC, seq DESC', 'kind = 0 AND run_uuid IS NULL'),
      newest(
        's CROSS JOIN LATERAL jsonb_each_text(s.facets) f(name, hash)',
        's.job_id, f.name',
        's.event_time DESC, f.hash::bigint DESC',
        'true',
        's.event_hash',
      ),
      '(SELECT e.hash FROM kept_runs k JOIN events e ON e.run_uuid = k.uuid)',
    ].join('\n    UNION ALL ')}
  ) w
  ON CONFLICT DO NOTHING`;

/**
 * Of the runs `$1`, those to delete, with their descendants: a run goes with its family when every run in it has
 * all its events older than `$2`, stored by the start of the pass (id <= `$3`: a late event arriving meanwhile
 * keeps its run until the next pass) and not witnesses.
 */
const DOOMED_RUNS_SQL = `
  WITH RECURSIVE family AS (
    SELECT r AS root, r AS uuid FROM unnest($1::uuid[]) r
    UNION
    SELECT f.root, c.uuid FROM family f JOIN runs c ON c.parent_run_uuid = f.uuid),
  blocked AS (
    SELECT DISTINCT f.root FROM family f JOIN events e ON e.run_uuid = f.uuid
    WHERE e.event_time >= $2 OR e.id > $3 OR EXISTS (SELECT 1 FROM retention_keep k WHERE k.event_hash = e.hash))
  SELECT DISTINCT uuid::text AS uuid FROM family WHERE root NOT IN (SELECT root FROM blocked)`;

/**
 * Deletes the runs `$1` (whole) and the events `$2` (without a run), with all they alone gave: sightings, run_io,
 * run facets, assertions, metrics, raw events and their counts. Kind-3 sightings (a dataset named only as a
 * column-lineage input) carry neither job nor run; the dataset sweep removes those of deleted events.
 */
const DELETE_CHUNK_SQL = `
  WITH
  job_events AS (
    SELECT j.id AS job_id, e.hash FROM events e JOIN namespaces n ON n.name = e.job_namespace
    JOIN jobs j ON j.namespace_id = n.id AND j.name = e.job_name
    WHERE e.hash = ANY($2::uuid[]) AND e.kind = 'job'),
  dataset_events AS (
    SELECT d.id AS dataset_id, e.hash FROM events e JOIN namespaces n ON n.name = e.job_namespace
    JOIN datasets d ON d.namespace_id = n.id AND d.name = e.job_name
    WHERE e.hash = ANY($2::uuid[]) AND e.kind = 'dataset'),
  js_run AS (DELETE FROM job_sightings s WHERE s.run_uuid = ANY($1::uuid[]) AND s.kind = 0
             RETURNING s.job_id, s.parent_job_id, s.event_hash),
  js_job AS (DELETE FROM job_sightings s USING job_events j
             WHERE s.job_id = j.job_id AND s.kind = 0 AND s.event_hash = j.hash
             RETURNING s.job_id, s.parent_job_id, s.event_hash),
  -- The sighting an event gave the job of the parent run it named (derive.ts: the job's own when the same).
  js_parent AS (DELETE FROM job_sightings s USING (SELECT * FROM js_run UNION ALL SELECT * FROM js_job) k
                WHERE s.job_id = COALESCE(k.parent_job_id, k.job_id) AND s.kind = 1 AND s.event_hash = k.event_hash
                RETURNING 1),
  ds_run AS (DELETE FROM dataset_sightings s WHERE s.run_uuid = ANY($1::uuid[]) RETURNING 1),
  ds_job AS (DELETE FROM dataset_sightings s USING job_events j
             WHERE s.job_id = j.job_id AND s.kind IN (0, 1) AND s.event_hash = j.hash RETURNING 1),
  ds_dataset AS (DELETE FROM dataset_sightings s USING dataset_events d
                 WHERE s.dataset_id = d.dataset_id AND s.kind = 2 AND s.event_hash = d.hash RETURNING 1),
  io AS (DELETE FROM run_io WHERE run_uuid = ANY($1::uuid[]) RETURNING 1),
  rf AS (DELETE FROM run_facets WHERE run_uuid = ANY($1::uuid[]) RETURNING 1),
  dqa AS (DELETE FROM dq_assertions WHERE run_uuid = ANY($1::uuid[]) RETURNING 1),
  dqm AS (DELETE FROM dq_metrics WHERE run_uuid = ANY($1::uuid[]) RETURNING 1),
  ru AS (DELETE FROM runs WHERE uuid = ANY($1::uuid[]) RETURNING 1),
  ev AS (DELETE FROM events WHERE run_uuid = ANY($1::uuid[]) OR hash = ANY($2::uuid[])
         RETURNING ${HOUR_BIN} AS hour, kind),
  counts AS (UPDATE event_counts t SET count = t.count - c.n
             FROM (SELECT hour, kind, count(*) AS n FROM ev GROUP BY hour, kind) c
             WHERE t.hour = c.hour AND t.kind = c.kind RETURNING 1)
  SELECT (SELECT count(*) FROM ev)::int AS events,
         ((SELECT count(*) FROM js_run) + (SELECT count(*) FROM js_job) + (SELECT count(*) FROM js_parent))::int
           AS job_sightings,
         ((SELECT count(*) FROM ds_run) + (SELECT count(*) FROM ds_job) + (SELECT count(*) FROM ds_dataset))::int
           AS dataset_sightings,
         (SELECT count(*) FROM io)::int AS run_io, (SELECT count(*) FROM rf)::int AS run_facets,
         (SELECT count(*) FROM dqa)::int AS dq_assertions, (SELECT count(*) FROM dqm)::int AS dq_metrics,
         (SELECT count(*) FROM ru)::int AS runs, (SELECT count(*) FROM counts)::int AS event_counts_updated`;

/**
 * Runs known only as a parent (no event of their own) among `$1`, once no run and no sighting names them and their
 * job has another run (RUN_ORDER puts such a run last, so it is never the latest of a job that has another).
 */
const ORPHAN_PARENTS_SQL = `
  DELETE FROM runs p WHERE p.uuid = ANY($1::uuid[])
    AND NOT EXISTS (SELECT 1 FROM events e WHERE e.run_uuid = p.uuid)
    AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_run_uuid = p.uuid)
    AND NOT EXISTS (SELECT 1 FROM job_sightings s WHERE s.run_uuid = p.uuid)
    AND NOT EXISTS (SELECT 1 FROM dataset_sightings s WHERE s.run_uuid = p.uuid)
    AND EXISTS (SELECT 1 FROM runs o WHERE o.job_id = p.job_id AND o.uuid <> p.uuid)
  RETURNING p.uuid::text AS uuid`;

/** Kind-3 sightings of datasets `$1` <= id < `$2` whose event is gone (a synthetic backfill row has seq 0). */
const ORPHAN_COLUMN_SIGHTINGS_SQL = `
  WITH gone AS (DELETE FROM dataset_sightings s
    WHERE s.dataset_id >= $1 AND s.dataset_id < $2 AND s.kind = 3 AND s.event_time < $3 AND s.seq > 0
      AND NOT EXISTS (SELECT 1 FROM events e WHERE e.hash = s.event_hash)
    RETURNING 1)
  SELECT count(*)::int AS n FROM gone`;

/**
 * Facet values of owners `$1` <= id < `$2`, last given before `$3`, that no sighting names any more; never the
 * present value of a name (the newest row), which a store holding only older events than its witness still has.
 */
const facetSweepSql = (values: string, sightings: string, column: string) => `
  WITH refs AS (
    SELECT DISTINCT s.${column} AS id, f.name, f.hash::bigint AS hash
    FROM ${sightings} s CROSS JOIN LATERAL jsonb_each_text(s.facets) f(name, hash)
    WHERE s.${column} >= $1 AND s.${column} < $2),
  gone AS (
    DELETE FROM ${values} v
    WHERE v.${column} >= $1 AND v.${column} < $2 AND v.event_time < $3
      AND NOT EXISTS (SELECT 1 FROM refs r WHERE r.id = v.${column} AND r.name = v.name AND r.hash = v.hash)
      AND EXISTS (SELECT 1 FROM ${values} n WHERE n.${column} = v.${column} AND n.name = v.name
                  AND (n.event_time, n.hash) > (v.event_time, v.hash))
    RETURNING 1)
  SELECT count(*)::int AS gone FROM gone`;

/** Dataset versions of datasets `$1` <= id < `$2`, created before `$3`, not current and named by nothing left. */
const DATASET_VERSIONS_SWEEP_SQL = `
  DELETE FROM dataset_versions v USING datasets d
  WHERE v.dataset_id >= $1 AND v.dataset_id < $2 AND d.id = v.dataset_id AND v.created_at < $3
    AND v.id IS DISTINCT FROM d.current_version_id
    AND NOT EXISTS (SELECT 1 FROM dataset_sightings s WHERE s.dataset_id = v.dataset_id AND s.version_id = v.id)
    AND NOT EXISTS (SELECT 1 FROM run_io io WHERE io.dataset_id = v.dataset_id AND io.dataset_version_id = v.id)
  RETURNING v.version::text AS version`;

/** Job versions of jobs `$1` <= id < `$2`, created before `$3`, not current and named by no run or sighting. */
const JOB_VERSIONS_SWEEP_SQL = `
  DELETE FROM job_versions v USING jobs j
  WHERE v.job_id >= $1 AND v.job_id < $2 AND j.id = v.job_id AND v.created_at < $3
    AND v.id IS DISTINCT FROM j.current_version_id
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_version_id = v.id)
    AND NOT EXISTS (SELECT 1 FROM job_sightings s WHERE s.job_id = v.job_id AND s.version_id = v.id)
  RETURNING v.version::text AS version`;

function add(counts: RetentionCounts, row: Record<string, unknown> | undefined): void {
  for (const [table, value] of Object.entries(row ?? {})) {
    if (table.endsWith('_updated')) continue;
    counts[table] = (counts[table] ?? 0) + Number(value);
  }
}

/**
 * One retention pass: deletes what lies before `cutoff` by the rules above. `step` runs each deleting chunk on
 * the writer (IngestPipeline.maintain); the witness search before it only reads the history and writes
 * retention_keep, so it runs beside ingest.
 */
export async function retentionPass(
  db: Db,
  cutoff: Date,
  step: RetentionStep,
  options: RetentionPassOptions = {},
): Promise<RetentionResult> {
  const started = performance.now();
  const chunkEvents = options.chunkEvents ?? 500;
  const chunkEntities = options.chunkEntities ?? 500;
  const stopped = options.stopped ?? (() => false);
  const deleted: RetentionCounts = {};
  let chunks = 0;
  const at = cutoff.toISOString();
  // Time travel before the cutoff is refused from now on, before anything is deleted.
  await step(
    (tx) =>
      tx.query(
        `INSERT INTO retention_horizon (history_from) VALUES ($1)
         ON CONFLICT (single) DO UPDATE SET history_from = GREATEST(retention_horizon.history_from, EXCLUDED.history_from)`,
        [at],
      ),
    () => undefined,
  );
  await db.query('DELETE FROM retention_keep');
  const [ends] = await db.query<{ event: string | null; dataset: number | null; job: number | null }>(
    `SELECT (SELECT max(id) FROM events)::text AS event, (SELECT max(id) FROM datasets) AS dataset,
            (SELECT max(id) FROM jobs) AS job`,
  );
  const maxEvent = ends?.event ?? '0';
  const ranges = (max: number | null) => {
    const list: [number, number][] = [];
    for (let lo = 0; lo <= (max ?? -1); lo += chunkEntities) list.push([lo, lo + chunkEntities]);
    return list;
  };
  const datasetRanges = ranges(ends?.dataset ?? null);
  const jobRanges = ranges(ends?.job ?? null);
  for (const [lo, hi] of datasetRanges) {
    if (stopped()) break;
    await db.query(DATASET_WITNESSES_SQL, [lo, hi, at]);
  }
  for (const [lo, hi] of jobRanges) {
    if (stopped()) break;
    await db.query(JOB_WITNESSES_SQL, [lo, hi, at]);
  }
  // Candidates in eventTime order (the events_event_time index), from the oldest.
  let after: { time: string; id: string } | undefined;
  while (!stopped()) {
    const candidates = await db.query<{ id: string; time: string; hash: string; run_uuid: string | null }>(
      `SELECT id::text AS id, event_time::text AS time, hash::text AS hash, run_uuid::text AS run_uuid FROM events
       WHERE event_time < $1 AND id <= $2 AND ($3::timestamptz IS NULL OR (event_time, id) > ($3, $4::bigint))
       ORDER BY event_time, id LIMIT ${chunkEvents}`,
      [at, maxEvent, after?.time ?? null, after?.id ?? '0'],
    );
    const last = candidates.at(-1);
    if (last === undefined) break;
    after = { time: last.time, id: last.id };
    const runs = [...new Set(candidates.flatMap((row) => (row.run_uuid === null ? [] : [row.run_uuid])))];
    const loose = candidates.filter((row) => row.run_uuid === null).map((row) => row.hash);
    /** What of the chunk goes: whole runs, and events without a run that are no witnesses. */
    const decide = async (q: Queryable) => ({
      doomed:
        runs.length === 0
          ? []
          : (await q.query<{ uuid: string }>(DOOMED_RUNS_SQL, [runs, at, maxEvent])).map((row) => row.uuid),
      events:
        loose.length === 0
          ? []
          : (
              await q.query<{ hash: string }>(
                `SELECT h::text AS hash FROM unnest($1::uuid[]) h
                 WHERE NOT EXISTS (SELECT 1 FROM retention_keep k WHERE k.event_hash = h)`,
                [loose],
              )
            ).map((row) => row.hash),
    });
    // Asked first beside ingest: a chunk of witnesses takes no turn on the writer (nor a commit-feed entry, which
    // would drop every replica's cached answers). Ingest can only make less deletable meanwhile, never more.
    const seen = await decide(db);
    if (seen.doomed.length === 0 && seen.events.length === 0) continue;
    const counts = await step(
      async (tx) => {
        // Decided again under the writer's lock: no batch can add an event or a child run meanwhile.
        const { doomed, events } = await decide(tx);
        const counts: RetentionCounts = {};
        if (doomed.length === 0 && events.length === 0) return { counts, runs: [] as string[] };
        const parents = (
          await tx.query<{ uuid: string }>(
            `SELECT DISTINCT parent_run_uuid::text AS uuid FROM runs
             WHERE uuid = ANY($1::uuid[]) AND parent_run_uuid IS NOT NULL AND NOT parent_run_uuid = ANY($1::uuid[])`,
            [doomed],
          )
        ).map((row) => row.uuid);
        const [row] = await tx.query(DELETE_CHUNK_SQL, [doomed, events]);
        add(counts, row);
        const orphans =
          parents.length === 0
            ? []
            : (await tx.query<{ uuid: string }>(ORPHAN_PARENTS_SQL, [parents])).map((r) => r.uuid);
        counts.runs = (counts.runs ?? 0) + orphans.length;
        return { counts, runs: [...doomed, ...orphans] };
      },
      (result, state) => {
        for (const uuid of result.runs) state.runs.delete(uuid);
      },
    );
    chunks++;
    add(deleted, counts.counts);
  }
  for (const [lo, hi] of datasetRanges) {
    if (stopped()) break;
    const result = await step(
      async (tx) => {
        const [orphans] = await tx.query<{ n: number }>(ORPHAN_COLUMN_SIGHTINGS_SQL, [lo, hi, at]);
        const [facets] = await tx.query<{ gone: number }>(
          facetSweepSql('dataset_facets', 'dataset_sightings', 'dataset_id'),
          [lo, hi, at],
        );
        const versions = await tx.query<{ version: string }>(DATASET_VERSIONS_SWEEP_SQL, [lo, hi, at]);
        return {
          counts: {
            dataset_sightings: orphans?.n ?? 0,
            dataset_facets: facets?.gone ?? 0,
            dataset_versions: versions.length,
          },
          versions: versions.map((row) => row.version),
        };
      },
      (result, state) => {
        for (const version of result.versions) state.datasetVersions.delete(version);
      },
    );
    chunks++;
    add(deleted, result.counts);
  }
  for (const [lo, hi] of jobRanges) {
    if (stopped()) break;
    const result = await step(
      async (tx) => {
        const [facets] = await tx.query<{ gone: number }>(
          facetSweepSql('job_facets', 'job_sightings', 'job_id'),
          [lo, hi, at],
        );
        const versions = await tx.query<{ version: string }>(JOB_VERSIONS_SWEEP_SQL, [lo, hi, at]);
        return {
          counts: { job_facets: facets?.gone ?? 0, job_versions: versions.length },
          versions: versions.map((row) => row.version),
        };
      },
      (result, state) => {
        for (const version of result.versions) state.jobVersions.delete(version);
      },
    );
    chunks++;
    add(deleted, result.counts);
  }
  const emptyHours = await step(
    (tx) =>
      tx.query<{ n: number }>(
        'WITH gone AS (DELETE FROM event_counts WHERE count <= 0 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      ),
    () => undefined,
  );
  add(deleted, { event_counts: emptyHours[0]?.n ?? 0 });
  // Incidents resolved before the cutoff, with their signals, transitions and deliveries (open ones stay,
  // however old: they are the present).
  const oldIncidents = await step(
    (tx) =>
      tx.query<{ n: number }>(
        `WITH gone AS (DELETE FROM incidents WHERE status = 'resolved' AND resolved_at < $1 RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [cutoff],
      ),
    () => undefined,
  );
  add(deleted, { incidents: oldIncidents[0]?.n ?? 0 });
  // Owner declarations replaced before the cutoff (the one in force at the cutoff stays, and all since).
  const oldDeclarations = await step(
    (tx) =>
      tx.query<{ n: number }>(
        `WITH gone AS (DELETE FROM owner_declarations o WHERE EXISTS (
           SELECT 1 FROM owner_declarations l
           WHERE l.kind = o.kind AND l.node_id = o.node_id AND l.declared_at < $1
             AND (l.declared_at, l.id) > (o.declared_at, o.id)) RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [cutoff],
      ),
    () => undefined,
  );
  add(deleted, { owner_declarations: oldDeclarations[0]?.n ?? 0 });
  await db.query('DELETE FROM retention_keep');
  for (const table of Object.keys(deleted)) if (deleted[table] === 0) delete deleted[table];
  return { cutoff, deleted, chunks, durationMs: Math.round(performance.now() - started) };
}
