import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoScenario } from '../src/cli/demo-scenario.js';
import type { Queryable } from '../src/store/db.js';
import { retentionPass, type RetentionStep } from '../src/store/retention.js';
import type { HeadwaterServer } from '../src/servers/server.js';
import {
  opsScenario,
  runEvents,
  runId,
  schema,
  schemaScenario,
  streamScenario,
} from './analysis-scenarios.js';
import { NS, day, historyScenario } from './history-scenario.js';
import { backends, startApp } from './helpers/backends.js';
import { overSocket, type Send } from './helpers/api.js';
import { spawnServer } from './helpers/child-server.js';

/** The cutoff: day 3 of the history scenario, so that its retirements, late events and parent run straddle it. */
const CUTOFF = day(3, '00:00:00');
const DAILY = 'daily';
const dailyDate = (n: number) => new Date(Date.parse('2024-05-25T00:00:00Z') + n * 86_400_000);
const at = (n: number, time: string) => `${dailyDate(n).toISOString().slice(0, 10)}T${time}Z`;
const doc = (text: string) => ({
  documentation: {
    _producer: 'https://example.com/headwater/retention-test',
    _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json',
    description: text,
  },
});

/**
 * daily: one job copying daily.in to daily.out, every day from 2024-05-25 (n = 0) to 2024-06-05 (n = 11), with
 * the same schema; its documentation changes on n = 3, and the run of n = 4 fails. Of the runs before the cutoff
 * (n = 0-8) only the first (the earliest sightings) and the last (the newest of everything) answer anything
 * inside the window: n = 1-7 go.
 */
function dailyScenario(): Record<string, unknown>[] {
  const events: unknown[] = [];
  for (let n = 0; n < 12; n++) {
    events.push(
      ...runEvents({
        namespace: DAILY,
        job: 'copy',
        runId: runId(5, n),
        start: at(n, '03:00:00'),
        end: at(n, '03:20:00'),
        ends: n === 4 ? 'FAIL' : 'COMPLETE',
        ...(n === 4 ? { error: 'quota' } : {}),
        jobFacets: doc(n < 3 ? 'copies in' : 'copies in to out'),
        inputs: [{ name: 'in', facets: { schema: schema([['id', 'int']]) } }],
        outputs: [
          {
            name: 'out',
            facets: { schema: schema([['id', 'int']]) },
            outputFacets: { outputStatistics: { rowCount: 100 + n } },
          },
        ],
      }),
    );
  }
  return events as Record<string, unknown>[];
}

const EVENTS: Record<string, unknown>[] = [
  ...demoScenario().events,
  ...opsScenario(),
  ...schemaScenario(),
  ...streamScenario(),
  ...historyScenario(),
  ...dailyScenario(),
] as Record<string, unknown>[];

/** Times asked about inside the window, and one before it. */
const INSIDE = [CUTOFF, day(3, '02:15:00'), day(4, '12:00:00'), '2025-03-12T12:00:00.000Z'];
const BEFORE = day(2, '12:00:00');

const stepOf =
  (server: HeadwaterServer): RetentionStep =>
  (fn, apply) =>
    server.pipeline.maintain(fn, apply);

async function post(send: Send, events: readonly unknown[]): Promise<void> {
  for (let i = 0; i < events.length; i += 500) {
    const response = await send('/api/v1/lineage/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(events.slice(i, i + 500)),
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
  }
}

async function get(send: Send, route: string, query: Record<string, string> = {}) {
  const search = new URLSearchParams(query).toString();
  const response = await send(`${route}${search ? `?${search}` : ''}`);
  const body: unknown = await response.json();
  return { status: response.status, body };
}

interface Node {
  namespace: string;
  name: string;
}

async function entities(send: Send): Promise<{ datasets: Node[]; jobs: Node[] }> {
  const { body } = await get(send, '/api/v1/namespaces');
  const datasets: Node[] = [];
  const jobs: Node[] = [];
  for (const { name } of (body as { namespaces: { name: string }[] }).namespaces) {
    const ns = encodeURIComponent(name);
    datasets.push(
      ...(
        (await get(send, `/api/v1/namespaces/${ns}/datasets`, { limit: '1000' })).body as { datasets: Node[] }
      ).datasets,
    );
    jobs.push(
      ...((await get(send, `/api/v1/namespaces/${ns}/jobs`, { limit: '1000' })).body as { jobs: Node[] })
        .jobs,
    );
  }
  return { datasets, jobs };
}

const nodePath = (kind: 'datasets' | 'jobs', node: Node) =>
  `/api/v1/namespaces/${encodeURIComponent(node.namespace)}/${kind}/${encodeURIComponent(node.name)}`;

/**
 * The answers about every dataset and job, now and as of each time given: the dataset, the job (its latest run,
 * not the list of its newest runs, which loses the runs deleted), lineage and column lineage.
 */
async function answers(send: Send, times: readonly (string | undefined)[]) {
  const { datasets, jobs } = await entities(send);
  const result: Record<string, unknown> = {};
  for (const time of times) {
    const asOf: Record<string, string> = time === undefined ? {} : { asOf: time };
    const ask = async (key: string, route: string, query: Record<string, string>) => {
      const { status, body } = await get(send, route, { ...query, ...asOf });
      if (body && typeof body === 'object' && 'latestRuns' in body)
        delete (body as Record<string, unknown>).latestRuns;
      result[`${time ?? 'now'} ${key}`] = { status, body };
    };
    for (const dataset of datasets) {
      const nodeId = `dataset:${dataset.namespace}:${dataset.name}`;
      await ask(nodeId, nodePath('datasets', dataset), {});
      await ask(`lineage ${nodeId}`, '/api/v1/lineage', { nodeId, depth: '20' });
      await ask(`columns ${nodeId}`, '/api/v1/column-lineage', {
        nodeId,
        depth: '20',
        withDownstream: 'true',
      });
    }
    for (const job of jobs) {
      const nodeId = `job:${job.namespace}:${job.name}`;
      await ask(nodeId, nodePath('jobs', job), {});
      await ask(`lineage ${nodeId}`, '/api/v1/lineage', { nodeId, depth: '20' });
    }
  }
  return result;
}

/**
 * Every table the rules touch, with ids replaced by names (the ids a store gives depend on what it was fed) and
 * arrival numbers left out, sorted: two stores with the same content give equal snapshots.
 */
async function snapshot(db: Queryable): Promise<Record<string, string[]>> {
  const ds = (column: string) =>
    `(SELECT nn.name || ':' || dd.name FROM datasets dd JOIN namespaces nn ON nn.id = dd.namespace_id
      WHERE dd.id = ${column})`;
  const job = (column: string) =>
    `(SELECT nn.name || ':' || jj.name FROM jobs jj JOIN namespaces nn ON nn.id = jj.namespace_id
      WHERE jj.id = ${column})`;
  const rank = (owner: string) =>
    `rank() OVER (PARTITION BY ${owner}, name ORDER BY event_time DESC, hash DESC) AS rank`;
  const tables: Record<string, string> = {
    events: `SELECT hash, kind, event_type, event_time, run_uuid, job_namespace, job_name, body FROM events`,
    event_counts: 'SELECT hour, kind, count FROM event_counts',
    dataset_sightings: `SELECT ${ds('s.dataset_id')} AS dataset, kind, event_hash, event_time, ${job('s.job_id')} AS job,
      run_uuid, (SELECT version FROM dataset_versions v WHERE v.id = s.version_id) AS version, defines_version,
      modifies, facets, io_facets FROM dataset_sightings s`,
    job_sightings: `SELECT ${job('s.job_id')} AS job, kind, event_hash, event_time, run_uuid, event_type,
      (SELECT version FROM job_versions v WHERE v.id = s.version_id) AS version, ${job('s.parent_job_id')} AS parent,
      facets, run_facets FROM job_sightings s`,
    runs: `SELECT uuid, external_id, ${job('r.job_id')} AS job, parent_run_uuid,
      (SELECT version FROM job_versions v WHERE v.id = r.job_version_id) AS version, state, transitioned_at,
      started_at, ended_at, first_running_at, nominal_start_time, nominal_end_time, created_at, updated_at,
      code_location, code_location_at, terminals_seen FROM runs r`,
    run_io: `SELECT run_uuid, direction, ${ds('io.dataset_id')} AS dataset,
      (SELECT version FROM dataset_versions v WHERE v.id = io.dataset_version_id) AS version, facets, event_time
      FROM run_io io`,
    // A facet value's row holds when it last became the value of its name (the writer skips repeats), so a store
    // fed fewer events may hold another time: what readers use is which value is the newest, its rank.
    run_facets: `SELECT run_uuid, name, hash, facet, ${rank('run_uuid')} FROM run_facets`,
    job_facets: `SELECT ${job('f.job_id')} AS job, name, hash, facet, ${rank('job_id')} FROM job_facets f`,
    dataset_facets: `SELECT ${ds('f.dataset_id')} AS dataset, name, hash, facet, ${rank('dataset_id')}
      FROM dataset_facets f`,
    dq_assertions: `SELECT run_uuid, ${ds('a.dataset_id')} AS dataset, identity, assertion, column_name, name,
      success, severity, expected, actual, event_time FROM dq_assertions a`,
    dq_metrics: `SELECT run_uuid, ${ds('m.dataset_id')} AS dataset, metrics, event_time FROM dq_metrics m`,
    // A kept version keeps the time and run that first made it (see the README's rules).
    dataset_versions: `SELECT ${ds('v.dataset_id')} AS dataset, version, fields, lifecycle_state FROM dataset_versions v`,
    job_versions: `SELECT ${job('v.job_id')} AS job, version, location FROM job_versions v`,
    datasets: `SELECT ${ds('d.id')} AS dataset, (SELECT name FROM sources s WHERE s.id = d.source_id) AS source,
      description, (SELECT version FROM dataset_versions v WHERE v.id = d.current_version_id) AS version,
      current_version_time, lifecycle_state, last_modified_at, is_hidden, created_at FROM datasets d`,
    jobs: `SELECT ${job('j.id')} AS job, ${job('j.parent_job_id')} AS parent, type, integration, job_type,
      description, location, (SELECT version FROM job_versions v WHERE v.id = j.current_version_id) AS version,
      current_version_time, is_hidden, created_at FROM jobs j`,
    lineage_edges: `SELECT ${job('e.job_id')} AS job, direction, ${ds('e.dataset_id')} AS dataset, last_seen
      FROM lineage_edges e`,
    job_cutoffs: `SELECT ${job('c.job_id')} AS job, key, first FROM job_cutoffs c`,
  };
  const result: Record<string, string[]> = {};
  for (const [table, sql] of Object.entries(tables)) {
    const rows = await db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM (${sql}) t`);
    result[table] = rows.map((row) => row.row).sort();
  }
  return result;
}

/** The raw events a store holds, in arrival order, as posted. */
async function storedEvents(db: Queryable): Promise<unknown[]> {
  const rows = await db.query<{ body: string }>('SELECT body FROM events ORDER BY id');
  return rows.map((row) => JSON.parse(row.body) as unknown);
}

const columnLineageRows = (db: Queryable) =>
  snapshotOf(
    db,
    `SELECT (SELECT d.name FROM datasets d WHERE d.id = output_dataset_id) AS output, output_field,
            (SELECT d.name FROM datasets d WHERE d.id = input_dataset_id) AS input, input_field,
            transformation_type, transformation_subtype, first_seen, last_seen FROM column_lineage`,
  );

async function snapshotOf(db: Queryable, sql: string): Promise<string[]> {
  const rows = await db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM (${sql}) t`);
  return rows.map((row) => row.row).sort();
}

describe.each(backends())('retention on the $name store', (backend) => {
  let main: Awaited<ReturnType<typeof startApp>>;
  let before: Record<string, unknown>;
  let beforeColumns: string[];
  let beforeHashes: { hash: string; time: string }[];
  let deleted: Record<string, number>;

  beforeAll(async () => {
    main = await startApp(backend);
    await post(main.request, EVENTS);
    before = await answers(main.request, [undefined, ...INSIDE]);
    beforeColumns = await columnLineageRows(main.server.db);
    beforeHashes = await main.server.db.query(
      'SELECT hash::text AS hash, event_time::text AS time FROM events',
    );
    const result = await retentionPass(main.server.db, new Date(CUTOFF), stepOf(main.server), {
      chunkEvents: 40,
      chunkEntities: 7,
    });
    deleted = result.deleted;
  }, 240_000);
  afterAll(async () => {
    await main?.stop();
  });

  it('deletes only events older than the cutoff, and keeps every newer one', async () => {
    const left = new Set(
      (await main.server.db.query<{ hash: string }>('SELECT hash::text AS hash FROM events')).map(
        (r) => r.hash,
      ),
    );
    const gone = beforeHashes.filter((event) => !left.has(event.hash));
    expect(gone.length).toBeGreaterThan(20);
    expect(deleted.events).toBe(gone.length);
    for (const event of gone) expect(Date.parse(event.time)).toBeLessThan(Date.parse(CUTOFF));
    const newer = beforeHashes.filter((event) => Date.parse(event.time) >= Date.parse(CUTOFF));
    expect(newer.every((event) => left.has(event.hash))).toBe(true);
  });

  it('deletes the runs that answer nothing inside the window, and keeps those that do', async () => {
    const runs = await main.server.db.query<{ uuid: string }>(
      `SELECT r.uuid::text AS uuid FROM runs r JOIN jobs j ON j.id = r.job_id JOIN namespaces n ON n.id = j.namespace_id
       WHERE n.name = $1 ORDER BY r.created_at`,
      [DAILY],
    );
    // n = 0 (the earliest), 8 (the newest before the cutoff) and 9-11 (inside the window).
    expect(runs.map((run) => run.uuid)).toEqual([0, 8, 9, 10, 11].map((n) => runId(5, n)));
    const { status } = await get(main.request, `/api/v1/jobs/runs/${runId(5, 4)}`);
    expect(status).toBe(404);
  });

  it('holds exactly what a store fed only the events it kept would hold', async () => {
    const replay = await startApp(backend);
    try {
      await post(replay.request, await storedEvents(main.server.db));
      expect(await snapshot(main.server.db)).toEqual(await snapshot(replay.server.db));
      expect(await answers(main.request, [undefined, ...INSIDE])).toEqual(
        await answers(replay.request, [undefined, ...INSIDE]),
      );
    } finally {
      await replay.stop();
    }
  }, 240_000);

  it('leaves the present, the current versions and time travel inside the window unchanged', async () => {
    expect(await answers(main.request, [undefined, ...INSIDE])).toEqual(before);
    // Column lineage has no history of its own: it is the present, kept whole.
    expect(await columnLineageRows(main.server.db)).toEqual(beforeColumns);
  }, 120_000);

  it('refuses time travel to before the cutoff with 410 and says why', async () => {
    for (const [route, query] of [
      ['/api/v1/lineage', { nodeId: `dataset:${NS}:tbl`, asOf: BEFORE }],
      [nodePath('datasets', { namespace: NS, name: 'tbl' }), { asOf: BEFORE }],
      [nodePath('jobs', { namespace: NS, name: 'load' }), { asOf: BEFORE }],
      ['/api/v1/column-lineage', { nodeId: `dataset:${NS}:rep`, asOf: BEFORE }],
      ['/api/v1/analysis/graph-diff', { nodeId: `dataset:${NS}:rep`, from: BEFORE, to: day(4, '00:00:00') }],
      ['/api/v1/compliance/journey', { nodeId: `dataset:${NS}:tbl`, from: BEFORE }],
    ] as const) {
      const { status, body } = await get(main.request, route, query);
      expect({ route, status }).toEqual({ route, status: 410 });
      expect(body).toMatchObject({ code: 410, error: 'HISTORY_EXPIRED' });
      expect(JSON.stringify(body)).toContain(new Date(CUTOFF).toISOString());
    }
    expect(
      (await get(main.request, '/api/v1/lineage', { nodeId: `dataset:${NS}:tbl`, asOf: CUTOFF })).status,
    ).toBe(200);
  });

  it('finds nothing more to delete on a second pass', async () => {
    const again = await retentionPass(main.server.db, new Date(CUTOFF), stepOf(main.server));
    expect(again.deleted).toEqual({});
  }, 120_000);
});

describe.each(backends())('retention while ingest goes on, on the $name store', (backend) => {
  it('deletes in chunks between batches, and loses none of them', async () => {
    const main = await startApp(backend);
    try {
      await post(main.request, EVENTS);
      // New runs of the daily job inside the window, and late events of new runs before the cutoff, throughout.
      let stop = false;
      let batches = 0;
      const posted: Record<string, unknown>[] = [];
      const ingest = (async () => {
        for (let n = 100; !stop; n++) {
          const late = n % 3 === 0;
          const events = runEvents({
            namespace: DAILY,
            job: late ? 'late' : 'copy',
            runId: runId(6, n),
            start: late ? day(1, '05:00:00') : `2024-07-${String((n % 28) + 1).padStart(2, '0')}T01:00:00Z`,
            end: late ? day(1, '05:10:00') : `2024-07-${String((n % 28) + 1).padStart(2, '0')}T01:10:00Z`,
            inputs: [{ name: 'in' }],
            outputs: [{ name: late ? 'late_out' : 'out' }],
          }) as Record<string, unknown>[];
          await post(main.request, events);
          posted.push(...events);
          batches++;
        }
      })();
      const result = await retentionPass(main.server.db, new Date(CUTOFF), stepOf(main.server), {
        chunkEvents: 10,
        chunkEntities: 3,
      });
      stop = true;
      await ingest;
      expect(result.chunks).toBeGreaterThan(10);
      expect(batches).toBeGreaterThan(2);
      const left = new Set(
        (await main.server.db.query<{ hash: string }>('SELECT hash::text AS hash FROM events')).map(
          (r) => r.hash,
        ),
      );
      const postedInside = posted.filter(
        (event) => Date.parse(event.eventTime as string) >= Date.parse(CUTOFF),
      );
      const [count] = await main.server.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM events WHERE run_uuid = ANY($1::uuid[])`,
        [[...new Set(postedInside.map((event) => (event.run as { runId: string }).runId))]],
      );
      expect(count!.n).toBe(postedInside.length);
      expect(left.size).toBeGreaterThan(0);
      // What is left is what a store fed only those events holds: nothing half-deleted, the mirror in step.
      const replay = await startApp(backend);
      try {
        await post(replay.request, await storedEvents(main.server.db));
        expect(await snapshot(main.server.db)).toEqual(await snapshot(replay.server.db));
      } finally {
        await replay.stop();
      }
      // The writer's mirror is in step with the store: more events of the kept and new runs go in as they should.
      await post(main.request, dailyScenario());
      const runs = await get(main.request, `/api/v1/namespaces/${DAILY}/jobs/copy/runs`, { limit: '100' });
      expect(runs.status).toBe(200);
    } finally {
      await main.stop();
    }
  }, 300_000);
});

describe('headwater serve --retention-days', () => {
  it('runs passes in the background, counts them in /metrics and refuses time travel before its cutoff', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-retention-'));
    const child = await spawnServer([
      '--data-dir',
      dir,
      '--retention-days',
      '30',
      '--retention-interval',
      '1s',
      '--log-level',
      'info',
    ]);
    const served = overSocket(child.url);
    try {
      const now = Date.now();
      const iso = (ms: number) => new Date(ms).toISOString();
      const daysAgo = (d: number) => now - d * 86_400_000;
      const events: unknown[] = [];
      for (let n = 0; n < 6; n++) {
        events.push(
          ...runEvents({
            namespace: 'proc',
            job: 'nightly',
            runId: runId(7, n),
            start: iso(daysAgo(60 - n)),
            end: iso(daysAgo(60 - n) + 60_000),
            inputs: [{ name: 'in' }],
            outputs: [{ name: 'out' }],
          }),
        );
      }
      events.push(
        ...runEvents({
          namespace: 'proc',
          job: 'nightly',
          runId: runId(7, 99),
          start: iso(daysAgo(1)),
          end: iso(daysAgo(1) + 60_000),
          inputs: [{ name: 'in' }],
          outputs: [{ name: 'out' }],
        }),
      );
      await post(served, events);
      const deadline = Date.now() + 90_000;
      let metrics = '';
      for (;;) {
        metrics = await (await fetch(`${child.url}/metrics`)).text();
        const rows = /headwater_retention_deleted_rows_total\{table="runs"\} (\d+)/.exec(metrics);
        if (rows && Number(rows[1]) > 0) break;
        if (Date.now() > deadline)
          throw new Error(`no retention pass deleted runs:\n${metrics}\n${child.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      // Runs 1-4 go: 0 is the earliest, 5 the newest before the cutoff, 99 inside the window.
      expect(metrics).toMatch(/headwater_retention_deleted_rows_total\{table="runs"\} 4\b/);
      expect(metrics).toMatch(/headwater_retention_passes_total\{outcome="completed"\} [1-9]/);
      expect(metrics).toMatch(/headwater_retention_last_run_timestamp_seconds [1-9]/);
      const runs = (await get(served, '/api/v1/namespaces/proc/jobs/nightly/runs', { limit: '100' }))
        .body as {
        runs: { id: string }[];
      };
      expect(runs.runs.map((run) => run.id).sort()).toEqual([0, 5, 99].map((n) => runId(7, n)).sort());
      const old = await get(served, '/api/v1/lineage', {
        nodeId: 'dataset:proc:out',
        asOf: iso(daysAgo(40)),
      });
      expect(old.status).toBe(410);
      expect(child.output()).toMatch(/retention: deleted \d+ rows older than/);
      const audit = await get(served, '/api/v1/audit', { action: 'retention.' });
      expect(JSON.stringify(audit.body)).toContain('system:retention');
    } finally {
      child.process.kill('SIGTERM');
      await child.exited;
      await rm(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
