/**
 * Data quality as dbt-ol and the Python client send it: one run per test (structured-logs mode), assertions as
 * input dataset facets, named tests of one type on one column; and the metrics and statistics runs report.
 * The quality endpoint, root cause and the Marquez-compatible dataset facets must tell the same story.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from './helpers/api.js';
import { backends, startApp } from './helpers/backends.js';
import { documentedRoutes, type DocumentedRoute } from './helpers/openapi.js';
import { MINUTE, PRODUCER, T0, runEvent } from './read-scenario.js';

const facet = (name: string, version: string, body: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/${version}/${name}.json`,
  ...body,
});
const assertions = (...items: Record<string, unknown>[]) =>
  facet('DataQualityAssertionsDatasetFacet', '1-1-0', { assertions: items });
const NS = 'postgres://warehouse:5432';
const ORDERS = 'shop.public.orders';
const ordersPath = `/api/v1/namespaces/${encodeURIComponent(NS)}/datasets/${encodeURIComponent(ORDERS)}`;

interface Result {
  success: boolean;
  runId: string;
  actual: string | null;
}
interface Assertion {
  identity: string;
  status: string;
  retired: { runId: string; at: string } | null;
  assertion: string;
  column: string;
  name: string | null;
  latest: Result;
  history: Result[];
}
interface Observation {
  runId: string;
  job: { namespace: string; name: string };
  dataset: { namespace: string; name: string };
  output: { rowCount: number | null; bytes: number | null; fileCount: number | null } | null;
  input: { rowCount: number | null } | null;
  metrics: {
    rowCount: number | null;
    columns: { column: string; nullCount: number | null; distinctCount: number | null }[];
  } | null;
  assertions: { identity: string; success: boolean }[];
}

describe.each(backends())('data quality on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let routes: DocumentedRoute[];
  const api = apiOf(
    () => ctx.request,
    () => routes,
  );
  const model = randomUUID();
  const notNull = randomUUID();
  const unique = randomUUID();
  const accepted = randomUUID();
  const acceptedAgain = randomUUID();

  /** A dbt test run: one run per test, the assertion an input facet of the tested model. */
  const testRun = async (runId: string, job: string, time: number, inputFacets: Record<string, unknown>) => {
    const input = { namespace: NS, name: ORDERS, facets: {}, inputFacets };
    await api.post(
      runEvent({ eventType: 'START', time, runId, job, namespace: 'dbt', inputs: [input] }),
      runEvent({ eventType: 'COMPLETE', time: time + 1000, runId, job, namespace: 'dbt', inputs: [input] }),
    );
  };

  beforeAll(async () => {
    ctx = await startApp(backend, { logLevel: 'error' });
    routes = await documentedRoutes(ctx.request);
    // The model run writes the table, with a dataset-level assertion on its output and output statistics.
    const output = {
      namespace: NS,
      name: ORDERS,
      facets: { dataQualityAssertions: assertions({ assertion: 'row_count', success: true }) },
      outputFacets: {
        outputStatistics: facet('OutputStatisticsOutputDatasetFacet', '1-0-2', {
          rowCount: 10,
          size: 2048,
          fileCount: 1,
        }),
      },
    };
    await api.post(
      runEvent({ eventType: 'START', time: T0, runId: model, job: 'shop.orders', namespace: 'dbt' }),
      runEvent({
        eventType: 'COMPLETE',
        time: T0 + MINUTE,
        runId: model,
        job: 'shop.orders',
        namespace: 'dbt',
        outputs: [output],
      }),
    );
    await testRun(notNull, 'test.not_null_orders_id', T0 + 2 * MINUTE, {
      dataQualityAssertions: assertions({
        assertion: 'not_null',
        column: 'id',
        name: 'not_null_orders_id',
        success: false,
        actual: '1',
        expected: '0',
      }),
      dataQualityMetrics: facet('DataQualityMetricsInputDatasetFacet', '1-0-3', {
        rowCount: 10,
        columnMetrics: { id: { nullCount: 1, distinctCount: 9 }, status: { nullCount: 0, distinctCount: 3 } },
      }),
    });
    // A later test run on the same table passes: it must not hide the failure above.
    await testRun(unique, 'test.unique_orders_id', T0 + 3 * MINUTE, {
      dataQualityAssertions: assertions({
        assertion: 'unique',
        column: 'id',
        name: 'unique_orders_id',
        success: true,
      }),
    });
    // Two accepted_values tests on one column in one run: two assertions, told apart by name.
    await testRun(accepted, 'test.accepted_values', T0 + 4 * MINUTE, {
      dataQualityAssertions: assertions(
        { assertion: 'accepted_values', column: 'status', name: 'accepted_status_open', success: true },
        { assertion: 'accepted_values', column: 'status', name: 'accepted_status_closed', success: false },
      ),
    });
    await testRun(acceptedAgain, 'test.accepted_values', T0 + 5 * MINUTE, {
      dataQualityAssertions: assertions({
        assertion: 'accepted_values',
        column: 'status',
        name: 'accepted_status_closed',
        success: true,
      }),
    });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('the quality endpoint lists the latest result of each assertion from any run, failing first', async () => {
    const quality = await api.get<{ assertions: Assertion[] }>(`${ordersPath}/quality`);
    // accepted_status_open is retired: the later run of its job reported on the table without it.
    expect(
      quality.assertions.map((a) => [
        a.name ?? a.assertion,
        a.column,
        a.status,
        a.latest.success,
        a.latest.runId,
      ]),
    ).toEqual([
      ['not_null_orders_id', 'id', 'failing', false, notNull],
      ['accepted_status_closed', 'status', 'passing', true, acceptedAgain],
      ['row_count', '', 'passing', true, model],
      ['unique_orders_id', 'id', 'passing', true, unique],
      ['accepted_status_open', 'status', 'retired', true, accepted],
    ]);
    expect(quality.assertions.at(-1)!.retired).toEqual({
      runId: acceptedAgain,
      at: new Date(T0 + 5 * MINUTE + 1000).toISOString(),
    });
    const closed = quality.assertions.find((a) => a.name === 'accepted_status_closed')!;
    expect(closed.history.map((r) => [r.runId, r.success])).toEqual([
      [acceptedAgain, true],
      [accepted, false],
    ]);
    expect(closed.identity).toBe('n:accepted_status_closed');
    expect(quality.assertions.find((a) => a.assertion === 'row_count')!.identity).toBe('t:row_count:');
  });

  it('root cause reports the failing test although later test runs passed', async () => {
    const answer = await api.get<{
      causes: { kind: string; nodeId: string; assertions: { name: string | null; runId: string }[] }[];
    }>(`/api/v1/analysis/root-cause?nodeId=${encodeURIComponent(`dataset:${NS}:${ORDERS}`)}`);
    expect(
      answer.causes
        .filter((c) => c.kind === 'failedAssertion')
        .map((c) => [c.nodeId, c.assertions.map((a) => [a.name, a.runId])]),
    ).toEqual([[`dataset:${NS}:${ORDERS}`, [['not_null_orders_id', notNull]]]]);
  });

  it("the dataset's dataQualityAssertions facet (Marquez UI's Quality column) lists the same results", async () => {
    const dataset = await api.get<{
      facets: { dataQualityAssertions: { _producer: string; assertions: Record<string, unknown>[] } };
    }>(ordersPath);
    const facetBody = dataset.facets.dataQualityAssertions;
    expect(facetBody._producer).toBe(PRODUCER);
    expect(facetBody.assertions.map((a) => [a.name ?? a.assertion, a.success])).toEqual([
      ['accepted_status_closed', true],
      ['not_null_orders_id', false],
      ['row_count', true],
      ['unique_orders_id', true],
    ]);
  });

  it('serves the statistics, metrics and assertions of each run over time, newest first', async () => {
    const quality = await api.get<{ runs: Observation[] }>(`${ordersPath}/quality`);
    expect(quality.runs.map((o) => o.runId)).toEqual([acceptedAgain, accepted, unique, notNull, model]);
    const tested = quality.runs.find((o) => o.runId === notNull)!;
    expect(tested.job).toEqual({ namespace: 'dbt', name: 'test.not_null_orders_id' });
    expect(tested.metrics).toEqual({
      rowCount: 10,
      bytes: null,
      fileCount: null,
      columns: [
        {
          column: 'id',
          nullCount: 1,
          distinctCount: 9,
          count: null,
          sum: null,
          min: null,
          max: null,
        },
        {
          column: 'status',
          nullCount: 0,
          distinctCount: 3,
          count: null,
          sum: null,
          min: null,
          max: null,
        },
      ],
    });
    expect(tested.assertions.map((a) => [a.identity, a.success])).toEqual([['n:not_null_orders_id', false]]);
    const written = quality.runs.find((o) => o.runId === model)!;
    expect(written.output).toEqual({ rowCount: 10, bytes: 2048, fileCount: 1 });
    const limited = await api.get<{ runs: Observation[]; assertions: Assertion[] }>(
      `${ordersPath}/quality?runs=2&history=1`,
    );
    expect(limited.runs.map((o) => o.runId)).toEqual([acceptedAgain, accepted]);
    expect(limited.assertions.find((a) => a.name === 'accepted_status_closed')!.history).toHaveLength(1);
  });

  it('serves what one run reported, and answers 404 for an unknown run and 400 for a bad limit', async () => {
    const run = await api.get<{ runId: string; datasets: Observation[] }>(
      `/api/v1/jobs/runs/${accepted}/quality`,
    );
    expect(run.runId).toBe(accepted);
    expect(
      run.datasets.map((o) => [o.dataset.name, o.assertions.map((a) => [a.identity, a.success])]),
    ).toEqual([
      [
        ORDERS,
        [
          ['n:accepted_status_closed', false],
          ['n:accepted_status_open', true],
        ],
      ],
    ]);
    expect(await api.status(`/api/v1/jobs/runs/${randomUUID()}/quality`)).toBe(404);
    expect(await api.status(`${ordersPath}/quality?runs=0`)).toBe(400);
    expect(await api.status(`${ordersPath}/quality?history=x`)).toBe(400);
  });
});
