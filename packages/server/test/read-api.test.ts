import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatasetJson, DatasetVersionJson } from '../src/api/schemas/dataset.js';
import type { JobJson, JobVersionJson } from '../src/api/schemas/job.js';
import type { NamespaceJson, TagJson } from '../src/api/schemas/namespace.js';
import type { RunJson } from '../src/api/schemas/run.js';
import { loadDatasetNodeData } from '../src/api/json/dataset.js';
import { loadJobNodeData } from '../src/api/json/job.js';
import { entityKey } from '../src/store/model-state.js';
import { backends, startApp } from './helpers/backends.js';
import { hasConformance } from './helpers/conformance.js';
import { checkResponse, documentedRoutes, type DocumentedRoute } from './helpers/openapi.js';
import {
  applesEvents,
  assertions,
  at,
  cleanColumnLineage,
  cleanSchema,
  cleanSchemaV2,
  DAY,
  errorFacet,
  eventsSchema,
  jobFacets,
  MINUTE,
  nominalTime,
  ordersDataSource,
  ordersDocumentation,
  ordersSchema,
  parentFacet,
  PARENT_RUN,
  PG,
  PRODUCER,
  RUN_1,
  RUN_2,
  runEvent,
  S3,
  statistics,
  T0,
  warehouseEvents,
} from './read-scenario.js';

const HOUR = 60 * MINUTE;
const pg = encodeURIComponent(PG);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** jobUuid('warehouse', 'nightly'): Java's UUID.nameUUIDFromBytes("job:warehouse:nightly"), computed apart. */
const NIGHTLY_UUID = 'e7d996c8-ee13-3f9b-a0d4-679803ea4062';

interface Reply<T> {
  status: number;
  body: T;
}
interface ErrorBody {
  code: number;
  error: string;
  message: string;
}
type Page<K extends string, T> = Record<K, T[]> & { totalCount: number };
interface Search {
  totalCount: number;
  results: { type: string; name: string; namespace: string; updatedAt: string; nodeId: string }[];
}
interface CountBucket {
  startInterval: string;
  endInterval: string;
  count: number;
}

// The scenario includes the marquez-apples events of the shared conformance corpus.
describe.skipIf(!hasConformance()).each(backends())('read API on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  /** Response validators from the server's own OpenAPI document, by method and path template. */
  let documented: DocumentedRoute[];
  const now = Date.now();
  const liveRuns = { ok: randomUUID(), failed: randomUUID(), aborted: randomUUID() };
  /** Recent events for the dashboard stats, in namespace `live`. */
  const liveEvents = [
    ['START', now - 3 * DAY, liveRuns.aborted],
    ['ABORT', now - 3 * DAY + MINUTE, liveRuns.aborted],
    ['START', now - 2 * HOUR, liveRuns.ok],
    ['COMPLETE', now - 2 * HOUR + MINUTE, liveRuns.ok],
    ['START', now - 30 * MINUTE, liveRuns.failed],
    ['FAIL', now - 29 * MINUTE, liveRuns.failed],
  ] as const;

  /**
   * Calls the API and checks the response against the schema the OpenAPI document gives for its route and
   * status: the documentation must describe every field, null and omission the server really sends.
   */
  async function call<T = ErrorBody>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
    const response = await ctx.request(`/api/v1${path}`, {
      method,
      ...(body === undefined
        ? {}
        : {
            body: typeof body === 'string' ? body : JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          }),
    });
    const text = await response.text();
    const reply: Reply<T> = {
      status: response.status,
      body: (text === '' ? undefined : JSON.parse(text)) as T,
    };
    checkResponse(documented, method, path, reply.status, reply.body);
    return reply;
  }
  const get = <T = ErrorBody>(path: string) => call<T>('GET', path);
  const ok = async <T = unknown>(path: string): Promise<T> => {
    const reply = await get<T>(path);
    expect({ path, status: reply.status }).toEqual({ path, status: 200 });
    return reply.body;
  };
  const post = async (event: unknown) => {
    const response = await ctx.request('/api/v1/lineage', {
      method: 'POST',
      body: JSON.stringify(event),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(201);
  };

  beforeAll(async () => {
    ctx = await startApp(backend);
    documented = await documentedRoutes(ctx.request);
    for (const event of [...applesEvents(), ...warehouseEvents()]) await post(event);
    for (const [eventType, time, runId] of liveEvents) {
      await post(
        runEvent({
          eventType,
          time,
          runId,
          job: 'heartbeat',
          namespace: 'live',
          outputs: [{ namespace: 'live', name: 'pulse' }],
        }),
      );
    }
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  // ---- namespaces and sources --------------------------------------------------------------------------------

  it('lists namespaces by name with Marquez fields, explicit null descriptions and no totalCount', async () => {
    const ns = (name: string, createdAt: string, updatedAt: string) => ({
      name,
      createdAt,
      updatedAt,
      ownerName: 'anonymous',
      description: null,
      isHidden: false,
    });
    expect(await ok('/namespaces')).toEqual({
      namespaces: [
        ns('backyard', '2020-10-15T03:00:00.000Z', '2020-10-15T03:00:00.000Z'),
        ns('cupboard', '2020-09-29T02:00:00.000Z', '2020-10-28T09:52:00.001Z'),
        ns('grandmas.kitchen', '2020-08-29T23:00:00.000Z', '2020-10-28T09:52:00.001Z'),
        ns('laurents-orchard', '2020-08-29T23:00:00.000Z', '2020-08-29T23:00:00.000Z'),
        ns('live', at(now - 3 * DAY), at(now - 29 * MINUTE)),
        ns(PG, at(T0), at(T0 + DAY + 2 * MINUTE)),
        ns(S3, at(T0 + 2 * DAY), at(T0 + 2 * DAY)),
        ns('warehouse', at(T0 - MINUTE), at(T0 + DAY + 2 * MINUTE)),
      ],
    });
    expect(
      (await ok<{ namespaces: NamespaceJson[] }>('/namespaces?limit=2&offset=3')).namespaces.map(
        (n) => n.name,
      ),
    ).toEqual(['laurents-orchard', 'live']);
    expect(await ok(`/namespaces/${pg}`)).toEqual(ns(PG, at(T0), at(T0 + DAY + 2 * MINUTE)));
  });

  it('answers unknown names with 404 and bad paging with 400, in the one error format', async () => {
    expect(await get('/namespaces/nowhere')).toEqual({
      status: 404,
      body: {
        code: 404,
        error: 'NOT_FOUND',
        message: "Namespace 'nowhere' not found. List the namespaces with GET /api/v1/namespaces.",
      },
    });
    for (const path of [
      '/namespaces/nowhere/datasets',
      '/namespaces/nowhere/jobs',
      '/namespaces/warehouse/datasets/nothing',
      '/namespaces/warehouse/jobs/nothing',
      '/namespaces/warehouse/jobs/nothing/runs',
      `/namespaces/${pg}/datasets/nothing/versions`,
      '/sources/nothing',
      `/jobs/runs/${randomUUID()}`,
      `/jobs/runs/${randomUUID()}/facets?type=run`,
    ]) {
      const reply = await get(path);
      expect({ path, status: reply.status, error: reply.body.error }).toEqual({
        path,
        status: 404,
        error: 'NOT_FOUND',
      });
    }
    expect((await get('/namespaces/warehouse/jobs/nothing')).body.message).toBe(
      "Job 'nothing' not found in namespace 'warehouse'. List them with GET /api/v1/namespaces/{namespace}/jobs.",
    );
    for (const path of [
      '/namespaces?limit=-1',
      '/namespaces?offset=-1',
      '/sources?limit=x',
      `/namespaces/${pg}/datasets?offset=-5`,
      '/jobs?limit=-1',
      '/tags?limit=-1',
      '/search?q=a&limit=-1',
    ]) {
      const reply = await get(path);
      expect({ path, status: reply.status, code: reply.body.code }).toEqual({ path, status: 400, code: 400 });
    }
  });

  it('lists sources from dataSource facets, with "default" for datasets without one', async () => {
    const shopDb = {
      type: 'POSTGRES',
      name: 'shop-db',
      createdAt: at(T0),
      updatedAt: at(T0),
      connectionUrl: ordersDataSource.uri,
      description: null,
    };
    expect(await ok('/sources')).toEqual({
      sources: [
        {
          type: 'POSTGRESQL',
          name: 'default',
          createdAt: '2020-08-29T23:00:00.000Z',
          updatedAt: '2020-08-29T23:00:00.000Z',
          connectionUrl: '',
          description: null,
        },
        shopDb,
      ],
    });
    expect(await ok('/sources/shop-db')).toEqual(shopDb);
    expect((await ok<{ sources: unknown[] }>('/sources?offset=1')).sources).toEqual([shopDb]);
  });

  // ---- datasets ----------------------------------------------------------------------------------------------

  it('lists the datasets of a namespace by name with a totalCount of all pages', async () => {
    const names = (body: { datasets: { name: string }[] }) => body.datasets.map((dataset) => dataset.name);
    const all = await ok<Page<'datasets', DatasetJson>>('/namespaces/grandmas.kitchen/datasets');
    expect({ names: names(all), totalCount: all.totalCount }).toEqual({
      names: ['apple.cider', 'apple.filling', 'apple.pie', 'apples', 'cinnamon'],
      totalCount: 5,
    });
    const page = await ok<Page<'datasets', DatasetJson>>(
      '/namespaces/grandmas.kitchen/datasets?limit=2&offset=2',
    );
    expect({ names: names(page), totalCount: page.totalCount }).toEqual({
      names: ['apple.pie', 'apples'],
      totalCount: 5,
    });
    const apples = all.datasets[3];
    expect(apples).toEqual({
      id: { namespace: 'grandmas.kitchen', name: 'apples' },
      type: 'DB_TABLE',
      name: 'apples',
      physicalName: 'apples',
      createdAt: '2020-08-29T23:00:00.000Z',
      updatedAt: '2020-10-15T05:00:00.000Z',
      namespace: 'grandmas.kitchen',
      sourceName: 'default',
      fields: [],
      tags: [],
      lastModifiedAt: '2020-10-15T03:00:00.000Z',
      description: null,
      lastLifecycleState: null,
      currentVersion: expect.stringMatching(UUID),
      facets: {},
      deleted: false,
    });
    // The page is the same as the datasets fetched one by one (facets and lineage are batched per page).
    const pgPage = await ok<Page<'datasets', DatasetJson>>(`/namespaces/${pg}/datasets`);
    for (const dataset of pgPage.datasets) {
      expect(await ok(`/namespaces/${pg}/datasets/${encodeURIComponent(dataset.name)}`)).toEqual(dataset);
    }
  });

  it('returns a dataset with its current schema, latest merged facets and one level of column lineage', async () => {
    const versions = await ok<Page<'versions', DatasetVersionJson>>(
      `/namespaces/${pg}/datasets/shop.orders_clean/versions`,
    );
    const clean = await ok(`/namespaces/${pg}/datasets/shop.orders_clean`);
    expect(clean).toEqual({
      id: { namespace: PG, name: 'shop.orders_clean' },
      type: 'DB_TABLE',
      name: 'shop.orders_clean',
      physicalName: 'shop.orders_clean',
      createdAt: at(T0),
      updatedAt: at(T0 + DAY + 2 * MINUTE),
      namespace: PG,
      sourceName: 'default',
      fields: [
        { name: 'id', type: 'INTEGER', tags: [], description: null },
        { name: 'amount_usd', type: 'DECIMAL', tags: [], description: 'Amount in USD' },
        { name: 'currency', type: 'VARCHAR', tags: [], description: null },
      ],
      tags: [],
      // Only a COMPLETE (or a DatasetEvent) modifies a dataset; run 2 failed.
      lastModifiedAt: at(T0 + 5 * MINUTE),
      description: null,
      lastLifecycleState: null,
      currentVersion: versions.versions[0]!.version,
      columnLineage: [
        {
          name: 'amount_usd',
          inputFields: [
            {
              namespace: PG,
              dataset: 'shop.orders',
              field: 'amount',
              transformationDescription: 'converted to USD',
              transformationType: 'DIRECT',
              transformations: [
                {
                  type: 'DIRECT',
                  subtype: 'TRANSFORMATION',
                  description: 'converted to USD',
                  masking: false,
                },
              ],
            },
          ],
          transformationDescription: 'converted to USD',
          transformationType: 'DIRECT',
        },
        {
          name: 'id',
          inputFields: [
            {
              namespace: PG,
              dataset: 'shop.orders',
              field: 'id',
              transformationDescription: '',
              transformationType: 'DIRECT',
              transformations: [{ type: 'DIRECT', subtype: 'IDENTITY', description: '', masking: false }],
            },
          ],
          transformationDescription: '',
          transformationType: 'DIRECT',
        },
      ],
      facets: { columnLineage: cleanColumnLineage, schema: cleanSchemaV2 },
      deleted: false,
    });

    // The ownership facet was removed by run 2 (_deleted), so it is gone from the merged view.
    const orders = await ok<DatasetJson>(`/namespaces/${pg}/datasets/shop.orders`);
    expect(orders).toMatchObject({
      sourceName: 'shop-db',
      description: 'Raw orders',
      lastModifiedAt: null,
      fields: [
        { name: 'id', type: 'INTEGER', tags: [], description: 'Order id' },
        { name: 'amount', type: 'DECIMAL', tags: [], description: null },
        { name: 'email', type: 'VARCHAR', tags: [], description: 'Customer email' },
      ],
      facets: {
        dataSource: ordersDataSource,
        documentation: ordersDocumentation,
        schema: ordersSchema,
        // The input facet run 1 reported, merged in as Marquez does.
        dataQualityAssertions: assertions,
      },
    });
    expect(Object.keys(orders.facets).sort()).toEqual([
      'dataQualityAssertions',
      'dataSource',
      'documentation',
      'schema',
    ]);
    // No column lineage leads into shop.orders: Marquez leaves the key out.
    expect('columnLineage' in orders).toBe(false);

    // A DatasetEvent makes a dataset too; names and namespaces with slashes and colons travel URL-encoded.
    const events = await ok(
      `/namespaces/${encodeURIComponent(S3)}/datasets/${encodeURIComponent('/raw/events.parquet')}`,
    );
    expect(events).toMatchObject({
      id: { namespace: S3, name: '/raw/events.parquet' },
      createdAt: at(T0 + 2 * DAY),
      lastModifiedAt: at(T0 + 2 * DAY),
      fields: [{ name: 'ts', type: 'TIMESTAMP', tags: [], description: null }],
      facets: { schema: eventsSchema },
    });
  });

  it('lists dataset versions newest first, each with its creating run and the facets of its time', async () => {
    const body = await ok<Page<'versions', DatasetVersionJson>>(
      `/namespaces/${pg}/datasets/shop.orders_clean/versions`,
    );
    expect(body.totalCount).toBe(2);
    const [v2, v1] = body.versions as [DatasetVersionJson, DatasetVersionJson];
    const run1 = await ok(`/jobs/runs/${RUN_1}`);
    const run2 = await ok(`/jobs/runs/${RUN_2}`);
    const common = {
      id: { namespace: PG, name: 'shop.orders_clean' },
      type: 'DB_TABLE',
      name: 'shop.orders_clean',
      physicalName: 'shop.orders_clean',
      namespace: PG,
      sourceName: 'default',
      tags: [],
      lifecycleState: null,
      description: null,
      currentSchemaVersion: null,
    };
    expect(v1).toEqual({
      ...common,
      createdAt: at(T0),
      version: expect.stringMatching(UUID),
      fields: [
        { name: 'id', type: 'INTEGER', tags: [], description: null },
        { name: 'amount_usd', type: 'DECIMAL', tags: [], description: 'Amount in USD' },
      ],
      createdByRun: run1,
      facets: { columnLineage: cleanColumnLineage, schema: cleanSchema },
    });
    expect(v2).toEqual({
      ...common,
      createdAt: at(T0 + DAY),
      version: expect.stringMatching(UUID),
      fields: [
        { name: 'id', type: 'INTEGER', tags: [], description: null },
        { name: 'amount_usd', type: 'DECIMAL', tags: [], description: 'Amount in USD' },
        { name: 'currency', type: 'VARCHAR', tags: [], description: null },
      ],
      createdByRun: run2,
      facets: { columnLineage: cleanColumnLineage, schema: cleanSchemaV2 },
    });
    expect(await ok(`/namespaces/${pg}/datasets/shop.orders_clean/versions/${v1.version}`)).toEqual(v1);
    expect(await ok(`/namespaces/${pg}/datasets/shop.orders_clean/versions?limit=1&offset=1`)).toEqual({
      versions: [v1],
      totalCount: 2,
    });
    // An input-only dataset's version was not created by a run: explicit null.
    const orders = await ok<Page<'versions', DatasetVersionJson>>(
      `/namespaces/${pg}/datasets/shop.orders/versions`,
    );
    expect(orders.versions.map((version) => version.createdByRun)).toEqual([null]);
    for (const version of [randomUUID(), 'not-a-uuid']) {
      expect((await get(`/namespaces/${pg}/datasets/shop.orders_clean/versions/${version}`)).status).toBe(
        404,
      );
    }
    expect(
      await ok(`/namespaces/${pg}/datasets/shop.orders_clean/versions/${v1.version.toUpperCase()}`),
    ).toEqual(v1);
  });

  // ---- jobs and runs -----------------------------------------------------------------------------------------

  /** Runs 1 and 2 of nightly.load_orders as the API must show them. */
  async function expectedRuns() {
    const [clean, orders] = await Promise.all([
      ok<Page<'versions', DatasetVersionJson>>(`/namespaces/${pg}/datasets/shop.orders_clean/versions`),
      ok<Page<'versions', DatasetVersionJson>>(`/namespaces/${pg}/datasets/shop.orders/versions`),
    ]);
    const jobVersion = (await ok<JobJson>('/namespaces/warehouse/jobs/nightly.load_orders')).currentVersion!;
    const [v2, v1] = clean.versions.map((version) => version.version) as [string, string];
    const ordersVersion = orders.versions[0]!.version;
    const ref = (name: string, version: string, facets = {}) => ({
      datasetVersionId: { namespace: PG, name, version },
      facets,
    });
    const run1 = {
      id: RUN_1,
      createdAt: at(T0),
      updatedAt: at(T0 + 5 * MINUTE),
      nominalStartTime: '2024-05-01T00:00:00.000Z',
      nominalEndTime: '2024-05-02T00:00:00.000Z',
      state: 'COMPLETED',
      startedAt: at(T0),
      endedAt: at(T0 + 5 * MINUTE),
      durationMs: 5 * MINUTE,
      args: {
        nominal_start_time: '2024-05-01T00:00:00Z',
        nominal_end_time: '2024-05-02T00:00:00Z',
        run_id: PARENT_RUN,
        name: 'nightly',
        namespace: 'warehouse',
      },
      jobVersion: { namespace: 'warehouse', name: 'nightly.load_orders', version: jobVersion },
      inputDatasetVersions: [ref('shop.orders', ordersVersion, { dataQualityAssertions: assertions })],
      outputDatasetVersions: [ref('shop.orders_clean', v1, { outputStatistics: statistics })],
      facets: { nominalTime, parent: parentFacet },
      error: null,
    };
    const run2 = {
      id: RUN_2,
      createdAt: at(T0 + DAY),
      updatedAt: at(T0 + DAY + 2 * MINUTE),
      nominalStartTime: null,
      nominalEndTime: null,
      state: 'FAILED',
      startedAt: at(T0 + DAY),
      endedAt: at(T0 + DAY + 2 * MINUTE),
      durationMs: 2 * MINUTE,
      args: {},
      // Same location and datasets: the same job version as run 1.
      jobVersion: { namespace: 'warehouse', name: 'nightly.load_orders', version: jobVersion },
      inputDatasetVersions: [ref('shop.orders', ordersVersion)],
      outputDatasetVersions: [ref('shop.orders_clean', v2)],
      facets: { errorMessage: errorFacet },
      error: { facet: 'errorMessage', message: 'boom', programmingLanguage: 'python', stackTrace: null },
    };
    return { run1, run2, jobVersion };
  }

  it('returns a run with nominal times, args, its job version and the dataset versions it read and wrote', async () => {
    const { run1, run2 } = await expectedRuns();
    expect(await ok(`/jobs/runs/${RUN_1}`)).toEqual(run1);
    expect(await ok(`/jobs/runs/${RUN_2}`)).toEqual(run2);
    // A run with no START (the apples only COMPLETE): startedAt and durationMs are explicit nulls.
    expect(await ok('/jobs/runs/fc57cd10-90ce-49aa-ac91-29d222d66fdf')).toMatchObject({
      state: 'COMPLETED',
      startedAt: null,
      endedAt: '2020-08-29T23:00:00.000Z',
      durationMs: null,
      nominalStartTime: null,
    });
  });

  it('returns a run facets or its job facets as of the run, with type required and case-insensitive', async () => {
    expect(await ok(`/jobs/runs/${RUN_1}/facets?type=run`)).toEqual({
      runId: RUN_1,
      facets: { nominalTime, parent: parentFacet },
    });
    // Run 2 sent no job facets: the job's facets as they stood when it ran.
    for (const type of ['job', 'JOB', 'Job']) {
      expect(await ok(`/jobs/runs/${RUN_2}/facets?type=${type}`)).toEqual({
        runId: RUN_2,
        facets: jobFacets,
      });
    }
    for (const query of ['', '?type=dataset', '?type=']) {
      expect((await get(`/jobs/runs/${RUN_1}/facets${query}`)).status).toBe(400);
    }
  });

  it('returns a job with its parent, current edges, latest runs and latest merged facets', async () => {
    const { run1, run2, jobVersion } = await expectedRuns();
    expect(await ok('/namespaces/warehouse/jobs/nightly.load_orders')).toEqual({
      id: { namespace: 'warehouse', name: 'nightly.load_orders' },
      type: 'BATCH',
      name: 'nightly.load_orders',
      simpleName: 'load_orders',
      parentJobName: 'nightly',
      parentJobUuid: NIGHTLY_UUID,
      createdAt: at(T0),
      updatedAt: at(T0 + DAY + 2 * MINUTE),
      namespace: 'warehouse',
      inputs: [{ namespace: PG, name: 'shop.orders' }],
      outputs: [{ namespace: PG, name: 'shop.orders_clean' }],
      location: 'https://git.example/etl/load_orders.py',
      description: 'Loads orders',
      latestRun: run2,
      latestRuns: [run2, run1],
      facets: jobFacets,
      currentVersion: jobVersion,
      // From the jobType facet: jobType, then integration.
      labels: ['TASK', 'AIRFLOW'],
      tags: [],
    });
    // A job without a parent has no parentJobName/parentJobUuid keys; empty Optionals are null.
    const nightly = await ok<JobJson>('/namespaces/warehouse/jobs/nightly');
    expect(nightly).toMatchObject({
      simpleName: 'nightly',
      location: null,
      description: null,
      facets: {},
      inputs: [],
      outputs: [],
    });
    expect(['parentJobName', 'parentJobUuid'].filter((key) => key in nightly)).toEqual([]);
    // The apples job gather_apples read red.delicious, then only crab.apples: the current edge is the latter.
    expect(await ok('/namespaces/grandmas.kitchen/jobs/gather_apples')).toMatchObject({
      inputs: [{ namespace: 'backyard', name: 'crab.apples' }],
      outputs: [{ namespace: 'grandmas.kitchen', name: 'apples' }],
      latestRun: { id: '155dbf08-c4c5-43e6-bb3a-8095c4ba59b8' },
    });
  });

  it('lists jobs most recently updated first, filtered by the state of their latest run', async () => {
    const names = (body: { jobs: { namespace: string; name: string }[] }) =>
      body.jobs.map((job) => `${job.namespace}/${job.name}`);
    const all = await ok<Page<'jobs', JobJson>>('/jobs');
    expect({ names: names(all), totalCount: all.totalCount }).toEqual({
      names: [
        'live/heartbeat',
        'warehouse/nightly.load_orders',
        'warehouse/nightly',
        'grandmas.kitchen/prepare_vinegar',
        'grandmas.kitchen/prepare_apple_pie',
        'grandmas.kitchen/prepare_apple_filling',
        'grandmas.kitchen/gather_apples',
        'grandmas.kitchen/prepare_apple_cider',
      ],
      totalCount: 8,
    });
    // List entries are the same jobs as fetched one by one (latest runs and facets are batched per page).
    expect(all.jobs[1]).toEqual(await ok('/namespaces/warehouse/jobs/nightly.load_orders'));
    const page = await ok<Page<'jobs', JobJson>>('/jobs?limit=2&offset=2');
    expect({ names: names(page), totalCount: page.totalCount }).toEqual({
      names: ['warehouse/nightly', 'grandmas.kitchen/prepare_vinegar'],
      totalCount: 8,
    });
    const failed = await ok<Page<'jobs', JobJson>>('/jobs?lastRunStates=failed');
    expect({ names: names(failed), totalCount: failed.totalCount }).toEqual({
      names: ['live/heartbeat', 'warehouse/nightly.load_orders'],
      totalCount: 2,
    });
    const both = await ok<Page<'jobs', JobJson>>(
      '/jobs?lastRunStates=FAILED&lastRunStates=Completed&limit=3',
    );
    expect({ names: names(both), totalCount: both.totalCount }).toEqual({
      names: ['live/heartbeat', 'warehouse/nightly.load_orders', 'warehouse/nightly'],
      totalCount: 8,
    });
    expect(await ok('/jobs?lastRunStates=ABORTED')).toEqual({ jobs: [], totalCount: 0 });
    expect((await get('/jobs?lastRunStates=DONE')).status).toBe(400);
    const warehouse = await ok<Page<'jobs', JobJson>>('/namespaces/warehouse/jobs?lastRunStates=completed');
    expect({ names: names(warehouse), totalCount: warehouse.totalCount }).toEqual({
      names: ['warehouse/nightly'],
      totalCount: 1,
    });
    expect((await ok<Page<'jobs', JobJson>>('/namespaces/warehouse/jobs')).totalCount).toBe(2);
  });

  it('lists the runs of a job newest first, and its versions', async () => {
    const { run1, run2, jobVersion } = await expectedRuns();
    expect(await ok('/namespaces/warehouse/jobs/nightly.load_orders/runs')).toEqual({
      runs: [run2, run1],
      totalCount: 2,
    });
    expect(await ok('/namespaces/warehouse/jobs/nightly.load_orders/runs?limit=1&offset=1')).toEqual({
      runs: [run1],
      totalCount: 2,
    });
    // Runs that never STARTed sort by their first event.
    const apples = await ok<Page<'runs', RunJson>>('/namespaces/grandmas.kitchen/jobs/gather_apples/runs');
    expect(apples.runs.map((run) => run.id)).toEqual([
      '155dbf08-c4c5-43e6-bb3a-8095c4ba59b8',
      'fc57cd10-90ce-49aa-ac91-29d222d66fdf',
    ]);

    const version = {
      id: { namespace: 'warehouse', name: 'nightly.load_orders', version: jobVersion },
      name: 'nightly.load_orders',
      createdAt: at(T0),
      version: jobVersion,
      namespace: 'warehouse',
      location: 'https://git.example/etl/load_orders.py',
      inputs: [{ namespace: PG, name: 'shop.orders' }],
      outputs: [{ namespace: PG, name: 'shop.orders_clean' }],
      latestRun: run2,
    };
    // Marquez gives job versions no totalCount.
    expect(await ok('/namespaces/warehouse/jobs/nightly.load_orders/versions')).toEqual({
      versions: [version],
    });
    expect(await ok(`/namespaces/warehouse/jobs/nightly.load_orders/versions/${jobVersion}`)).toEqual(
      version,
    );
    const gather = await ok<{ versions: JobVersionJson[] }>(
      '/namespaces/grandmas.kitchen/jobs/gather_apples/versions',
    );
    expect(gather.versions.map((entry) => entry.inputs)).toEqual([
      [{ namespace: 'backyard', name: 'crab.apples' }],
      [{ namespace: 'laurents-orchard', name: 'red.delicious' }],
    ]);
    expect(
      (await get(`/namespaces/warehouse/jobs/nightly.load_orders/versions/${randomUUID()}`)).status,
    ).toBe(404);
    expect((await get('/namespaces/warehouse/jobs/nightly.load_orders/versions/latest')).status).toBe(404);
  });

  // ---- search ------------------------------------------------------------------------------------------------

  it('searches names case-insensitively, really sorted, with offset and a true totalCount', async () => {
    const result = (type: string, namespace: string, name: string, updatedAt: string) => ({
      type,
      name,
      updatedAt,
      namespace,
      nodeId: `${type === 'DATASET' ? 'dataset' : 'job'}:${namespace}:${name}`,
    });
    const k = 'grandmas.kitchen';
    const byName = [
      result('DATASET', k, 'apple.cider', '2020-10-28T09:52:00.001Z'),
      result('DATASET', k, 'apple.filling', '2020-10-16T05:00:00.000Z'),
      result('DATASET', k, 'apple.pie', '2020-10-16T05:00:00.000Z'),
      result('DATASET', 'cupboard', 'apple.vinegar', '2020-10-28T09:52:00.001Z'),
      result('DATASET', k, 'apples', '2020-10-15T05:00:00.000Z'),
      result('DATASET', 'backyard', 'crab.apples', '2020-10-15T03:00:00.000Z'),
      result('JOB', k, 'gather_apples', '2020-10-15T03:00:00.000Z'),
      result('JOB', k, 'prepare_apple_cider', '2020-09-29T02:00:00.000Z'),
      result('JOB', k, 'prepare_apple_filling', '2020-10-15T05:00:00.000Z'),
      result('JOB', k, 'prepare_apple_pie', '2020-10-16T05:00:00.000Z'),
    ];
    expect(await ok('/search?q=APPLE')).toEqual({ totalCount: 10, results: byName });
    expect(await ok('/search?q=apple&sort=name&limit=3&offset=3')).toEqual({
      totalCount: 10,
      results: byName.slice(3, 6),
    });
    const byUpdate = await ok<Search>('/search?q=apple&sort=UPDATED_AT');
    expect(byUpdate.results.map((entry) => entry.name)).toEqual([
      'apple.cider',
      'apple.vinegar',
      'apple.filling',
      'apple.pie',
      'prepare_apple_pie',
      'apples',
      'prepare_apple_filling',
      'crab.apples',
      'gather_apples',
      'prepare_apple_cider',
    ]);
    expect(await ok('/search?q=apple&filter=job&limit=2')).toEqual({
      totalCount: 4,
      results: byName.slice(6, 8),
    });
    expect(await ok('/search?q=apple&filter=DATASET&namespace=cupboard')).toEqual({
      totalCount: 1,
      results: [byName[3]],
    });
    expect((await ok<Search>('/search?q=apple&after=2020-10-16')).results.map((entry) => entry.name)).toEqual(
      ['apple.cider', 'apple.filling', 'apple.pie', 'apple.vinegar', 'prepare_apple_pie'],
    );
    expect(await ok('/search?q=apple&before=2020-10-01')).toEqual({ totalCount: 1, results: [byName[7]] });
    // LIKE wildcards in q are literal characters.
    expect(await ok('/search?q=%25')).toEqual({ totalCount: 0, results: [] });
    // ('e_a' as a pattern would also match prepare_vinegar.)
    expect((await ok<Search>('/search?q=e_a')).results.map((entry) => entry.name)).toEqual([
      'prepare_apple_cider',
      'prepare_apple_filling',
      'prepare_apple_pie',
    ]);
    for (const query of [
      '',
      '?q=',
      '?q=%20%20',
      '?q=a&filter=table',
      '?q=a&sort=size',
      '?q=a&before=yesterday',
    ]) {
      expect({ query, status: (await get(`/search${query}`)).status }).toEqual({ query, status: 400 });
    }
  });

  // ---- stats -------------------------------------------------------------------------------------------------

  it('counts run events per hour over the last day, and per local day over the last week', async () => {
    type Bucket = {
      startInterval: string;
      endInterval: string;
      fail: number;
      start: number;
      complete: number;
      abort: number;
    };
    const expected = (buckets: Bucket[], offsetMs: number) =>
      buckets.map((bucket) => {
        // WEEK labels are local midnights written as UTC (Marquez): the true instant is the label minus the offset.
        const from = Date.parse(bucket.startInterval) - offsetMs;
        const to = Date.parse(bucket.endInterval) - offsetMs;
        const count = (type: string) =>
          liveEvents.filter(([eventType, time]) => eventType === type && time >= from && time < to).length;
        return {
          ...bucket,
          fail: count('FAIL'),
          start: count('START'),
          complete: count('COMPLETE'),
          abort: count('ABORT'),
        };
      });
    const day = await ok<Bucket[]>('/stats/lineage-events?period=day');
    expect(day).toHaveLength(24);
    const currentHour = Math.floor(Date.now() / HOUR) * HOUR;
    expect(day.map((bucket) => [bucket.startInterval, bucket.endInterval])).toEqual(
      Array.from({ length: 24 }, (_, i) => [
        at(currentHour - (23 - i) * HOUR),
        at(currentHour - (22 - i) * HOUR),
      ]),
    );
    expect(day).toEqual(expected(day, 0));
    const totals = (buckets: Bucket[]) =>
      buckets.reduce(
        (sum, b) => [sum[0]! + b.start, sum[1]! + b.complete, sum[2]! + b.fail, sum[3]! + b.abort],
        [0, 0, 0, 0],
      );
    expect(totals(day)).toEqual([2, 1, 1, 0]);

    const TOKYO = 9 * HOUR; // no daylight saving time
    const week = await ok<Bucket[]>('/stats/lineage-events?period=WEEK&timezone=Asia/Tokyo');
    const tokyoToday = Math.floor((Date.now() + TOKYO) / DAY) * DAY;
    expect(week.map((bucket) => bucket.startInterval)).toEqual(
      Array.from({ length: 7 }, (_, i) => at(tokyoToday - (6 - i) * DAY)),
    );
    expect(week).toEqual(expected(week, TOKYO));
    expect(totals(week)).toEqual([3, 1, 1, 1]);

    for (const query of ['', '?period=WEEK', '?period=week&timezone=Mars/Olympus', '?period=month']) {
      const reply = await get(`/stats/lineage-events${query}`);
      expect({ query, status: reply.status }).toEqual({ query, status: 400 });
    }
    expect((await get('/stats/lineage-events?period=WEEK')).body.message).toContain('timezone is required');
  });

  it('counts jobs, datasets and sources cumulatively by creation', async () => {
    // Everything but the live namespace was created in 2020 and 2024; heartbeat and pulse three days ago.
    const created = now - 3 * DAY;
    for (const [entity, before, recent] of [
      ['jobs', 7, 1],
      ['datasets', 12, 1],
      ['sources', 2, 0],
    ] as const) {
      const day = await ok<CountBucket[]>(`/stats/${entity}?period=DAY`);
      expect(day).toHaveLength(24);
      expect(new Set(day.map((bucket) => bucket.count))).toEqual(new Set([before + recent]));
      const week = await ok<CountBucket[]>(`/stats/${entity}?period=week&timezone=UTC`);
      expect(week.map((bucket) => bucket.count)).toEqual(
        week.map((bucket) => before + (created < Date.parse(bucket.endInterval) ? recent : 0)),
      );
      expect((await get(`/stats/${entity}?period=WEEK`)).status).toBe(400);
    }
  });

  it('reads any page with a fixed, small number of queries (no N+1)', async () => {
    const { db } = ctx.server;
    const queriesFor = async (path: string) => {
      const spy = vi.spyOn(db, 'query');
      try {
        await ok(path);
        // The security layer's key lookups (src/security/keys.ts) and the replication's once-a-second polls of
        // the commit feed and the lease (src/replica), which may fall inside the request, are not part of it.
        return spy.mock.calls.filter(([sql]) => !/api_keys|commit_feed|writer_lease/.test(String(sql)))
          .length;
      } finally {
        spy.mockRestore();
      }
    };
    for (const [path, expected] of [
      ['/jobs?limit=1', 6],
      ['/jobs?limit=100', 6],
      // Datasets: two more for the input facets merged into their facets and their latest assertion results.
      ['/namespaces/grandmas.kitchen/datasets?limit=1', 6],
      ['/namespaces/grandmas.kitchen/datasets?limit=100', 6],
      [`/namespaces/${pg}/datasets/shop.orders_clean`, 5],
      ['/namespaces/warehouse/jobs/nightly.load_orders', 5],
      ['/namespaces/warehouse/jobs/nightly.load_orders/runs?limit=1', 4],
      ['/namespaces/warehouse/jobs/nightly.load_orders/runs?limit=100', 4],
      [`/namespaces/${pg}/datasets/shop.orders_clean/versions`, 7],
      [`/jobs/runs/${RUN_1}`, 3],
      ['/search?q=apple', 2],
    ] as const) {
      expect({ path, queries: await queriesFor(path) }).toEqual({ path, queries: expected });
    }
  });

  it('builds lineage node data (DatasetData, JobData) that agrees with the Dataset and Job shapes', async () => {
    const { readModel: state, graph, db } = ctx.server;
    const clean = state.datasets.get(entityKey(state.namespaces.get(PG)!.id, 'shop.orders_clean'))!;
    const job = state.jobs.get(entityKey(state.namespaces.get('warehouse')!.id, 'nightly.load_orders'))!;
    const datasets = await loadDatasetNodeData(db, [clean.id, 999_999]);
    const jobs = await loadJobNodeData({ db, state, graph }, [job.id]);
    const {
      currentVersion: _version,
      columnLineage: _lineage,
      facets: _facets,
      deleted: _deleted,
      ...datasetData
    } = await ok<DatasetJson>(`/namespaces/${pg}/datasets/shop.orders_clean`);
    expect([...datasets]).toEqual([[clean.id, datasetData]]);
    const {
      latestRuns,
      facets: _jobFacets,
      currentVersion: _jobVersion,
      labels: _labels,
      tags: _tags,
      ...jobData
    } = await ok<JobJson>('/namespaces/warehouse/jobs/nightly.load_orders');
    expect([...jobs]).toEqual([[job.id, { ...jobData, currentRunUuid: latestRuns![0]!.id }]]);
  });

  // ---- writes: namespaces, tags, soft delete ------------------------------------------------------------------

  it('creates and updates a namespace with PUT, which ingest then leaves alone', async () => {
    const before = Date.now();
    const created = await call<NamespaceJson>('PUT', '/namespaces/finance', {
      ownerName: 'alice',
      description: 'Money',
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      name: 'finance',
      createdAt: created.body.updatedAt,
      updatedAt: expect.any(String),
      ownerName: 'alice',
      description: 'Money',
      isHidden: false,
    });
    expect(Date.parse(created.body.createdAt)).toBeGreaterThanOrEqual(before);
    expect(await ok('/namespaces/finance')).toEqual(created.body);

    // An update without description keeps it.
    const updated = await call<NamespaceJson>('PUT', '/namespaces/finance', { ownerName: 'bob' });
    expect(updated.body).toMatchObject({ ownerName: 'bob', description: 'Money' });
    // An event in the namespace does not touch owner or description, and the writer keeps the id it was given.
    await post({
      eventTime: at(T0),
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
      dataset: { namespace: 'finance', name: 'ledger', facets: {} },
    });
    expect(await ok('/namespaces/finance')).toMatchObject({
      ownerName: 'bob',
      description: 'Money',
      createdAt: at(T0),
    });
    expect(
      (await ok<Page<'datasets', DatasetJson>>('/namespaces/finance/datasets')).datasets.map((d) => d.name),
    ).toEqual(['ledger']);
    // A namespace created by an event can be given an owner.
    expect((await call<NamespaceJson>('PUT', `/namespaces/${pg}`, { ownerName: 'dba' })).body).toMatchObject({
      name: PG,
      ownerName: 'dba',
    });

    for (const [path, body] of [
      ['/namespaces/finance', {}],
      ['/namespaces/finance', { ownerName: '' }],
      ['/namespaces/finance', '{"ownerName":'],
      ['/namespaces/finance', { ownerName: 'x', description: { text: 'no' } }],
      [`/namespaces/${encodeURIComponent('bad name')}`, { ownerName: 'x' }],
    ] as const) {
      const reply = await call('PUT', path, body);
      expect({ path, body, status: reply.status }).toEqual({ path, body, status: 400 });
    }
  });

  it('creates tags, and tags datasets, fields (upper-cased) and jobs', async () => {
    expect(await ok('/tags')).toEqual({
      tags: [
        { name: 'PII', description: 'Personally identifiable information' },
        { name: 'SENSITIVE', description: 'Contains sensitive information' },
      ],
    });
    expect(await call('PUT', '/tags/GOLD', { description: 'Curated' })).toEqual({
      status: 200,
      body: { name: 'GOLD', description: 'Curated' },
    });
    expect(
      (await call<TagJson>('PUT', '/tags/GOLD', { description: 'Curated, checked' })).body.description,
    ).toBe('Curated, checked');

    const orders = `/namespaces/${pg}/datasets/shop.orders`;
    const tagged = await call<DatasetJson>('POST', `${orders}/tags/finance`);
    expect({ status: tagged.status, tags: tagged.body.tags }).toEqual({ status: 200, tags: ['finance'] });
    expect((await call<DatasetJson>('POST', `${orders}/tags/GOLD`)).body.tags).toEqual(['GOLD', 'finance']);
    const field = await call<DatasetJson>('POST', `${orders}/fields/email/tags/pii`);
    expect(field.body.fields.find((f) => f.name === 'email')!.tags).toEqual(['PII']);
    expect((await ok<DatasetJson>(orders)).tags).toEqual(['GOLD', 'finance']);
    // Tags show in versions too, and a missing tag was created with no description.
    expect(
      (await ok<Page<'versions', DatasetVersionJson>>(`${orders}/versions`)).versions[0]!.fields[2]!.tags,
    ).toEqual(['PII']);
    expect((await ok<{ tags: TagJson[] }>('/tags')).tags).toContainEqual({
      name: 'finance',
      description: null,
    });

    expect((await call('POST', `${orders}/fields/nope/tags/PII`)).status).toBe(404);
    expect((await call('POST', `/namespaces/${pg}/datasets/nothing/tags/PII`)).status).toBe(404);
    expect(
      (await call<DatasetJson>('DELETE', `${orders}/fields/email/tags/Pii`)).body.fields[2]!.tags,
    ).toEqual([]);
    expect((await call<DatasetJson>('DELETE', `${orders}/tags/finance`)).body.tags).toEqual(['GOLD']);

    const job = '/namespaces/warehouse/jobs/nightly';
    expect((await call<JobJson>('POST', `${job}/tags/critical`)).body.tags).toEqual(['critical']);
    expect(
      (await ok<Page<'jobs', JobJson>>('/jobs?limit=100')).jobs.find((j) => j.name === 'nightly')!.tags,
    ).toEqual(['critical']);
    expect((await call<JobJson>('DELETE', `${job}/tags/critical`)).body.tags).toEqual([]);
    expect((await call('POST', '/namespaces/warehouse/jobs/nothing/tags/x')).status).toBe(404);
  });

  it('soft-deletes datasets, jobs and namespaces until an event names them again', async () => {
    const copy = (time: number, outputs = [{ namespace: 'scratch', name: 'b' }]) =>
      runEvent({
        eventType: 'COMPLETE',
        time,
        runId: 'scratch-run',
        job: 'copy',
        namespace: 'scratch',
        inputs: [{ namespace: 'scratch', name: 'a' }],
        outputs,
      });
    await post(copy(T0));
    const datasetNames = async () => {
      const body = await ok<Page<'datasets', DatasetJson>>('/namespaces/scratch/datasets');
      return { names: body.datasets.map((d) => d.name), totalCount: body.totalCount };
    };
    expect(await datasetNames()).toEqual({ names: ['a', 'b'], totalCount: 2 });
    // A producer's runId that is not a UUID finds its run too.
    const [run] = (await ok<Page<'runs', RunJson>>('/namespaces/scratch/jobs/copy/runs')).runs;
    expect(await ok('/jobs/runs/scratch-run')).toEqual(run);

    // Dataset: DELETE answers with the dataset, then it is gone from reads, search and its job's edges.
    const b = await ok('/namespaces/scratch/datasets/b');
    expect(await call('DELETE', '/namespaces/scratch/datasets/b')).toEqual({ status: 200, body: b });
    expect((await get('/namespaces/scratch/datasets/b')).status).toBe(404);
    expect((await call('DELETE', '/namespaces/scratch/datasets/b')).status).toBe(404);
    expect(await datasetNames()).toEqual({ names: ['a'], totalCount: 1 });
    expect((await ok<JobJson>('/namespaces/scratch/jobs/copy')).outputs).toEqual([]);
    expect((await ok<Search>('/search?q=b&namespace=scratch&filter=dataset')).totalCount).toBe(0);
    await post(copy(T0 + MINUTE));
    expect((await ok<DatasetJson>('/namespaces/scratch/datasets/b')).name).toBe('b');
    expect((await ok<JobJson>('/namespaces/scratch/jobs/copy')).outputs).toEqual([
      { namespace: 'scratch', name: 'b' },
    ]);

    // Job.
    const job = await ok('/namespaces/scratch/jobs/copy');
    expect(await call('DELETE', '/namespaces/scratch/jobs/copy')).toEqual({ status: 200, body: job });
    expect((await get('/namespaces/scratch/jobs/copy')).status).toBe(404);
    expect(await ok('/namespaces/scratch/jobs')).toEqual({ jobs: [], totalCount: 0 });
    expect((await ok<Page<'jobs', JobJson>>('/jobs')).jobs.some((j) => j.namespace === 'scratch')).toBe(
      false,
    );
    await post(copy(T0 + 2 * MINUTE));
    expect((await ok<Page<'jobs', JobJson>>('/namespaces/scratch/jobs')).totalCount).toBe(1);

    // Namespace: everything in it is hidden; the namespace stays listed with isHidden true (the UI filters).
    const namespace = await ok<NamespaceJson>('/namespaces/scratch');
    expect(await call('DELETE', '/namespaces/scratch')).toEqual({ status: 200, body: namespace });
    expect(await ok('/namespaces/scratch')).toEqual({ ...namespace, isHidden: true });
    expect(
      (await ok<{ namespaces: NamespaceJson[] }>('/namespaces')).namespaces.find((n) => n.name === 'scratch')!
        .isHidden,
    ).toBe(true);
    expect(await datasetNames()).toEqual({ names: [], totalCount: 0 });
    expect((await ok<Page<'jobs', JobJson>>('/namespaces/scratch/jobs')).totalCount).toBe(0);
    expect((await get('/namespaces/scratch/jobs/copy')).status).toBe(404);
    // An event naming the job and dataset a (not b) brings back the namespace, the job and a only.
    await post(copy(T0 + 3 * MINUTE, []));
    expect((await ok<NamespaceJson>('/namespaces/scratch')).isHidden).toBe(false);
    expect(await datasetNames()).toEqual({ names: ['a'], totalCount: 1 });
    expect((await ok<JobJson>('/namespaces/scratch/jobs/copy')).inputs).toEqual([
      { namespace: 'scratch', name: 'a' },
    ]);
    expect((await call('DELETE', '/namespaces/nowhere')).status).toBe(404);
  });

  it('publishes every read route in the OpenAPI document', () => {
    const routes = documented.map((entry) => `${entry.method} ${entry.template}`);
    for (const route of [
      'GET /api/v1/namespaces',
      'PUT /api/v1/namespaces/{namespace}',
      'DELETE /api/v1/namespaces/{namespace}',
      'GET /api/v1/sources/{source}',
      'GET /api/v1/namespaces/{namespace}/datasets/{dataset}/versions/{version}',
      'POST /api/v1/namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}',
      'GET /api/v1/jobs',
      'GET /api/v1/namespaces/{namespace}/jobs/{job}/runs',
      'GET /api/v1/jobs/runs/{id}/facets',
      'PUT /api/v1/tags/{tag}',
      'GET /api/v1/search',
      'GET /api/v1/stats/lineage-events',
      'GET /api/v1/stats/sources',
    ]) {
      expect(routes).toContain(route);
    }
    expect(
      documented.every((entry) => entry.validators.size > 0 || !entry.template.startsWith('/api/v1/')),
    ).toBe(true);
  });
});
