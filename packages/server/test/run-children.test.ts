/**
 * GET /api/v1/jobs/runs/{id}/children: a Kedro-like pipeline run whose second node fails, so the nodes after it
 * are aborted; an earlier run of the same pipeline whose node must not be listed under the later one.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from './helpers/api.js';
import { backends, startApp } from './helpers/backends.js';
import { checkResponse, documentedRoutes, type DocumentedRoute } from './helpers/openapi.js';
import { MINUTE, PRODUCER, T0, at, runEvent } from './read-scenario.js';

const NS = 'kedro://shop';
const facet = (name: string, body: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json`,
  ...body,
});
const parentFacet = (runId: string) => ({
  parent: facet('ParentRunFacet', { run: { runId }, job: { namespace: NS, name: 'shop.__default__' } }),
});
const dataset = (name: string, statistics?: { key: string; rowCount: number; size: number }) => ({
  namespace: NS,
  name,
  facets: {},
  ...(statistics
    ? {
        [statistics.key === 'outputStatistics' ? 'outputFacets' : 'inputFacets']: {
          [statistics.key]: facet('OutputStatisticsOutputDatasetFacet', {
            rowCount: statistics.rowCount,
            size: statistics.size,
          }),
        },
      }
    : {}),
});
const TRACEBACK =
  'Traceback (most recent call last):\n  File "nodes.py", line 12, in train\nValueError: no rows';

describe.each(backends())('the children of a run on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let routes: DocumentedRoute[];
  const client = apiOf(() => ctx.request);
  const earlier = randomUUID();
  const earlierLoad = randomUUID();
  const parent = randomUUID();
  const load = randomUUID();
  const train = randomUUID();
  const check = randomUUID();
  const report = randomUUID();
  const lonely = randomUUID();

  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await ctx.request(`/api/v1${path}`);
    const body = (await response.json()) as Record<string, unknown>;
    checkResponse(routes, 'GET', path, response.status, body);
    return { status: response.status, body };
  };
  const node = (
    eventType: string,
    time: number,
    runId: string,
    job: string,
    parentRun: string,
    io: { inputs?: unknown[]; outputs?: unknown[]; runFacets?: Record<string, unknown> } = {},
  ) =>
    runEvent({
      eventType,
      time,
      runId,
      job,
      namespace: NS,
      ...io,
      runFacets: { ...parentFacet(parentRun), ...io.runFacets },
    });

  beforeAll(async () => {
    ctx = await startApp(backend);
    routes = await documentedRoutes(ctx.request);
    const pipeline = (eventType: string, time: number, runId: string) =>
      runEvent({ eventType, time, runId, job: 'shop.__default__', namespace: NS });
    // The earlier pipeline run: one node, completed.
    await client.post(pipeline('START', T0 - 60 * MINUTE, earlier));
    await client.post(node('START', T0 - 60 * MINUTE, earlierLoad, 'load', earlier));
    await client.post(node('COMPLETE', T0 - 59 * MINUTE, earlierLoad, 'load', earlier));
    await client.post(pipeline('COMPLETE', T0 - 59 * MINUTE, earlier));
    // This run, events out of order: the aborted node's ABORT comes first, the parent's START last.
    await client.post(
      node('ABORT', T0 + 5 * MINUTE, report, 'report', parent, { inputs: [dataset('model')] }),
    );
    await client.post(
      node('COMPLETE', T0 + MINUTE, load, 'load', parent, {
        inputs: [dataset('raw', { key: 'inputStatistics', rowCount: 120, size: 4096 })],
        outputs: [dataset('clean', { key: 'outputStatistics', rowCount: 100, size: 2048 })],
      }),
    );
    await client.post(node('START', T0, load, 'load', parent, { inputs: [dataset('raw')] }));
    await client.post(node('START', T0 + 2 * MINUTE, train, 'train', parent, { inputs: [dataset('clean')] }));
    await client.post(
      node('FAIL', T0 + 3 * MINUTE, train, 'train', parent, {
        inputs: [dataset('clean')],
        outputs: [dataset('model')],
        runFacets: {
          errorMessage: facet('ErrorMessageRunFacet', {
            message: 'ValueError: no rows',
            programmingLanguage: 'python',
            stackTrace: TRACEBACK,
          }),
        },
      }),
    );
    await client.post(
      node('START', T0 + 2.5 * MINUTE, check, 'check', parent, { inputs: [dataset('clean')] }),
    );
    await client.post(
      node('COMPLETE', T0 + 4 * MINUTE, check, 'check', parent, { inputs: [dataset('clean')] }),
    );
    await client.post(pipeline('FAIL', T0 + 5 * MINUTE, parent));
    await client.post(pipeline('START', T0, parent));
    await client.post(
      runEvent({ eventType: 'COMPLETE', time: T0, runId: lonely, job: 'alone', namespace: NS }),
    );
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  const ref = (name: string) => ({ namespace: NS, name });
  const stats = (name: string, version: unknown, rowCount: number | null, bytes: number | null) => ({
    ...ref(name),
    version,
    rowCount,
    bytes,
    fileCount: null,
  });
  const anyVersion = expect.stringMatching(/^[0-9a-f-]{36}$/);

  it('lists the children in the order they ran, with times, errors, datasets and statistics', async () => {
    const { status, body } = await get(`/jobs/runs/${parent}/children`);
    expect(status).toBe(200);
    expect(body).toEqual({
      runId: parent,
      totalCount: 4,
      states: { ABORTED: 1, COMPLETED: 2, FAILED: 1 },
      neverRanCount: 1,
      children: [
        {
          runId: load,
          job: ref('load'),
          state: 'COMPLETED',
          startedAt: at(T0),
          endedAt: at(T0 + MINUTE),
          durationMs: MINUTE,
          ran: true,
          error: null,
          inputs: [stats('raw', anyVersion, 120, 4096)],
          outputs: [stats('clean', anyVersion, 100, 2048)],
        },
        {
          runId: train,
          job: ref('train'),
          state: 'FAILED',
          startedAt: at(T0 + 2 * MINUTE),
          endedAt: at(T0 + 3 * MINUTE),
          durationMs: MINUTE,
          ran: true,
          error: {
            message: 'ValueError: no rows',
            stackTrace: TRACEBACK,
            programmingLanguage: 'python',
            facet: 'errorMessage',
          },
          inputs: [stats('clean', anyVersion, null, null)],
          outputs: [stats('model', anyVersion, null, null)],
        },
        {
          runId: check,
          job: ref('check'),
          state: 'COMPLETED',
          startedAt: at(T0 + 2.5 * MINUTE),
          endedAt: at(T0 + 4 * MINUTE),
          durationMs: 1.5 * MINUTE,
          ran: true,
          error: null,
          inputs: [stats('clean', anyVersion, null, null)],
          outputs: [],
        },
        {
          runId: report,
          job: ref('report'),
          state: 'ABORTED',
          startedAt: null,
          endedAt: at(T0 + 5 * MINUTE),
          durationMs: null,
          ran: false,
          error: null,
          inputs: [stats('model', anyVersion, null, null)],
          outputs: [],
        },
      ],
      edges: expect.any(Array),
    });
  });

  it('gives the edges between children: who wrote what another read', async () => {
    const { body } = await get(`/jobs/runs/${parent}/children`);
    // In the children's order, then the order of what each read.
    expect(body.edges).toEqual([
      { from: load, to: train, datasets: [ref('clean')] },
      { from: load, to: check, datasets: [ref('clean')] },
      { from: train, to: report, datasets: [ref('model')] },
    ]);
  });

  it('pages the children; the counts and edges of a page stay right', async () => {
    const { body } = await get(`/jobs/runs/${parent}/children?limit=2&offset=2`);
    const ids = (body.children as { runId: string }[]).map((child) => child.runId);
    expect(ids).toEqual([check, report]);
    expect({ totalCount: body.totalCount, neverRanCount: body.neverRanCount }).toEqual({
      totalCount: 4,
      neverRanCount: 1,
    });
    // Only edges between the children of the page.
    expect(body.edges).toEqual([]);
    const first = await get(`/jobs/runs/${parent}/children?limit=2`);
    expect((first.body.children as { runId: string }[]).map((child) => child.runId)).toEqual([load, train]);
    expect(first.body.edges).toEqual([{ from: load, to: train, datasets: [ref('clean')] }]);
  });

  it('lists only the children of this run, not those of an earlier run of the same job', async () => {
    const { body } = await get(`/jobs/runs/${earlier}/children`);
    expect((body.children as { runId: string }[]).map((child) => child.runId)).toEqual([earlierLoad]);
    expect(body.totalCount).toBe(1);
  });

  it('answers an empty list for a run without children, 404 for an unknown run, 400 for a bad page', async () => {
    expect((await get(`/jobs/runs/${lonely}/children`)).body).toEqual({
      runId: lonely,
      totalCount: 0,
      states: {},
      neverRanCount: 0,
      children: [],
      edges: [],
    });
    const missing = randomUUID();
    const unknown = await get(`/jobs/runs/${missing}/children`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain(`Run '${missing}' not found`);
    for (const query of ['limit=0', 'limit=2001', 'offset=-1', 'limit=ten']) {
      const bad = await get(`/jobs/runs/${parent}/children?${query}`);
      expect({ query, status: bad.status }).toEqual({ query, status: 400 });
    }
  });
});
