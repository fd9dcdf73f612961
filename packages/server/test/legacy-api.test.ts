/**
 * Marquez's legacy write API (sources, datasets, jobs, runs, run transitions), in-process on every backend: the
 * states a legacy run goes through, and that what it makes is served by the read API, the lineage graph and the
 * raw events exactly as what POST /api/v1/lineage makes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetJson } from '../src/api/schemas/dataset.js';
import type { JobJson } from '../src/api/schemas/job.js';
import type { SourceJson } from '../src/api/schemas/namespace.js';
import type { RunJson } from '../src/api/schemas/run.js';
import { createApiKey } from '../src/security/keys.js';
import { backends, startApp } from './helpers/backends.js';
import { checkResponse, documentedRoutes, type DocumentedRoute } from './helpers/openapi.js';

const NS = 'legacy-etl';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LineageNode {
  id: string;
  type: string;
  data: { latestRun?: { id: string; state: string } | null };
  inEdges: { origin: string; destination: string }[];
  outEdges: { origin: string; destination: string }[];
}

describe.each(backends())('Marquez legacy write API, $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let routes: DocumentedRoute[];

  beforeAll(async () => {
    ctx = await startApp(backend);
    routes = await documentedRoutes(ctx.request);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  /** A request in-process; every answer is checked against the OpenAPI document's schema for it. */
  async function call<T>(
    method: 'GET' | 'PUT' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: T; headers: Record<string, unknown> }> {
    const response = await ctx.server.app.inject({
      method,
      url: `/api/v1${path}`,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const parsed = response.body === '' ? undefined : (JSON.parse(response.body) as T);
    checkResponse(routes, method, path, response.statusCode, parsed);
    return { status: response.statusCode, body: parsed as T, headers: response.headers };
  }

  async function ok<T>(method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await call<T>(method, path, body);
    expect({
      path,
      status: response.status,
      body: response.status < 300 ? undefined : response.body,
    }).toEqual({
      path,
      status: method === 'POST' && path.endsWith('/runs') ? 201 : 200,
      body: undefined,
    });
    return response.body;
  }

  const newRun = (job: string, body: Record<string, unknown> = {}) =>
    ok<RunJson>('POST', `/namespaces/${NS}/jobs/${job}/runs`, body);
  const mark = (id: string, action: string, at: string) =>
    ok<RunJson>('POST', `/jobs/runs/${id}/${action}?at=${encodeURIComponent(at)}`);

  it('creates a source, a dataset with its fields, and a job over the datasets', async () => {
    await ok('PUT', `/namespaces/${NS}`, { ownerName: 'me' });
    const source = await ok<SourceJson>('PUT', '/sources/warehouse', {
      type: 'postgresql',
      connectionUrl: 'jdbc:postgresql://db.example:5432/shop',
      description: 'the shop database',
    });
    expect(source).toMatchObject({
      name: 'warehouse',
      type: 'POSTGRESQL',
      connectionUrl: 'jdbc:postgresql://db.example:5432/shop',
      description: 'the shop database',
    });
    expect(await ok<SourceJson>('GET', '/sources/warehouse')).toEqual(source);

    const orders = await ok<DatasetJson>('PUT', `/namespaces/${NS}/datasets/public.orders`, {
      type: 'DB_TABLE',
      physicalName: 'public.orders',
      sourceName: 'warehouse',
      description: 'one row per order',
      fields: [
        { name: 'id', type: 'INTEGER', description: 'the key', tags: ['PII'] },
        { name: 'total', type: 'DECIMAL' },
      ],
      tags: ['gold'],
    });
    expect(orders).toMatchObject({
      id: { namespace: NS, name: 'public.orders' },
      name: 'public.orders',
      sourceName: 'warehouse',
      description: 'one row per order',
      fields: [
        { name: 'id', type: 'INTEGER', description: 'the key', tags: ['PII'] },
        { name: 'total', type: 'DECIMAL', tags: [] },
      ],
      tags: ['gold'],
    });
    // The answer is the read API's: the same dataset as GET gives it, source type kept as declared.
    expect(await ok<DatasetJson>('GET', `/namespaces/${NS}/datasets/public.orders`)).toEqual(orders);
    expect((await ok<SourceJson>('GET', '/sources/warehouse')).type).toBe('POSTGRESQL');
    await ok('PUT', `/namespaces/${NS}/datasets/public.totals`, {
      type: 'DB_TABLE',
      physicalName: 'public.totals',
      sourceName: 'warehouse',
      fields: [{ name: 'day', type: 'DATE' }],
    });

    const job = await ok<JobJson>('PUT', `/namespaces/${NS}/jobs/daily_totals`, {
      type: 'BATCH',
      inputs: [{ namespace: NS, name: 'public.orders' }],
      outputs: [{ namespace: NS, name: 'public.totals' }],
      location: 'https://git.example/etl/daily_totals.py',
      description: 'sums the orders of a day',
    });
    expect(job).toMatchObject({
      id: { namespace: NS, name: 'daily_totals' },
      type: 'BATCH',
      inputs: [{ namespace: NS, name: 'public.orders' }],
      outputs: [{ namespace: NS, name: 'public.totals' }],
      location: 'https://git.example/etl/daily_totals.py',
      description: 'sums the orders of a day',
      latestRun: null,
    });
    expect(await ok<JobJson>('GET', `/namespaces/${NS}/jobs/daily_totals`)).toEqual(job);
  });

  it('a run goes NEW -> RUNNING -> COMPLETED, and shows in the job runs, the run and lineage', async () => {
    const created = await call<RunJson>('POST', `/namespaces/${NS}/jobs/daily_totals/runs`, {
      nominalStartTime: '2024-05-01T00:00:00Z',
      nominalEndTime: '2024-05-02T00:00:00Z',
      args: { day: '2024-05-01' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(id).toMatch(UUID);
    expect(created.headers.location).toMatch(new RegExp(`^http://[^/]+/api/v1/jobs/runs/${id}$`));
    expect(created.body).toMatchObject({
      state: 'NEW',
      startedAt: null,
      endedAt: null,
      nominalStartTime: '2024-05-01T00:00:00.000Z',
      nominalEndTime: '2024-05-02T00:00:00.000Z',
      args: { day: '2024-05-01', nominal_start_time: '2024-05-01T00:00:00Z' },
    });
    expect((await ok<RunJson>('GET', `/jobs/runs/${id}`)).state).toBe('NEW');

    const running = await mark(id, 'start', '2024-05-02T01:00:00Z');
    expect(running).toMatchObject({
      id,
      state: 'RUNNING',
      startedAt: '2024-05-02T01:00:00.000Z',
      endedAt: null,
    });
    const completed = await mark(id, 'complete', '2024-05-02T01:30:00Z');
    expect(completed).toMatchObject({
      id,
      state: 'COMPLETED',
      startedAt: '2024-05-02T01:00:00.000Z',
      endedAt: '2024-05-02T01:30:00.000Z',
      durationMs: 30 * 60_000,
      jobVersion: { namespace: NS, name: 'daily_totals' },
    });
    expect(completed.inputDatasetVersions.map((version) => version.datasetVersionId.name)).toEqual([
      'public.orders',
    ]);
    expect(completed.outputDatasetVersions.map((version) => version.datasetVersionId.name)).toEqual([
      'public.totals',
    ]);
    expect(await ok<RunJson>('GET', `/jobs/runs/${id}`)).toEqual(completed);

    const { runs, totalCount } = await ok<{ runs: RunJson[]; totalCount: number }>(
      'GET',
      `/namespaces/${NS}/jobs/daily_totals/runs`,
    );
    expect({ totalCount, runs: runs.map((run) => [run.id, run.state]) }).toEqual({
      totalCount: 1,
      runs: [[id, 'COMPLETED']],
    });
    expect((await ok<JobJson>('GET', `/namespaces/${NS}/jobs/daily_totals`)).latestRun?.id).toBe(id);

    const { graph } = await ok<{ graph: LineageNode[] }>(
      'GET',
      `/lineage?nodeId=${encodeURIComponent(`job:${NS}:daily_totals`)}&depth=2`,
    );
    const job = graph.find((node) => node.id === `job:${NS}:daily_totals`)!;
    expect(job.data.latestRun).toMatchObject({ id, state: 'COMPLETED' });
    expect(job.inEdges).toEqual([{ origin: `dataset:${NS}:public.orders`, destination: job.id }]);
    expect(job.outEdges).toEqual([{ origin: job.id, destination: `dataset:${NS}:public.totals` }]);

    // The run's events are OpenLineage RunEvents like any producer's: one without eventType (NEW, sent now,
    // after the times the transitions were given), a START and a COMPLETE.
    const { events } = await ok<{ events: { eventType?: string; run: { runId: string } }[] }>(
      'GET',
      '/events/lineage?sortDirection=asc',
    );
    expect(events.filter((event) => event.run.runId === id).map((event) => event.eventType ?? null)).toEqual([
      'START',
      'COMPLETE',
      null,
    ]);
  });

  it('a run can fail, and one can be aborted before it starts', async () => {
    const failing = await newRun('daily_totals', { id: '0191c5a8-0000-7000-8000-00000000f001' });
    expect(failing).toMatchObject({ id: '0191c5a8-0000-7000-8000-00000000f001', state: 'NEW' });
    expect((await mark(failing.id, 'start', '2024-05-03T01:00:00Z')).state).toBe('RUNNING');
    expect(await mark(failing.id, 'fail', '2024-05-03T01:05:00Z')).toMatchObject({
      state: 'FAILED',
      endedAt: '2024-05-03T01:05:00.000Z',
    });
    const aborted = await newRun('daily_totals');
    expect(await mark(aborted.id, 'abort', '2024-05-04T00:00:00Z')).toMatchObject({
      state: 'ABORTED',
      startedAt: null,
      endedAt: '2024-05-04T00:00:00.000Z',
    });
    const states = new Map(
      (await ok<{ runs: RunJson[] }>('GET', `/namespaces/${NS}/jobs/daily_totals/runs`)).runs.map((run) => [
        run.id,
        run.state,
      ]),
    );
    expect(states.get(failing.id)).toBe('FAILED');
    expect(states.get(aborted.id)).toBe('ABORTED');
    // Without `at`, the transition is now.
    const now = await newRun('daily_totals');
    const before = Date.now();
    const started = await ok<RunJson>('POST', `/jobs/runs/${now.id}/start`);
    expect(Date.parse(started.startedAt!)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('a dataset PUT with a runId is a version that run wrote', async () => {
    const run = await newRun('daily_totals');
    const dataset = await ok<DatasetJson>('PUT', `/namespaces/${NS}/datasets/public.totals`, {
      type: 'DB_TABLE',
      physicalName: 'public.totals',
      sourceName: 'warehouse',
      fields: [
        { name: 'day', type: 'DATE' },
        { name: 'total', type: 'DECIMAL' },
      ],
      runId: run.id,
    });
    expect(dataset.fields.map((field) => field.name)).toEqual(['day', 'total']);
    const version = await ok<{ createdByRun: RunJson | null }>(
      'GET',
      `/namespaces/${NS}/datasets/public.totals/versions/${dataset.currentVersion}`,
    );
    expect(version.createdByRun?.id).toBe(run.id);
    const written = await ok<RunJson>('GET', `/jobs/runs/${run.id}`);
    expect(written.outputDatasetVersions.map((output) => output.datasetVersionId)).toContainEqual({
      namespace: NS,
      name: 'public.totals',
      version: dataset.currentVersion,
    });
  });

  it('answers as Marquez does to what it refuses', async () => {
    const run = await newRun('daily_totals');
    const statusOf = async (method: 'PUT' | 'POST', path: string, body?: unknown) =>
      (await call(method, path, body)).status;
    expect(await statusOf('POST', `/namespaces/${NS}/jobs/daily_totals/runs`, { id: run.id })).toBe(409);
    expect(await statusOf('POST', `/namespaces/${NS}/jobs/nope/runs`, {})).toBe(404);
    expect(await statusOf('POST', `/namespaces/${NS}/jobs/daily_totals/runs`, { id: 'not-a-uuid' })).toBe(
      400,
    );
    expect(await statusOf('POST', `/jobs/runs/${run.id}/start?at=yesterday`)).toBe(400);
    expect(await statusOf('POST', '/jobs/runs/0191c5a8-0000-7000-8000-0000000000ff/complete')).toBe(404);
    const dataset = { type: 'DB_TABLE', physicalName: 'x', sourceName: 'warehouse' };
    expect(await statusOf('PUT', '/namespaces/nowhere/datasets/x', dataset)).toBe(404);
    expect(await statusOf('PUT', `/namespaces/${NS}/datasets/x`, { ...dataset, sourceName: 'nope' })).toBe(
      404,
    );
    expect(await statusOf('PUT', `/namespaces/${NS}/datasets/x`, { physicalName: 'x' })).toBe(400);
    expect(
      await statusOf('PUT', `/namespaces/${NS}/jobs/j`, {
        type: 'BATCH',
        inputs: [{ namespace: NS, name: 'missing' }],
      }),
    ).toBe(404);
    expect(await statusOf('PUT', '/sources/s', { type: 'KAFKA' })).toBe(400);
    // Nothing refused was stored.
    expect((await call('GET', `/namespaces/${NS}/jobs/j`)).status).toBe(404);
    expect((await call('GET', `/namespaces/${NS}/datasets/x`)).status).toBe(404);
  });

  it('makes what its events make when they are sent to POST /api/v1/lineage', async () => {
    // The oracle: a second store that only ever got the legacy calls' events, through the OpenLineage door. The
    // calls here take no `at`, so their events' times follow the order they came in, the order /events/lineage
    // gives them back in: the replay gets them in the same order.
    const ns = 'legacy-oracle';
    // Time passes on purpose between calls: each event is stamped with the clock, and two in one millisecond
    // would have no order to replay them in.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
    await ok('PUT', `/namespaces/${ns}`, { ownerName: 'me' });
    for (const [name, fields] of [
      ['raw', [{ name: 'id', type: 'INTEGER', description: 'the key' }]],
      ['clean', [{ name: 'id', type: 'INTEGER' }]],
    ] as const) {
      await ok('PUT', `/namespaces/${ns}/datasets/${name}`, {
        type: 'DB_TABLE',
        sourceName: 'warehouse',
        fields,
      });
      await pause();
    }
    await ok('PUT', `/namespaces/${ns}/jobs/clean`, {
      type: 'BATCH',
      inputs: [{ namespace: ns, name: 'raw' }],
      outputs: [{ namespace: ns, name: 'clean' }],
      location: 'https://git.example/clean.py',
    });
    const runs: string[] = [];
    for (const ending of ['complete', 'fail', 'abort', undefined]) {
      await pause();
      const run = await ok<RunJson>('POST', `/namespaces/${ns}/jobs/clean/runs`, {
        args: { try: ending ?? 'new' },
      });
      runs.push(run.id);
      if (ending === undefined) break;
      await pause();
      if (ending !== 'abort') await ok('POST', `/jobs/runs/${run.id}/start`);
      await pause();
      await ok('POST', `/jobs/runs/${run.id}/${ending}`);
    }
    const replay = await startApp(backend);
    try {
      const { events } = await ok<{
        events: { job?: { namespace: string }; dataset?: { namespace: string } }[];
      }>('GET', '/events/lineage?kind=run&kind=dataset&kind=job&sortDirection=asc&limit=10000');
      const ours = events.filter((event) => (event.job ?? event.dataset)?.namespace === ns);
      // Two DatasetEvents, a JobEvent; NEW, START and COMPLETE or FAIL; NEW and ABORT; a last NEW.
      expect(ours.length).toBe(2 + 1 + 3 + 3 + 2 + 1);
      for (const event of ours) {
        const response = await replay.server.app.inject({
          method: 'POST',
          url: '/api/v1/lineage',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(event),
        });
        expect(response.statusCode).toBe(201);
      }
      for (const path of [
        `/namespaces/${ns}/jobs/clean`,
        `/namespaces/${ns}/jobs/clean/runs`,
        `/namespaces/${ns}/jobs/clean/versions`,
        `/namespaces/${ns}/datasets/raw`,
        `/namespaces/${ns}/datasets/clean`,
        `/namespaces/${ns}/datasets/clean/versions`,
        `/lineage?nodeId=${encodeURIComponent(`job:${ns}:clean`)}`,
        ...runs.map((id) => `/jobs/runs/${id}`),
      ]) {
        const there = await replay.server.app.inject({ url: `/api/v1${path}` });
        expect(there.statusCode).toBe(200);
        expect({ path, answer: await ok<unknown>('GET', path) }).toEqual({
          path,
          answer: there.json<unknown>(),
        });
      }
    } finally {
      await replay.stop();
    }
  });

  it('needs the writer role over the namespaces it names', async () => {
    const other = (await createApiKey(ctx.server.db, { name: 'o', role: 'writer', namespaces: ['other*'] }))
      .token;
    const reader = (await createApiKey(ctx.server.db, { name: 'r', role: 'reader', namespaces: ['*'] }))
      .token;
    const writer = (await createApiKey(ctx.server.db, { name: 'w', role: 'writer', namespaces: [`${NS}*`] }))
      .token;
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const run = (token: string) => call('POST', `/namespaces/${NS}/jobs/daily_totals/runs`, {}, as(token));
    expect((await run(reader)).status).toBe(403);
    // A caller who may not read the namespace is told what the security layer tells of any: it is not there.
    expect((await run(other)).status).toBe(404);
    const created = await run(writer);
    expect(created.status).toBe(201);
    const id = (created.body as RunJson).id;
    expect((await call('POST', `/jobs/runs/${id}/start`, undefined, as(other))).status).toBe(404);
    expect((await call('POST', `/jobs/runs/${id}/start`, undefined, as(reader))).status).toBe(403);
    expect((await call('POST', `/jobs/runs/${id}/start`, undefined, as(writer))).status).toBe(200);
    // A source is in no namespace: declaring one needs the writer role over '*'.
    const source = { type: 'KAFKA', connectionUrl: 'kafka://broker:9092' };
    expect((await call('PUT', '/sources/events', source, as(writer))).status).toBe(403);
  });
});

describe('Marquez legacy write API on a server in strict mode', () => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    ctx = await startApp(backends()[0]!, { strict: 'formats' });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('sends events the official OpenLineage schemas accept, formats included', async () => {
    const send = async (method: 'PUT' | 'POST', path: string, body?: unknown) => {
      const response = await ctx.server.app.inject({
        method,
        url: `/api/v1${path}`,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
      });
      expect({
        path,
        status: response.statusCode,
        body: response.statusCode < 300 ? '' : response.body,
      }).toEqual({ path, status: method === 'POST' && path.endsWith('/runs') ? 201 : 200, body: '' });
      return response.json<{ id: string }>();
    };
    await send('PUT', '/namespaces/strict', { ownerName: 'me' });
    await send('PUT', '/sources/lake', { type: 'S3', connectionUrl: 's3://lake' });
    const fields = [{ name: 'id', type: 'INTEGER', description: 'the key' }];
    await send('PUT', '/namespaces/strict/datasets/in', {
      type: 'DB_TABLE',
      sourceName: 'lake',
      fields,
      description: 'd',
    });
    await send('PUT', '/namespaces/strict/datasets/out', { type: 'DB_TABLE', sourceName: 'lake' });
    await send('PUT', '/namespaces/strict/jobs/j', {
      type: 'STREAM',
      inputs: [{ namespace: 'strict', name: 'in' }],
      outputs: [{ namespace: 'strict', name: 'out' }],
      location: 'https://git.example/j.py',
      description: 'a job',
    });
    const run = await send('POST', '/namespaces/strict/jobs/j/runs', {
      nominalStartTime: '2024-05-01T00:00:00Z',
      nominalEndTime: '2024-05-02T00:00:00Z',
      args: { a: 'b' },
    });
    await send('PUT', '/namespaces/strict/datasets/out', {
      type: 'DB_TABLE',
      sourceName: 'lake',
      runId: run.id,
    });
    await send('POST', `/jobs/runs/${run.id}/start?at=2024-05-02T01:00:00Z`);
    await send('POST', `/jobs/runs/${run.id}/fail?at=2024-05-02T01:10:00Z`);
  });
});
