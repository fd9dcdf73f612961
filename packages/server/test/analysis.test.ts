import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImpactResult } from '../src/analysis/impact.js';
import type { RootCauseResult } from '../src/analysis/root-cause.js';
import type { RunDiffResult } from '../src/analysis/run-diff.js';
import type { SchemaDiffResult } from '../src/analysis/schema-diff.js';
import type { ColumnPathsResult } from '../src/analysis/column-paths.js';
import { demoScenario } from '../src/cli/demo-scenario.js';
import { opsScenario, runId, schemaScenario, streamScenario } from './analysis-scenarios.js';
import { backends, startApp } from './helpers/backends.js';
import { checkResponse, documentedRoutes, type DocumentedRoute } from './helpers/openapi.js';

const WAREHOUSE = 'postgres://warehouse.acme.internal:5432';
const demo = {
  rawOrders: 'dataset:s3://acme-raw:orders',
  rawCustomers: 'dataset:s3://acme-raw:customers',
  stagingOrders: `dataset:${WAREHOUSE}:analytics.staging.orders`,
  stagingCustomers: `dataset:${WAREHOUSE}:analytics.staging.customers`,
  mart: `dataset:${WAREHOUSE}:analytics.marts.revenue_daily`,
  dashboard: 'dataset:looker://acme:dashboards.revenue',
  loadOrders: 'job:acme-airflow:daily_etl.load_orders',
  loadCustomers: 'job:acme-airflow:daily_etl.load_customers',
  dbt: 'job:acme-dbt:dbt.revenue_daily',
  refresh: 'job:acme-bi:bi.refresh_revenue_dashboard',
};
const LOAD_ORDERS_ERROR =
  'duplicate key value violates unique constraint "orders_pkey"\n' +
  'DETAIL:  Key (order_id)=(ord_1260661) already exists.\nCONTEXT:  COPY orders, line 4127';

/** The parts of a cause the tests compare whole. */
const brief = (result: RootCauseResult) =>
  result.causes.map(({ kind, nodeId, distance, path }) => ({ kind, nodeId, distance, path }));

describe.each(backends())('lineage analysis on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let routes: DocumentedRoute[];
  const get = async <T>(path: string, query: Record<string, string>, status = 200): Promise<T> => {
    const response = await ctx.request(`${path}?${new URLSearchParams(query).toString()}`);
    const body = (await response.json()) as T;
    expect({ status: response.status, body }).toMatchObject({ status });
    // Every answer is the one its schema documents (the schema the web's types are derived from).
    checkResponse(routes, 'GET', path.replace(/^\/api\/v1/, ''), response.status, body);
    return body;
  };
  const rootCause = (nodeId: string, at?: string) =>
    get<RootCauseResult>('/api/v1/analysis/root-cause', { nodeId, ...(at ? { at } : {}) });

  beforeAll(async () => {
    ctx = await startApp(backend);
    routes = await documentedRoutes(ctx.request);
    // The demo's events (what `headwater demo` sends), then the other scenarios.
    const response = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        ...demoScenario().events,
        ...opsScenario(),
        ...schemaScenario(),
        ...streamScenario(),
      ]),
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  describe('the demo', () => {
    it('traces the revenue mart to the failing freshness assertion and the failed orders load', async () => {
      const result = await rootCause(demo.mart);
      const failedRun = demoScenario().failedRun.runId;
      expect(result).toMatchObject({
        target: demo.mart,
        at: '2025-03-14T06:00:48.000Z',
        lastGoodRunAt: '2025-03-14T04:03:20.000Z',
        checked: { datasets: 5, jobs: 3 },
      });
      // The failed load comes first: the freshness assertion it made fail follows from it.
      expect(brief(result)).toEqual([
        {
          kind: 'failedRun',
          nodeId: demo.loadOrders,
          distance: 3,
          path: [demo.mart, demo.dbt, demo.stagingOrders, demo.loadOrders],
        },
        {
          kind: 'failedAssertion',
          nodeId: demo.stagingOrders,
          distance: 2,
          path: [demo.mart, demo.dbt, demo.stagingOrders],
        },
      ]);
      expect(result.causes.map((c) => c.explainedBy)).toEqual([null, demo.loadOrders]);
      expect(result.causes[1]!.run).toMatchObject({ id: expect.any(String), state: 'COMPLETED' });
      expect(result.causes[1]!.run!.id).toBe(result.causes[1]!.assertions[0]!.runId);
      expect(result.causes[1]!.assertions).toEqual([
        {
          assertion: 'freshness',
          column: '_loaded_at',
          name: null,
          severity: 'error',
          expected: '<= 24h',
          actual: '25h 55m',
          runId: expect.any(String),
          at: '2025-03-14T04:03:20.000Z',
        },
      ]);
      expect(result.causes[0]).toMatchObject({
        errorMessage: LOAD_ORDERS_ERROR,
        run: {
          id: failedRun,
          state: 'FAILED',
          startedAt: '2025-03-14T02:00:30.000Z',
          endedAt: '2025-03-14T02:01:42.000Z',
        },
      });
    });

    it('traces the dashboard through the mart, two more hops away', async () => {
      const result = await rootCause(demo.dashboard);
      expect(result.checked).toEqual({ datasets: 6, jobs: 4 });
      expect(brief(result)).toEqual([
        {
          kind: 'failedRun',
          nodeId: demo.loadOrders,
          distance: 5,
          path: [demo.dashboard, demo.refresh, demo.mart, demo.dbt, demo.stagingOrders, demo.loadOrders],
        },
        {
          kind: 'failedAssertion',
          nodeId: demo.stagingOrders,
          distance: 4,
          path: [demo.dashboard, demo.refresh, demo.mart, demo.dbt, demo.stagingOrders],
        },
      ]);
      expect(result.causes.map((c) => c.explainedBy)).toEqual([null, demo.loadOrders]);
    });

    it('finds the same causes for a dashboard column, along its column lineage', async () => {
      const column = 'datasetField:looker://acme:dashboards.revenue:gross_revenue';
      const path = [
        column,
        demo.refresh,
        `datasetField:${WAREHOUSE}:analytics.marts.revenue_daily:gross_revenue`,
        demo.dbt,
        `datasetField:${WAREHOUSE}:analytics.staging.orders:amount`,
      ];
      const result = await rootCause(column);
      expect(brief(result)).toEqual([
        { kind: 'failedRun', nodeId: demo.loadOrders, distance: 5, path: [...path, demo.loadOrders] },
        { kind: 'failedAssertion', nodeId: demo.stagingOrders, distance: 4, path },
      ]);
      expect(result.causes.map((c) => c.explainedBy)).toEqual([null, demo.loadOrders]);
    });

    it('reports the schema change of 2025-03-12 to the mart until the mart is rebuilt', async () => {
      // At 03:00 the mart was last built on 03-11; discount_amount arrived in staging orders at 02:00:30.
      const before = await rootCause(demo.mart, '2025-03-12T03:00:00Z');
      expect(before.lastGoodRunAt).toBe('2025-03-11T04:03:20.000Z');
      expect(brief(before)).toEqual([
        {
          kind: 'schemaChange',
          nodeId: demo.stagingOrders,
          distance: 2,
          path: [demo.mart, demo.dbt, demo.stagingOrders],
        },
      ]);
      expect(before.causes[0]!.schemaChange).toMatchObject({
        added: [{ name: 'discount_amount', type: 'numeric(12,2)' }],
        removed: [],
        typeChanged: [],
        breaking: false,
        createdAt: '2025-03-12T02:00:30.000Z',
      });
      // After the 04:00 build the change is no longer news; nothing else was wrong that day.
      expect(brief(await rootCause(demo.mart, '2025-03-12T05:00:00Z'))).toEqual([]);
      // Staging orders itself on the last day: its failed load, and its own failing assertion that follows from it.
      expect(brief(await rootCause(demo.stagingOrders))).toEqual([
        {
          kind: 'failedRun',
          nodeId: demo.loadOrders,
          distance: 1,
          path: [demo.stagingOrders, demo.loadOrders],
        },
        { kind: 'failedAssertion', nodeId: demo.stagingOrders, distance: 0, path: [demo.stagingOrders] },
      ]);
    });

    it('lists everything downstream of staging orders with owners and the columns reached', async () => {
      const result = await get<ImpactResult>('/api/v1/analysis/impact', { nodeId: demo.stagingOrders });
      expect(result.changes).toEqual([
        {
          dataset: demo.stagingOrders,
          fromVersion: expect.any(String),
          toVersion: expect.any(String),
          added: [{ name: 'discount_amount', type: 'numeric(12,2)' }],
          removed: [],
          typeChanged: [],
          breaking: false,
          brokenColumns: [],
        },
      ]);
      expect(result.breaking).toBe(false);
      expect(
        result.nodes.map(({ nodeId, distance, level, owners }) => ({
          nodeId,
          distance,
          level,
          owners: owners.map((owner) => owner.name),
        })),
      ).toEqual([
        { nodeId: demo.dbt, distance: 1, level: 'direct', owners: ['team:analytics-engineering'] },
        {
          nodeId: demo.mart,
          distance: 2,
          level: 'direct',
          owners: ['team:analytics-engineering', 'user:maria.chen'],
        },
        { nodeId: demo.refresh, distance: 3, level: 'indirect', owners: ['team:finance-analytics'] },
        { nodeId: demo.dashboard, distance: 4, level: 'indirect', owners: ['team:finance-analytics'] },
      ]);
      const field = (dataset: string, name: string) => `datasetField:${dataset.slice(8)}:${name}`;
      expect(result.nodes[0]!.columns).toEqual(
        ['amount', 'customer_id', 'order_id', 'ordered_at', 'status'].map((f) =>
          field(demo.stagingOrders, f),
        ),
      );
      expect(result.nodes[3]!.columns).toEqual(
        ['avg_order_value', 'gross_revenue', 'order_count', 'region', 'revenue_date'].map((f) =>
          field(demo.dashboard, f),
        ),
      );
      expect(result.owners.map((owner) => [owner.name, owner.nodes])).toEqual([
        ['team:analytics-engineering', [demo.dbt, demo.mart]],
        ['team:finance-analytics', [demo.refresh, demo.dashboard]],
        ['user:maria.chen', [demo.mart]],
      ]);
    });

    it('marks what a removed column reaches as breaking', async () => {
      const column = `datasetField:${WAREHOUSE}:analytics.staging.orders:amount`;
      const result = await get<ImpactResult>('/api/v1/analysis/impact', {
        nodeId: column,
        change: 'removed',
      });
      expect(result.breaking).toBe(true);
      expect(result.nodes.map(({ nodeId, distance, level }) => [nodeId, distance, level])).toEqual([
        [demo.dbt, 1, 'breaking'],
        [demo.mart, 2, 'breaking'],
        [demo.refresh, 3, 'breaking'],
        [demo.dashboard, 4, 'breaking'],
      ]);
      expect(result.nodes[1]!.breakingColumns).toEqual(
        ['avg_order_value', 'gross_revenue'].map(
          (f) => `datasetField:${WAREHOUSE}:analytics.marts.revenue_daily:${f}`,
        ),
      );
    });

    it('diffs the schema of staging orders: discount_amount added, not breaking', async () => {
      const result = await get<SchemaDiffResult>('/api/v1/analysis/schema-diff', {
        dataset: demo.stagingOrders,
      });
      expect(result).toMatchObject({
        dataset: demo.stagingOrders,
        from: { createdAt: '2025-03-10T02:00:30.000Z' },
        to: { createdAt: '2025-03-12T02:00:30.000Z' },
        added: [{ name: 'discount_amount', type: 'numeric(12,2)' }],
        removed: [],
        typeChanged: [],
        breaking: false,
        reach: [],
        jobs: [],
        owners: [],
      });
      const reversed = await get<SchemaDiffResult>('/api/v1/analysis/schema-diff', {
        dataset: demo.stagingOrders,
        from: result.to.version,
        to: result.from.version,
      });
      expect(reversed).toMatchObject({ added: [], removed: [{ name: 'discount_amount' }], breaking: true });
    });

    it('diffs the last two runs of the dbt model: the freshness assertion flipped', async () => {
      const scenario = demoScenario();
      const dbtRuns = scenario.events
        .filter((e) => 'run' in e && e.job.name === 'dbt.revenue_daily' && e.eventType === 'START')
        .map((e) => ('run' in e ? e.run.runId : ''));
      const result = await get<RunDiffResult>('/api/v1/analysis/run-diff', {
        from: dbtRuns[3]!,
        to: dbtRuns[4]!,
      });
      expect(result.sameJob).toBe(true);
      expect(result.duration).toEqual({ from: 200_000, to: 200_000, change: 0 });
      expect(result.assertions).toEqual([
        {
          dataset: demo.stagingOrders,
          assertion: 'freshness',
          column: '_loaded_at',
          name: null,
          from: true,
          to: false,
        },
      ]);
      expect(result.inputs.map((d) => [d.dataset, d.status, d.rowCount])).toEqual([
        [demo.stagingCustomers, 'unchanged', { from: 52_507, to: 52_633, change: 126 }],
        [demo.stagingOrders, 'unchanged', { from: 1_261_210, to: 1_261_210, change: 0 }],
      ]);
      expect(result.outputs.map((d) => [d.dataset, d.status, d.rowCount])).toEqual([
        [demo.mart, 'unchanged', { from: 2_202, to: 2_202, change: 0 }],
      ]);
      expect(result.edges).toEqual({ added: [], removed: [] });
    });

    it('walks column paths upstream with the transformations of every hop', async () => {
      const start = `datasetField:${WAREHOUSE}:analytics.marts.revenue_daily:gross_revenue`;
      const result = await get<ColumnPathsResult>('/api/v1/analysis/column-paths', { nodeId: start });
      // The join keys influence the whole mart (the columnLineage facet's dataset list), so every column of it.
      expect(result.columns.map((c) => [c.nodeId, c.distance])).toEqual([
        [`datasetField:${WAREHOUSE}:analytics.staging.customers:customer_id`, 1],
        [`datasetField:${WAREHOUSE}:analytics.staging.customers:region`, 1],
        [`datasetField:${WAREHOUSE}:analytics.staging.orders:amount`, 1],
        [`datasetField:${WAREHOUSE}:analytics.staging.orders:customer_id`, 1],
        [`datasetField:${WAREHOUSE}:analytics.staging.orders:ordered_at`, 1],
        [`datasetField:${WAREHOUSE}:analytics.staging.orders:status`, 1],
        ['datasetField:s3://acme-raw:customers:customer_id', 2],
        ['datasetField:s3://acme-raw:customers:region', 2],
        ['datasetField:s3://acme-raw:orders:amount', 2],
        ['datasetField:s3://acme-raw:orders:customer_id', 2],
        ['datasetField:s3://acme-raw:orders:ordered_at', 2],
        ['datasetField:s3://acme-raw:orders:status', 2],
      ]);
      const column = (nodeId: string) => result.columns.find((c) => c.nodeId === nodeId)!;
      const amount = column('datasetField:s3://acme-raw:orders:amount');
      const stagingAmount = `datasetField:${WAREHOUSE}:analytics.staging.orders:amount`;
      expect([amount.via, amount.transformations.map((t) => t.subtype)]).toEqual([
        stagingAmount,
        ['IDENTITY'],
      ]);
      const hop = column(stagingAmount);
      expect([hop.via, hop.transformations.map((t) => t.subtype)]).toEqual([start, ['AGGREGATION']]);
      expect(result.edges).toHaveLength(12);
      const down = await get<ColumnPathsResult>('/api/v1/analysis/column-paths', {
        nodeId: 'datasetField:s3://acme-raw:orders:amount',
        direction: 'downstream',
      });
      expect(down.columns.map((c) => [c.nodeId, c.distance])).toEqual([
        [`datasetField:${WAREHOUSE}:analytics.staging.orders:amount`, 1],
        [`datasetField:${WAREHOUSE}:analytics.marts.revenue_daily:avg_order_value`, 2],
        [`datasetField:${WAREHOUSE}:analytics.marts.revenue_daily:gross_revenue`, 2],
        ['datasetField:looker://acme:dashboards.revenue:avg_order_value', 3],
        ['datasetField:looker://acme:dashboards.revenue:gross_revenue', 3],
      ]);
    });
  });

  describe('hand-made scenarios', () => {
    const ops = (name: string) => `dataset:ops:${name}`;
    const opsJob = (name: string) => `job:ops:${name}`;
    const sch = (name: string) => `dataset:schema:${name}`;
    const schField = (dataset: string, field: string) => `datasetField:schema:${dataset}:${field}`;

    it('finds a failed run, a failing assertion and a stale dataset upstream, nearest first', async () => {
      const result = await rootCause(ops('report'), '2024-05-06T03:01:00Z');
      expect(result).toMatchObject({
        at: '2024-05-06T03:01:00.000Z',
        lastGoodRunAt: '2024-05-06T03:01:00.000Z',
        checked: { datasets: 3, jobs: 3 },
      });
      const toClean = [ops('report'), opsJob('publish'), ops('clean')];
      // The failed transform and the stale raw data upstream of it, then the assertion the failure explains.
      expect(brief(result)).toEqual([
        {
          kind: 'failedRun',
          nodeId: opsJob('transform'),
          distance: 3,
          path: [...toClean, opsJob('transform')],
        },
        {
          kind: 'stale',
          nodeId: ops('raw'),
          distance: 4,
          path: [...toClean, opsJob('transform'), ops('raw')],
        },
        { kind: 'failedAssertion', nodeId: ops('clean'), distance: 2, path: toClean },
      ]);
      expect(result.causes.map((c) => c.explainedBy)).toEqual([null, null, opsJob('transform')]);
      const [run, stale, assertion] = result.causes;
      expect(assertion!.assertions.map((a) => [a.assertion, a.column, a.expected, a.actual])).toEqual([
        ['not_null', 'id', '0', '3'],
      ]);
      expect(run!.errorMessage).toBe('division by zero\nin transform.sql line 12');
      expect(run!.run).toEqual({
        id: runId(1, 206),
        state: 'FAILED',
        startedAt: '2024-05-06T02:00:00.000Z',
        endedAt: '2024-05-06T02:03:00.000Z',
        contradictoryStates: [],
      });
      expect(run!.message).toBe(
        `transform: run ${runId(1, 206)} FAILED at 2024-05-06T02:03:00.000Z: division by zero`,
      );
      expect(stale!.staleness).toEqual({
        lastWriteAt: '2024-05-03T01:10:00.000Z',
        medianIntervalMs: 86_400_000,
        ageMs: 3 * 86_400_000 + 111 * 60_000,
        thresholdMs: 129_600_000,
        writes: 3,
        job: opsJob('extract'),
        floorMs: 15 * 60_000,
        writers: [
          {
            job: opsJob('extract'),
            lastWriteAt: '2024-05-03T01:10:00.000Z',
            medianIntervalMs: 86_400_000,
            writes: 3,
          },
        ],
      });
    });

    it('sees nothing wrong at a time when everything was on schedule', async () => {
      const result = await rootCause(ops('report'), '2024-05-04T03:30:00Z');
      expect(result.lastGoodRunAt).toBe('2024-05-04T03:01:00.000Z');
      expect(result.causes).toEqual([]);
    });

    it('finds a schema change (added, removed and type-changed columns) and the failure it caused', async () => {
      const result = await rootCause(sch('s_out'), '2024-05-02T03:00:00Z');
      expect(result.lastGoodRunAt).toBe('2024-05-01T02:01:00.000Z');
      expect(brief(result)).toEqual([
        {
          kind: 'failedRun',
          nodeId: 'job:schema:model',
          distance: 1,
          path: [sch('s_out'), 'job:schema:model'],
        },
        {
          kind: 'schemaChange',
          nodeId: sch('s_src'),
          distance: 2,
          path: [sch('s_out'), 'job:schema:model', sch('s_src')],
        },
      ]);
      expect(result.causes[0]!.errorMessage).toBe('column "amount" does not exist');
      expect(result.causes[1]!.schemaChange).toMatchObject({
        added: [{ name: 'region', type: 'string' }],
        removed: [{ name: 'amount', type: 'int' }],
        typeChanged: [{ name: 'id', fromType: 'int', toType: 'bigint' }],
        breaking: true,
        createdAt: '2024-05-02T01:00:00.000Z',
        createdByRun: runId(2, 4),
      });
      // From one column, only its own column lineage counts: the load job feeds s_src through no column edge.
      const column = await rootCause(schField('s_out', 'total'), '2024-05-02T03:00:00Z');
      expect(column.checked).toEqual({ datasets: 2, jobs: 1 });
      expect(brief(column)).toEqual([
        {
          kind: 'failedRun',
          nodeId: 'job:schema:model',
          distance: 1,
          path: [schField('s_out', 'total'), 'job:schema:model'],
        },
        {
          kind: 'schemaChange',
          nodeId: sch('s_src'),
          distance: 2,
          path: [schField('s_out', 'total'), 'job:schema:model', schField('s_src', 'amount')],
        },
      ]);
    });

    it('marks every node a breaking schema change reaches, with the columns and owners', async () => {
      const result = await get<ImpactResult>('/api/v1/analysis/impact', { nodeId: sch('s_src') });
      expect(result.changes).toEqual([
        {
          dataset: sch('s_src'),
          fromVersion: expect.any(String),
          toVersion: expect.any(String),
          added: [{ name: 'region', type: 'string' }],
          removed: [{ name: 'amount', type: 'int' }],
          typeChanged: [{ name: 'id', fromType: 'int', toType: 'bigint' }],
          breaking: true,
          brokenColumns: [schField('s_src', 'amount'), schField('s_src', 'id')],
        },
      ]);
      expect(result.breaking).toBe(true);
      expect(result.nodes).toEqual([
        {
          nodeId: 'job:schema:model',
          kind: 'job',
          distance: 1,
          level: 'breaking',
          via: sch('s_src'),
          owners: [],
          columns: [schField('s_src', 'amount'), schField('s_src', 'id'), schField('s_src', 'note')],
          breakingColumns: [schField('s_src', 'amount'), schField('s_src', 'id')],
        },
        {
          nodeId: sch('s_out'),
          kind: 'dataset',
          distance: 2,
          level: 'breaking',
          via: 'job:schema:model',
          owners: [{ name: 'team:models', type: 'OWNER' }],
          columns: [schField('s_out', 'id'), schField('s_out', 'n'), schField('s_out', 'total')],
          breakingColumns: [schField('s_out', 'id'), schField('s_out', 'total')],
        },
        {
          nodeId: 'job:schema:viz',
          kind: 'job',
          distance: 3,
          level: 'breaking',
          via: sch('s_out'),
          owners: [{ name: 'team:viz', type: 'MAINTAINER' }],
          columns: [schField('s_out', 'n'), schField('s_out', 'total')],
          breakingColumns: [schField('s_out', 'total')],
        },
        {
          nodeId: sch('s_dash'),
          kind: 'dataset',
          distance: 4,
          level: 'breaking',
          via: 'job:schema:viz',
          owners: [],
          columns: [schField('s_dash', 'n'), schField('s_dash', 'total')],
          breakingColumns: [schField('s_dash', 'total')],
        },
      ]);
      expect(result.owners).toEqual([
        { name: 'team:models', type: 'OWNER', nodes: [sch('s_out')] },
        { name: 'team:viz', type: 'MAINTAINER', nodes: ['job:schema:viz'] },
      ]);
      // s_out has one version: no change to consider, so nothing downstream of it breaks.
      const out = await get<ImpactResult>('/api/v1/analysis/impact', { nodeId: sch('s_out') });
      expect(out.changes).toEqual([]);
      expect(out.nodes.map((n) => [n.nodeId, n.distance, n.level])).toEqual([
        ['job:schema:viz', 1, 'direct'],
        [sch('s_dash'), 2, 'direct'],
      ]);
    });

    it('diffs the two versions of s_src and lists the columns and owners the break reaches', async () => {
      const result = await get<SchemaDiffResult>('/api/v1/analysis/schema-diff', { dataset: sch('s_src') });
      expect(result).toEqual({
        dataset: sch('s_src'),
        from: { version: expect.any(String), createdAt: '2024-05-01T01:00:00.000Z' },
        to: { version: expect.any(String), createdAt: '2024-05-02T01:00:00.000Z' },
        added: [{ name: 'region', type: 'string' }],
        removed: [{ name: 'amount', type: 'int' }],
        typeChanged: [{ name: 'id', fromType: 'int', toType: 'bigint' }],
        breaking: true,
        reach: [
          {
            nodeId: schField('s_out', 'id'),
            dataset: sch('s_out'),
            distance: 1,
            path: [schField('s_src', 'id'), schField('s_out', 'id')],
            owners: [{ name: 'team:models', type: 'OWNER' }],
          },
          {
            nodeId: schField('s_out', 'total'),
            dataset: sch('s_out'),
            distance: 1,
            path: [schField('s_src', 'amount'), schField('s_out', 'total')],
            owners: [{ name: 'team:models', type: 'OWNER' }],
          },
          {
            nodeId: schField('s_dash', 'total'),
            dataset: sch('s_dash'),
            distance: 2,
            path: [schField('s_src', 'amount'), schField('s_out', 'total'), schField('s_dash', 'total')],
            owners: [],
          },
        ],
        jobs: [
          { nodeId: 'job:schema:model', distance: 1, owners: [] },
          { nodeId: 'job:schema:viz', distance: 3, owners: [{ name: 'team:viz', type: 'MAINTAINER' }] },
        ],
        owners: [
          { name: 'team:models', type: 'OWNER', nodes: [sch('s_out')] },
          { name: 'team:viz', type: 'MAINTAINER', nodes: ['job:schema:viz'] },
        ],
      });
      await get('/api/v1/analysis/schema-diff', { dataset: sch('s_out') }, 404);
      await get('/api/v1/analysis/schema-diff', { dataset: sch('s_src'), from: runId(9, 9) }, 404);
    });

    it('diffs two runs of the model: new input version with its schema change, duration, row counts', async () => {
      const result = await get<RunDiffResult>('/api/v1/analysis/run-diff', {
        from: runId(2, 2),
        to: runId(2, 5),
      });
      expect(result).toMatchObject({
        from: { id: runId(2, 2), job: 'job:schema:model', state: 'COMPLETED', durationMs: 60_000 },
        to: { id: runId(2, 5), job: 'job:schema:model', state: 'FAILED', durationMs: 30_000 },
        sameJob: true,
        duration: { from: 60_000, to: 30_000, change: -30_000 },
        edges: { added: [], removed: [] },
        assertions: [],
      });
      expect(result.inputs).toEqual([
        {
          dataset: sch('s_src'),
          status: 'versionChanged',
          fromVersion: expect.any(String),
          toVersion: expect.any(String),
          schemaChange: {
            added: [{ name: 'region', type: 'string' }],
            removed: [{ name: 'amount', type: 'int' }],
            typeChanged: [{ name: 'id', fromType: 'int', toType: 'bigint' }],
            breaking: true,
          },
          rowCount: { from: null, to: null, change: null },
        },
      ]);
      expect(result.outputs.map((d) => [d.dataset, d.status, d.rowCount])).toEqual([
        [sch('s_out'), 'unchanged', { from: 100, to: null, change: null }],
      ]);
      // Runs of two jobs: the datasets only one of them named are edges added and removed.
      const across = await get<RunDiffResult>('/api/v1/analysis/run-diff', {
        from: runId(2, 2),
        to: runId(2, 4),
      });
      expect(across.sameJob).toBe(false);
      expect(across.edges).toEqual({
        added: [{ direction: 'output', dataset: sch('s_src') }],
        removed: [
          { direction: 'input', dataset: sch('s_src') },
          { direction: 'output', dataset: sch('s_out') },
        ],
      });
      await get('/api/v1/analysis/run-diff', { from: runId(2, 2), to: runId(9, 9) }, 404);
    });

    it('treats a streaming job that only started and reports RUNNING as healthy lineage', async () => {
      const result = await rootCause('dataset:stream:agg_out');
      expect(result.checked).toEqual({ datasets: 3, jobs: 2 });
      expect(result.causes).toEqual([]);
      const downstream = await get<ImpactResult>('/api/v1/analysis/impact', {
        nodeId: 'dataset:stream:topic',
      });
      expect(downstream.nodes.map((n) => [n.nodeId, n.distance, n.level])).toEqual([
        ['job:stream:ingest_stream', 1, 'direct'],
        ['dataset:stream:events_table', 2, 'direct'],
        ['job:stream:agg', 3, 'indirect'],
        ['dataset:stream:agg_out', 4, 'indirect'],
      ]);
      const fromJob = await get<ImpactResult>('/api/v1/analysis/impact', {
        nodeId: 'job:stream:ingest_stream',
      });
      expect(fromJob.nodes.map((n) => [n.nodeId, n.distance, n.level])).toEqual([
        ['dataset:stream:events_table', 1, 'direct'],
        ['job:stream:agg', 2, 'direct'],
        ['dataset:stream:agg_out', 3, 'indirect'],
      ]);
    });

    it('refuses what it cannot analyse, saying why', async () => {
      // A job is a root-cause target (test/producers.test.ts); a run is not.
      const run = await get<{ error: string; message: string }>(
        '/api/v1/analysis/root-cause',
        { nodeId: 'run:0190d3a2-0000-7000-8000-000000000011' },
        400,
      );
      expect(run).toMatchObject({
        error: 'INVALID_NODE_ID',
        message: expect.stringContaining('a dataset or a column or a job'),
      });
      const missing = await get<{ error: string }>(
        '/api/v1/analysis/root-cause',
        { nodeId: ops('nope') },
        404,
      );
      expect(missing.error).toBe('NOT_FOUND');
      await get('/api/v1/analysis/impact', { nodeId: ops('report'), change: 'dropped' }, 400);
    });
  });
});
