import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCommand } from '../src/cli/demo.js';
import { demoScenario, type DemoRunEvent } from '../src/cli/demo-scenario.js';
import type { CommandIo } from '../src/cli/http.js';
import { ingestCommand } from '../src/cli/ingest.js';
import { createValidator } from '../src/accept/validate.js';
import { backends, startServer } from './helpers/backends.js';
import { runCli } from './helpers/cli.js';

/** Output captured from a command run in-process. */
function captureIo(options: { tty?: boolean } = {}) {
  let out = '';
  let err = '';
  const io: CommandIo = {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text), isTTY: options.tty ?? false, columns: 120 },
    env: {},
  };
  return { io, out: () => out, err: () => err };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const WAREHOUSE = 'postgres://warehouse.acme.internal:5432';
const ds = {
  rawOrders: 'dataset:s3://acme-raw:orders',
  rawCustomers: 'dataset:s3://acme-raw:customers',
  stagingOrders: `dataset:${WAREHOUSE}:analytics.staging.orders`,
  stagingCustomers: `dataset:${WAREHOUSE}:analytics.staging.customers`,
  mart: `dataset:${WAREHOUSE}:analytics.marts.revenue_daily`,
  dashboard: 'dataset:looker://acme:dashboards.revenue',
};
const job = {
  loadOrders: 'job:acme-airflow:daily_etl.load_orders',
  loadCustomers: 'job:acme-airflow:daily_etl.load_customers',
  dbt: 'job:acme-dbt:dbt.revenue_daily',
  refresh: 'job:acme-bi:bi.refresh_revenue_dashboard',
};

function runEvent(i: number, overrides: Record<string, unknown> = {}) {
  return {
    eventType: 'COMPLETE',
    eventTime: `2024-01-01T00:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`,
    producer: 'https://example.com/cli-test',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` },
    job: { namespace: 'cli-test', name: `job${i}` },
    inputs: [],
    outputs: [{ namespace: 'cli-test', name: `ds${i}` }],
    ...overrides,
  };
}

describe('the demo scenario', () => {
  it('is the same events every time, and another end date is another week with other runs', () => {
    const first = demoScenario();
    expect(JSON.stringify(demoScenario())).toBe(JSON.stringify(first));
    expect(first.days).toEqual(['2025-03-10', '2025-03-11', '2025-03-12', '2025-03-13', '2025-03-14']);
    const other = demoScenario({ endDate: '2025-03-21' });
    const runIds = (events: typeof first.events) =>
      new Set(events.flatMap((event) => ('run' in event ? [event.run.runId] : [])));
    expect(runIds(first.events).size).toBe(25);
    expect([...runIds(other.events)].filter((id) => runIds(first.events).has(id))).toEqual([]);
    expect(() => demoScenario({ endDate: '2025-02-30' })).toThrow(/YYYY-MM-DD/);
  });

  it('is valid under the official OpenLineage schemas (strict mode, formats too), facets included', () => {
    const validator = createValidator({ strict: 'formats' });
    const problems = demoScenario().events.flatMap((event, index) => {
      const result = validator.validate(JSON.parse(JSON.stringify(event)));
      return result.ok ? [] : [{ index, issues: result.issues }];
    });
    expect(problems).toEqual([]);
  });
});

describe.each(backends())('headwater demo and ingest on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startServer>>;
  let demoOutput: string;
  const get = async <T>(pathAndQuery: string): Promise<T> => {
    const response = await fetch(`${ctx.url}${pathAndQuery}`);
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  const eventCount = async () =>
    (await get<{ totalCount: number }>('/api/v1/events/lineage?limit=0&kind=run&kind=dataset&kind=job'))
      .totalCount;
  const lineage = async (nodeId: string, direction: string) => {
    const body = await get<{
      graph: { id: string; inEdges: { origin: string; destination: string }[] }[];
    }>(`/api/v1/lineage?nodeId=${encodeURIComponent(nodeId)}&depth=20&direction=${direction}`);
    return {
      nodes: body.graph.map((node) => node.id),
      edges: body.graph.flatMap((node) =>
        node.inEdges.map((edge) => `${edge.origin} -> ${edge.destination}`),
      ),
    };
  };

  beforeAll(async () => {
    ctx = await startServer(backend);
    const { io, out, err } = captureIo();
    const code = await demoCommand(['--url', ctx.url], io);
    expect({ code, err: err() }).toEqual({ code: 0, err: '' });
    demoOutput = out();
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('loads the scenario through the HTTP API and says what it sent', async () => {
    expect(demoOutput).toContain(`Loaded the Headwater demo into ${ctx.url}:`);
    expect(demoOutput).toContain('60 events sent, 60 new');
    expect(demoOutput).toContain(
      '25 runs of 5 jobs, 6 datasets, 6 namespaces, 2025-03-10 to 2025-03-14 (UTC)',
    );
    expect(demoOutput).toContain(
      `${ctx.url}/api/v1/lineage?nodeId=dataset:${WAREHOUSE}:analytics.marts.revenue_daily&depth=20`,
    );
    expect(await eventCount()).toBe(60);
    const kinds = await ctx.server.db.query<{ kind: string; count: number }>(
      'SELECT kind, count(*)::int AS count FROM events GROUP BY kind ORDER BY kind',
    );
    expect(kinds).toEqual([
      { kind: 'dataset', count: 10 },
      { kind: 'run', count: 50 },
    ]);
  });

  it('links the dashboard, upstream, to the S3 files through every job', async () => {
    const upstream = await lineage(ds.dashboard, 'upstream');
    expect(upstream.nodes).toEqual([
      ds.dashboard,
      ds.mart,
      ds.stagingCustomers,
      ds.stagingOrders,
      ds.rawCustomers,
      ds.rawOrders,
      job.loadCustomers,
      job.loadOrders,
      job.refresh,
      job.dbt,
    ]);
    expect(upstream.edges.sort()).toEqual(
      [
        `${ds.rawOrders} -> ${job.loadOrders}`,
        `${job.loadOrders} -> ${ds.stagingOrders}`,
        `${ds.rawCustomers} -> ${job.loadCustomers}`,
        `${job.loadCustomers} -> ${ds.stagingCustomers}`,
        `${ds.stagingOrders} -> ${job.dbt}`,
        `${ds.stagingCustomers} -> ${job.dbt}`,
        `${job.dbt} -> ${ds.mart}`,
        `${ds.mart} -> ${job.refresh}`,
        `${job.refresh} -> ${ds.dashboard}`,
      ].sort(),
    );
    const downstream = await lineage(ds.rawOrders, 'downstream');
    expect(downstream.nodes.sort()).toEqual(
      [ds.rawOrders, job.loadOrders, ds.stagingOrders, job.dbt, ds.mart, job.refresh, ds.dashboard].sort(),
    );
  });

  it('records 25 runs with their final states, the tasks under their DAG run of the same day', async () => {
    const runs = await ctx.server.db.query(
      `SELECT n.name AS namespace, j.name AS job, r.state, count(*)::int AS runs
         FROM runs r JOIN jobs j ON j.id = r.job_id JOIN namespaces n ON n.id = j.namespace_id
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    expect(runs).toEqual([
      { namespace: 'acme-airflow', job: 'daily_etl', state: 'COMPLETED', runs: 4 },
      { namespace: 'acme-airflow', job: 'daily_etl', state: 'FAILED', runs: 1 },
      { namespace: 'acme-airflow', job: 'daily_etl.load_customers', state: 'COMPLETED', runs: 5 },
      { namespace: 'acme-airflow', job: 'daily_etl.load_orders', state: 'COMPLETED', runs: 4 },
      { namespace: 'acme-airflow', job: 'daily_etl.load_orders', state: 'FAILED', runs: 1 },
      { namespace: 'acme-bi', job: 'bi.refresh_revenue_dashboard', state: 'COMPLETED', runs: 5 },
      { namespace: 'acme-dbt', job: 'dbt.revenue_daily', state: 'COMPLETED', runs: 5 },
    ]);
    const [children] = await ctx.server.db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM runs c
         JOIN runs p ON p.uuid = c.parent_run_uuid JOIN jobs pj ON pj.id = p.job_id
        WHERE pj.name = 'daily_etl' AND p.nominal_start_time = c.nominal_start_time`,
    );
    expect(children?.count).toBe(10);
    const jobs = await ctx.server.db.query(
      `SELECT j.name, j.integration, j.job_type, p.name AS parent
         FROM jobs j LEFT JOIN jobs p ON p.id = j.parent_job_id ORDER BY j.name`,
    );
    expect(jobs).toEqual([
      { name: 'bi.refresh_revenue_dashboard', integration: 'LOOKER', job_type: 'EXTRACT', parent: null },
      { name: 'daily_etl', integration: 'AIRFLOW', job_type: 'DAG', parent: null },
      { name: 'daily_etl.load_customers', integration: 'AIRFLOW', job_type: 'TASK', parent: 'daily_etl' },
      { name: 'daily_etl.load_orders', integration: 'AIRFLOW', job_type: 'TASK', parent: 'daily_etl' },
      { name: 'dbt.revenue_daily', integration: 'DBT', job_type: 'MODEL', parent: null },
    ]);
  });

  it('has the one failed load, with its error message, on the last day', async () => {
    const { events } = await get<{ events: DemoRunEvent[] }>(
      '/api/v1/events/lineage?limit=100&after=2025-03-14T00:00:00Z&sortDirection=asc&kind=run&kind=dataset&kind=job',
    );
    const failed = events.filter((event) => event.eventType === 'FAIL');
    expect(failed.map((event) => [event.job.name, event.eventTime])).toEqual([
      ['daily_etl.load_orders', '2025-03-14T02:01:42.000Z'],
      ['daily_etl', '2025-03-14T02:03:05.000Z'],
    ]);
    const failedLoad = failed[0]!;
    expect(failedLoad.run.facets.errorMessage).toMatchObject({
      programmingLanguage: 'python',
      message: expect.stringContaining('duplicate key value violates unique constraint "orders_pkey"'),
      stackTrace: expect.stringContaining('psycopg2.errors.UniqueViolation'),
    });
    expect(demoOutput).toContain(`acme-airflow daily_etl.load_orders FAILED (run ${failedLoad.run.runId})`);
    const rows = await ctx.server.db.query(
      `SELECT state, to_char(ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS ended FROM runs WHERE uuid = $1`,
      [failedLoad.run.runId],
    );
    expect(rows).toEqual([{ state: 'FAILED', ended: '2025-03-14 02:01:42' }]);
    // The downstream runs of that day still ran, after the failure, on the table the load did not update.
    expect(
      events
        .filter((event) => event.eventType === 'COMPLETE' && event.eventTime > failedLoad.eventTime)
        .map((event) => event.job.name),
    ).toEqual(['daily_etl.load_customers', 'dbt.revenue_daily', 'bi.refresh_revenue_dashboard']);
  });

  it('keeps two versions of staging orders: discount_amount appears on 2025-03-12', async () => {
    const versions = await ctx.server.db.query<{ fields: { name: string }[]; created: string }>(
      `SELECT v.fields, to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS created
         FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id
        WHERE d.name = 'analytics.staging.orders' ORDER BY v.created_at`,
    );
    const base = ['order_id', 'customer_id', 'status', 'amount', 'currency', 'ordered_at', '_loaded_at'];
    expect(
      versions.map((v) => ({ created: v.created, fields: v.fields.map((field) => field.name) })),
    ).toEqual([
      { created: '2025-03-10 02:00:30', fields: base },
      { created: '2025-03-12 02:00:30', fields: [...base, 'discount_amount'] },
    ]);
  });

  it('stores the quality results (one failing assertion) and the column lineage of the mart', async () => {
    const failing = await ctx.server.db.query(
      `SELECT d.name AS dataset, a.assertion, a.column_name, a.expected, a.actual,
              to_char(a.event_time AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day
         FROM dq_assertions a JOIN datasets d ON d.id = a.dataset_id WHERE NOT a.success`,
    );
    expect(failing).toEqual([
      {
        dataset: 'analytics.staging.orders',
        assertion: 'freshness',
        column_name: '_loaded_at',
        expected: '<= 24h',
        actual: '25h 55m',
        day: '2025-03-14',
      },
    ]);
    const [assertions] = await ctx.server.db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM dq_assertions',
    );
    expect(assertions?.count).toBe(35);
    const grossRevenue = await ctx.server.db.query(
      `SELECT i.name AS dataset, c.input_field, c.transformation_type AS type, c.transformation_subtype AS subtype
         FROM column_lineage c JOIN datasets o ON o.id = c.output_dataset_id JOIN datasets i ON i.id = c.input_dataset_id
        WHERE o.name = 'analytics.marts.revenue_daily' AND c.output_field = 'gross_revenue'
        ORDER BY 1, 2, 3, 4`,
    );
    expect(grossRevenue).toEqual([
      {
        dataset: 'analytics.staging.customers',
        input_field: 'region',
        type: 'INDIRECT',
        subtype: 'GROUP_BY',
      },
      { dataset: 'analytics.staging.orders', input_field: 'amount', type: 'DIRECT', subtype: 'AGGREGATION' },
      {
        dataset: 'analytics.staging.orders',
        input_field: 'ordered_at',
        type: 'INDIRECT',
        subtype: 'GROUP_BY',
      },
      { dataset: 'analytics.staging.orders', input_field: 'status', type: 'INDIRECT', subtype: 'FILTER' },
    ]);
  });

  it('stores nothing new when the built CLI runs the demo again', async () => {
    const { code, stdout, stderr } = await runCli(['demo', '--url', ctx.url]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('60 events sent, 0 new');
    expect(await eventCount()).toBe(60);
    const [runs] = await ctx.server.db.query<{ count: number }>('SELECT count(*)::int AS count FROM runs');
    expect(runs?.count).toBe(25);
  });

  describe('ingest', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-cli-test-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('reads NDJSON, JSON arrays and single events; reports what failed by file and line or index', async () => {
      const ndjson = path.join(dir, 'events.ndjson');
      const { eventTime: _, ...noTime } = runEvent(1003);
      await writeFile(
        ndjson,
        [runEvent(1001), runEvent(1002)].map((e) => JSON.stringify(e)).join('\n') +
          `\n\n${JSON.stringify(noTime)}\n{"eventType": "START",\n${JSON.stringify(runEvent(1004))}\n`,
      );
      const array = path.join(dir, 'events.json');
      await writeFile(
        array,
        JSON.stringify([runEvent(1005), { ...runEvent(1006), producer: 42 }, runEvent(1007)], null, 2),
      );
      const single = path.join(dir, 'single.json');
      await writeFile(single, JSON.stringify(runEvent(1008), null, 2));
      const before = await eventCount();
      const { io, out, err } = captureIo();
      const code = await ingestCommand(['--url', ctx.url, '--batch-size', '2', ndjson, array, single], io);
      expect({ code, err: err() }).toEqual({ code: 1, err: '' });
      expect(out().split('\n')).toEqual([
        'headwater ingest: 9 events read from 3 files: 6 stored, 3 failed.',
        'Failures:',
        `  ${ndjson}:4: $.eventTime: is required: the time the event occurred, an ISO-8601 date-time such as "2024-05-01T12:30:00.000Z"`,
        expect.stringMatching(new RegExp(`^  ${ndjson}:5: not valid JSON \\(`)),
        `  ${array}[1]: $.producer: must be a non-empty string (a URI naming the code that emitted the event), got 42`,
        '',
      ]);
      expect(await eventCount()).toBe(before + 6);
    });

    it('exits 0 after streaming a large NDJSON file in batches, with a progress bar on a terminal', async () => {
      const file = path.join(dir, 'large.ndjson');
      await writeFile(
        file,
        Array.from({ length: 1200 }, (_, i) => JSON.stringify(runEvent(2000 + i))).join('\n'),
      );
      const before = await eventCount();
      const { io, out, err } = captureIo({ tty: true });
      const code = await ingestCommand([file, '--url', ctx.url, '--batch-size', '250'], io);
      expect(code).toBe(0);
      expect(out()).toBe('headwater ingest: 1,200 events read from 1 file: 1,200 stored, 0 failed.\n');
      expect(err()).toContain('\r');
      expect(err()).toContain('[########################] 100%  1,200 read, 1,200 stored, 0 failed');
      expect(await eventCount()).toBe(before + 1200);
      // Nothing is drawn when stderr is not a terminal (a log file, a pipe).
      const quiet = captureIo();
      expect(await ingestCommand([file, '--url', ctx.url], quiet.io)).toBe(0);
      expect(quiet.err()).toBe('');
      expect(await eventCount()).toBe(before + 1200);
    });

    it('exits 2 naming a missing file, before sending anything', async () => {
      const present = path.join(dir, 'present.ndjson');
      await writeFile(present, JSON.stringify(runEvent(3000)));
      const missing = path.join(dir, 'missing.ndjson');
      const before = await eventCount();
      const { code, stdout, stderr } = await runCli(['ingest', present, missing, '--url', ctx.url]);
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
      expect(stderr).toBe(`headwater ingest: cannot read ${missing}: no such file. Nothing was sent.\n`);
      expect(await eventCount()).toBe(before);
    });

    it('splits batches the server finds too large', async () => {
      const small = await startServer(backend, { maxBodyBytes: 16 * 1024 });
      try {
        const file = path.join(dir, 'split.ndjson');
        await writeFile(
          file,
          Array.from({ length: 200 }, (_, i) => JSON.stringify(runEvent(4000 + i))).join('\n'),
        );
        // One request of all 200 would be over four times the limit: only split requests get through.
        expect((await stat(file)).size).toBeGreaterThan(4 * 16 * 1024);
        const { io, out } = captureIo();
        expect(await ingestCommand([file, '--url', small.url], io)).toBe(0);
        expect(out()).toBe('headwater ingest: 200 events read from 1 file: 200 stored, 0 failed.\n');
        const [events] = await small.server.db.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM events',
        );
        expect(events?.count).toBe(200);
      } finally {
        await small.stop();
      }
    });
  });
});

describe('headwater demo and ingest without a usable server', () => {
  let failing: Server;
  let failingUrl: string;
  beforeAll(async () => {
    failing = createHttpServer((_request, response) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ code: 500, error: 'INTERNAL', message: 'Internal error; see the server log.' }),
      );
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => failing.close(resolve));
  });

  it('exits 1 with what to do when nothing listens at --url', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const { code, stdout, stderr } = await runCli(['demo', '--url', url]);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toBe(
      `headwater demo: cannot reach a Headwater server at ${url} (ECONNREFUSED): start one with \`headwater serve\`, ` +
        'or point --url (or HEADWATER_URL) at a running one.\n',
    );
  });

  it('exits 1 with the server message when the server answers errors', async () => {
    const demo = captureIo();
    expect(await demoCommand(['--url', failingUrl], demo.io)).toBe(1);
    expect(demo.err()).toBe(
      `headwater demo: the server at ${failingUrl} refused a batch of 60 events: HTTP 500: Internal error; see the server log.\n`,
    );
    const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-cli-test-'));
    try {
      const file = path.join(dir, 'events.ndjson');
      await writeFile(file, `${JSON.stringify(runEvent(1))}\n${JSON.stringify(runEvent(2))}\n`);
      const ingest = captureIo();
      expect(await ingestCommand([file, '--url', failingUrl], ingest.io)).toBe(1);
      expect(ingest.out()).toBe(
        'headwater ingest: 2 events read from 1 file: 0 stored, 0 failed, 2 not sent.\n',
      );
      expect(ingest.err()).toContain('headwater ingest: stopped early: the server at');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 for usage errors', async () => {
    const cases: [readonly string[], RegExp][] = [
      [['ingest'], /name at least one file of events/],
      [
        ['ingest', 'x.ndjson', '--batch-size', '0'],
        /--batch-size must be a whole number from 1 to 1000000; got "0"/,
      ],
      [['ingest', 'x.ndjson', '--url', 'ftp://example.com'], /--url must be an http:\/\/ or https:\/\/ URL/],
      [['demo', '--bogus'], /Unknown option '--bogus'/],
      [['demo', '--end-date', '14/03/2025'], /--end-date: the demo end date must be a date as YYYY-MM-DD/],
    ];
    for (const [args, message] of cases) {
      const { io, err } = captureIo();
      const code = await (args[0] === 'demo' ? demoCommand : ingestCommand)(args.slice(1), io);
      expect({ args, code, message: err() }).toEqual({
        args,
        code: 2,
        message: expect.stringMatching(message),
      });
    }
  });
});

describe.each(backends())(
  'headwater demo and ingest against a server without a batch endpoint ($name store)',
  (backend) => {
    let ctx: Awaited<ReturnType<typeof startServer>>;
    // A real server in front of Headwater that, like Marquez, has no POST /api/v1/lineage/batch (404), and
    // forwards everything else.
    let proxy: Server;
    let proxyUrl: string;
    const seen: string[] = [];

    beforeAll(async () => {
      ctx = await startServer(backend);
      proxy = createHttpServer((request, response) => {
        seen.push(`${request.method} ${request.url?.split('?')[0]}`);
        if (request.url?.startsWith('/api/v1/lineage/batch')) {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ code: 404, message: 'HTTP 404 Not Found' }));
          return;
        }
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          void fetch(`${ctx.url}${request.url}`, {
            method: request.method!,
            headers: { 'content-type': request.headers['content-type'] ?? 'application/json' },
            ...(request.method === 'GET' ? {} : { body: Buffer.concat(chunks) }),
          }).then(async (upstream) => {
            response.writeHead(upstream.status, {
              'content-type': upstream.headers.get('content-type') ?? '',
            });
            response.end(Buffer.from(await upstream.arrayBuffer()));
          });
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => proxy.close(resolve));
      await ctx?.stop();
    });

    it('demo falls back to one POST /api/v1/lineage per event and loads everything', async () => {
      const { io, out, err } = captureIo();
      const code = await demoCommand(['--url', proxyUrl], io);
      expect({ code, err: err() }).toEqual({ code: 0, err: '' });
      expect(out()).toContain('60 events sent, 60 new');
      expect(seen.filter((line) => line === 'POST /api/v1/lineage/batch')).toHaveLength(1);
      expect(seen.filter((line) => line === 'POST /api/v1/lineage')).toHaveLength(60);
      const stored = (await (
        await fetch(`${ctx.url}/api/v1/events/lineage?limit=0&kind=run&kind=dataset&kind=job`)
      ).json()) as { totalCount: number };
      expect(stored.totalCount).toBe(60);
    });

    it('ingest falls back too, and reports a refused event by its line', async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-fallback-'));
      try {
        const file = path.join(dir, 'events.ndjson');
        const bad = { ...runEvent(2001), run: {} };
        await writeFile(file, [runEvent(2000), bad, runEvent(2002)].map((e) => JSON.stringify(e)).join('\n'));
        const { io, out } = captureIo();
        const code = await ingestCommand(['--url', proxyUrl, file], io);
        expect(code).toBe(1);
        expect(out()).toContain('headwater ingest: 3 events read from 1 file: 2 stored, 1 failed.');
        expect(out()).toContain(`  ${file}:2: HTTP 422: `);
        expect(out()).toContain('$.run.runId: is required');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  },
);
