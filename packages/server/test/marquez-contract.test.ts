/**
 * What the unmodified Marquez web UI and the Marquez clients send and read, pinned: the parameters they use,
 * the shapes they parse, and the 400s a schema-driven client can expect instead of a 500.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';
import { DAY, MINUTE, PRODUCER, T0, at, runEvent } from './read-scenario.js';

const DATASET_EVENT = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent';
const JOB_EVENT = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent';
const facet = (name: string, body: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json`,
  ...body,
});

interface Reply<T> {
  status: number;
  body: T;
}
interface ErrorBody {
  code: number;
  error: string;
  message: string;
}

describe.each(backends())('Marquez client contract on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  async function call<T = ErrorBody>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
    const response = await ctx.request(`${path}`, {
      method,
      ...(body === undefined
        ? {}
        : {
            body: typeof body === 'string' ? body : JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }
  const get = <T = ErrorBody>(path: string) => call<T>('GET', path);
  const post = async (event: unknown) => {
    const reply = await call('POST', '/api/v1/lineage', event);
    expect(reply.status).toBe(201);
  };
  /** Posts a COMPLETE event of a new run at T0 (unless said otherwise). */
  const complete = (options: Partial<Parameters<typeof runEvent>[0]> & { job: string; namespace: string }) =>
    post(runEvent({ eventType: 'COMPLETE', time: T0, runId: randomUUID(), ...options }));

  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  describe('search', () => {
    beforeAll(async () => {
      await complete({ job: 'search_me_older', namespace: 'contract' });
      await complete({ time: T0 + DAY, job: 'search_me_newer', namespace: 'contract' });
    });

    it.each(['UPDATE_AT', 'update_at', 'UPDATED_AT', 'updated_at'])(
      'accepts sort=%s (the Marquez UI and Java client send UPDATE_AT) and sorts newest first',
      async (sort) => {
        const reply = await get<{ results: { name: string }[] }>(
          `/api/v1/search?q=search_me&sort=${sort}&namespace=contract`,
        );
        expect(reply.status).toBe(200);
        expect(reply.body.results.map((r) => r.name)).toEqual(['search_me_newer', 'search_me_older']);
      },
    );

    it.each(['NAME', 'name'])('accepts sort=%s and sorts by name', async (sort) => {
      const reply = await get<{ results: { name: string }[] }>(
        `/api/v1/search?q=search_me&sort=${sort}&namespace=contract`,
      );
      expect(reply.body.results.map((r) => r.name)).toEqual(['search_me_newer', 'search_me_older']);
    });

    it('rejects an unknown sort with a 400 naming the accepted values', async () => {
      const reply = await get('/api/v1/search?q=search_me&sort=size');
      expect(reply.status).toBe(400);
      expect(reply.body.message).toContain('UPDATE_AT');
    });
  });

  describe('GET /api/v1/events/lineage', () => {
    const window = `after=${encodeURIComponent(at(T0 + 10 * DAY))}&before=${encodeURIComponent(at(T0 + 11 * DAY))}`;
    const runId = randomUUID();
    beforeAll(async () => {
      const t = T0 + 10 * DAY;
      await post(runEvent({ eventType: 'START', time: t, runId, job: 'events_job', namespace: 'contract' }));
      await post({
        eventTime: at(t + MINUTE),
        producer: PRODUCER,
        schemaURL: DATASET_EVENT,
        dataset: { namespace: 'contract', name: 'events_dataset', facets: {} },
      });
      await post({
        eventTime: at(t + 2 * MINUTE),
        producer: PRODUCER,
        schemaURL: JOB_EVENT,
        job: { namespace: 'contract', name: 'events_static_job', facets: {} },
        inputs: [],
        outputs: [],
      });
    });

    it('lists RunEvents only by default, as Marquez (its UI reads event.run.runId of every event)', async () => {
      const reply = await get<{ events: { run?: { runId: string } }[]; totalCount: number }>(
        `/api/v1/events/lineage?${window}`,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.events.map((event) => event.run?.runId)).toEqual([runId]);
      expect(reply.body.totalCount).toBe(1);
    });

    it('lists DatasetEvents and JobEvents when asked with kind', async () => {
      const reply = await get<{ events: Record<string, unknown>[]; totalCount: number }>(
        `/api/v1/events/lineage?${window}&kind=run&kind=dataset&kind=JOB&sortDirection=asc`,
      );
      expect(reply.status).toBe(200);
      expect(
        reply.body.events.map((event) =>
          Object.keys(event).find((k) => k === 'run' || k === 'dataset' || k === 'job'),
        ),
      ).toEqual(['run', 'dataset', 'job']);
      expect(reply.body.totalCount).toBe(3);
      const datasets = await get<{ events: unknown[] }>(`/api/v1/events/lineage?${window}&kind=dataset`);
      expect(datasets.body.events).toHaveLength(1);
      expect((await get(`/api/v1/events/lineage?${window}&kind=table`)).status).toBe(400);
    });

    it('takes times without seconds, as the Marquez Java client sends them (2025-03-15T00:00Z)', async () => {
      // ZonedDateTime.toString() leaves out zero seconds; Marquez parses it with ZonedDateTime.parse.
      const minutes = (ms: number) => at(ms).slice(0, 16);
      const reply = await get<{ events: { run?: { runId: string } }[] }>(
        `/api/v1/events/lineage?after=${minutes(T0 + 10 * DAY)}Z&before=${encodeURIComponent(`${minutes(T0 + 11 * DAY)}+00:00`)}`,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.events.map((event) => event.run?.runId)).toEqual([runId]);
      // A later `after` with its offset: nothing is in the window, so the time was read, not ignored.
      const later = await get<{ events: unknown[] }>(
        `/api/v1/events/lineage?after=${minutes(T0 + 10 * DAY + 3 * MINUTE)}Z`,
      );
      expect(later.body.events).toEqual([]);
      expect((await get(`/api/v1/events/lineage?before=2025-03-15T00Z`)).status).toBe(400);
    });

    it('takes enum values in any case (sortDirection, kind)', async () => {
      const reply = await get<{ events: Record<string, unknown>[] }>(
        `/api/v1/events/lineage?${window}&kind=Run&kind=dataset&sortDirection=Asc`,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.events.map((event) => ('run' in event ? 'run' : 'dataset'))).toEqual([
        'run',
        'dataset',
      ]);
    });
  });

  describe('bad input is a clear 400', () => {
    it.each([
      '/api/v1/namespaces?limit=99999999999999999999',
      '/api/v1/namespaces?offset=99999999999999999999',
      '/api/v1/namespaces?limit=9223372036854775807',
      '/api/v1/search?q=a&limit=18446744073709551616',
      '/api/v1/events/lineage?offset=99999999999999999999',
      '/api/v1/jobs?limit=1e30',
    ])('GET %s', async (path) => {
      const reply = await get(path);
      expect({ status: reply.status, error: reply.body.error }).toEqual({
        status: 400,
        error: 'BAD_REQUEST',
      });
      expect(reply.body.message).toMatch(/limit|offset/);
    });

    it('a NUL character in a namespace description or owner', async () => {
      const reply = await call('PUT', '/api/v1/namespaces/contract_nul', {
        ownerName: 'me',
        description: 'bad\u0000text',
      });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toContain('description');
      const owner = await call('PUT', '/api/v1/namespaces/contract_nul', { ownerName: 'm\u0000e' });
      expect(owner.status).toBe(400);
      expect((await get('/api/v1/namespaces/contract_nul')).status).toBe(404);
    });

    it('a NUL character in a tag description', async () => {
      const reply = await call('PUT', '/api/v1/tags/contract_nul', { description: 'bad\u0000text' });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toContain('description');
    });

    it.each([false, true, 0, 12, ['x'], { a: 1 }])(
      'a description of %j (not stored as text)',
      async (value) => {
        const namespace = await call('PUT', '/api/v1/namespaces/contract_typed', {
          ownerName: 'me',
          description: value,
        });
        expect(namespace.status).toBe(400);
        expect(namespace.body.message).toContain('description');
        const tag = await call('PUT', '/api/v1/tags/contract_typed', { description: value });
        expect(tag.status).toBe(400);
        const owner = await call('PUT', '/api/v1/namespaces/contract_typed', { ownerName: value });
        expect(owner.status).toBe(400);
      },
    );

    it('a description of null or text is still fine', async () => {
      const reply = await call<{ description: string | null }>('PUT', '/api/v1/namespaces/contract_null', {
        ownerName: 'me',
        description: null,
      });
      expect(reply.status).toBe(200);
      expect(reply.body.description).toBeNull();
      const tag = await call<{ description: string | null }>('PUT', '/api/v1/tags/contract_typed', {
        description: 'ok',
      });
      expect(tag.body.description).toBe('ok');
    });
  });

  describe('long names', () => {
    const job = `job_${'j'.repeat(300)}`;
    const dataset = `schema.${'d'.repeat(400)}`;
    beforeAll(async () => {
      await complete({
        job,
        namespace: 'contract',
        outputs: [{ namespace: 'contract', name: dataset, facets: {} }],
      });
    });

    it('a job and a dataset named with hundreds of characters are reachable by name', async () => {
      const jobReply = await get<{ name: string }>(`/api/v1/namespaces/contract/jobs/${job}`);
      expect({ status: jobReply.status, name: jobReply.body.name }).toEqual({ status: 200, name: job });
      const runs = await get<{ runs: unknown[] }>(`/api/v1/namespaces/contract/jobs/${job}/runs`);
      expect(runs.body.runs).toHaveLength(1);
      const datasetReply = await get<{ name: string }>(
        `/api/v1/namespaces/contract/datasets/${encodeURIComponent(dataset)}`,
      );
      expect({ status: datasetReply.status, name: datasetReply.body.name }).toEqual({
        status: 200,
        name: dataset,
      });
    });
  });

  describe('jobs: labels, tags and ownership from job facets', () => {
    beforeAll(async () => {
      await complete({
        job: 'labelled_dag',
        namespace: 'contract',
        jobFacets: {
          jobType: facet('JobTypeJobFacet', {
            processingType: 'BATCH',
            integration: 'AIRFLOW',
            jobType: 'DAG',
          }),
          tags: facet('TagsJobFacet', {
            tags: [
              { key: 'pii', value: 'true', source: 'USER' },
              { key: 'team', value: 'sales' },
            ],
          }),
          ownership: facet('OwnershipJobFacet', { owners: [{ name: 'team:data', type: 'TEAM' }] }),
        },
      });
      expect((await call('POST', '/api/v1/namespaces/contract/jobs/labelled_dag/tags/MANUAL')).status).toBe(
        200,
      );
    });

    it('labels come from the jobType facet (jobType, then integration), tags from the tags facet and the API', async () => {
      const job = await get<{
        labels: string[];
        tags: string[];
        facets: Record<string, { owners?: unknown[] }>;
      }>('/api/v1/namespaces/contract/jobs/labelled_dag');
      expect(job.body.labels).toEqual(['DAG', 'AIRFLOW']);
      expect(job.body.tags).toEqual(['MANUAL', 'pii', 'team:sales']);
      expect(job.body.facets.ownership?.owners).toEqual([{ name: 'team:data', type: 'TEAM' }]);
      const list = await get<{ jobs: { name: string; labels: string[]; tags: string[] }[] }>(
        '/api/v1/namespaces/contract/jobs?limit=1000',
      );
      const listed = list.body.jobs.find((j) => j.name === 'labelled_dag')!;
      expect({ labels: listed.labels, tags: listed.tags }).toEqual({
        labels: ['DAG', 'AIRFLOW'],
        tags: ['MANUAL', 'pii', 'team:sales'],
      });
    });
  });

  describe('datasets: input facets, symlinks', () => {
    const quality = facet('DataQualityAssertionsDatasetFacet', {
      assertions: [{ assertion: 'not_null', success: false, column: 'id' }],
    });
    beforeAll(async () => {
      await complete({
        job: 'check_orders',
        namespace: 'contract',
        inputs: [
          {
            namespace: 'contract',
            name: 'facet_orders',
            facets: {
              schema: facet('SchemaDatasetFacet', { fields: [{ name: 'id', type: 'INTEGER' }] }),
              symlinks: facet('SymlinksDatasetFacet', {
                identifiers: [{ namespace: 'hive://metastore', name: 'sales.orders', type: 'TABLE' }],
              }),
            },
            inputFacets: { dataQualityAssertions: quality },
          },
        ],
      });
    });

    it("a dataset's facets merge its input facets, as Marquez (its UI's Quality column reads them)", async () => {
      const dataset = await get<{ facets: Record<string, unknown> }>(
        '/api/v1/namespaces/contract/datasets/facet_orders',
      );
      expect(dataset.body.facets.dataQualityAssertions).toEqual(quality);
      expect(dataset.body.facets.schema).toBeDefined();
      const list = await get<{ datasets: { name: string; facets: Record<string, unknown> }[] }>(
        '/api/v1/namespaces/contract/datasets?limit=1000',
      );
      expect(list.body.datasets.find((d) => d.name === 'facet_orders')!.facets.dataQualityAssertions).toEqual(
        quality,
      );
    });

    it('a symlink identifier names the dataset, and its namespace exists', async () => {
      const hive = encodeURIComponent('hive://metastore');
      const dataset = await get<{ id: { namespace: string; name: string } }>(
        `/api/v1/namespaces/${hive}/datasets/sales.orders`,
      );
      expect({ status: dataset.status, id: dataset.body.id }).toEqual({
        status: 200,
        id: { namespace: 'contract', name: 'facet_orders' },
      });
      const namespace = await get<{ name: string }>(`/api/v1/namespaces/${hive}`);
      expect({ status: namespace.status, name: namespace.body.name }).toEqual({
        status: 200,
        name: 'hive://metastore',
      });
      const lineage = await get<{ graph: { id: string }[] }>(
        `/api/v1/lineage?nodeId=${encodeURIComponent('dataset:hive://metastore:sales.orders')}`,
      );
      expect(lineage.body.graph.map((n) => n.id)).toContain('dataset:contract:facet_orders');
      expect((await get(`/api/v1/namespaces/${hive}/datasets/sales.nothing`)).status).toBe(404);
    });
  });

  describe('GET /api/v1/lineage without direction: the connected component, as Marquez', () => {
    // load reads raw.orders and raw.customers (the customers load failed), writes staging; report reads staging;
    // audit also reads raw.orders (a sibling sharing an input).
    beforeAll(async () => {
      const ds = (name: string) => ({ namespace: 'component', name, facets: {} });
      const job = (name: string, state: string, inputs: string[], outputs: string[], time: number) =>
        post(
          runEvent({
            eventType: state,
            time,
            runId: randomUUID(),
            job: name,
            namespace: 'component',
            inputs: inputs.map(ds),
            outputs: outputs.map(ds),
          }),
        );
      await job('load_customers', 'FAIL', ['crm.customers'], ['raw.customers'], T0);
      await job('load', 'COMPLETE', ['raw.orders', 'raw.customers'], ['staging'], T0 + MINUTE);
      await job('report', 'COMPLETE', ['staging'], ['mart'], T0 + 2 * MINUTE);
      await job('audit', 'COMPLETE', ['raw.orders'], ['audit.log'], T0 + 3 * MINUTE);
    });
    const ids = async (query: string) =>
      (await get<{ graph: { id: string }[] }>(`/api/v1/lineage?${query}`)).body.graph.map((n) => n.id);

    it('reaches siblings and other inputs of each job within the depth', async () => {
      const node = encodeURIComponent('dataset:component:mart');
      expect(await ids(`nodeId=${node}&depth=20`)).toEqual([
        'dataset:component:audit.log',
        'dataset:component:crm.customers',
        'dataset:component:mart',
        'dataset:component:raw.customers',
        'dataset:component:raw.orders',
        'dataset:component:staging',
        'job:component:audit',
        'job:component:load',
        'job:component:load_customers',
        'job:component:report',
      ]);
    });

    it("counts depth as Marquez's LineageDao: job hops from the start job, which is hop 0", async () => {
      const mart = encodeURIComponent('dataset:component:mart');
      // A dataset starts from the job that wrote it (report): depth 0 is that job and its datasets.
      expect(await ids(`nodeId=${mart}&depth=0`)).toEqual([
        'dataset:component:mart',
        'dataset:component:staging',
        'job:component:report',
      ]);
      // One hop: load shares staging with report, and brings all its datasets; audit and load_customers are
      // two hops away (they share raw.orders and raw.customers with load).
      expect(await ids(`nodeId=${mart}&depth=1`)).toEqual([
        'dataset:component:mart',
        'dataset:component:raw.customers',
        'dataset:component:raw.orders',
        'dataset:component:staging',
        'job:component:load',
        'job:component:report',
      ]);
      expect(await ids(`nodeId=${mart}&depth=2`)).toHaveLength(10);
      // A job's depth 0: the job and what it reads and writes.
      expect(await ids(`nodeId=${encodeURIComponent('job:component:load')}&depth=0`)).toEqual([
        'dataset:component:raw.customers',
        'dataset:component:raw.orders',
        'dataset:component:staging',
        'job:component:load',
      ]);
      // From staging, load (its writer) is hop 0; every job sharing one of load's datasets is hop 1, report
      // (which reads staging itself) included.
      expect(await ids(`nodeId=${encodeURIComponent('dataset:component:staging')}&depth=1`)).toEqual(
        await ids(`nodeId=${mart}&depth=2`),
      );
      expect(await ids(`nodeId=${encodeURIComponent('dataset:component:staging')}&depth=1`)).toContain(
        'job:component:report',
      );
      // A dataset no job writes starts from the job that read it last (audit, after load), as of any time.
      const orders = encodeURIComponent('dataset:component:raw.orders');
      expect(await ids(`nodeId=${orders}&depth=0`)).toEqual([
        'dataset:component:audit.log',
        'dataset:component:raw.orders',
        'job:component:audit',
      ]);
      const beforeAudit = encodeURIComponent(at(T0 + 2 * MINUTE));
      expect(await ids(`nodeId=${orders}&depth=0&asOf=${beforeAudit}`)).toEqual([
        'dataset:component:raw.customers',
        'dataset:component:raw.orders',
        'dataset:component:staging',
        'job:component:load',
      ]);
      expect(await ids(`nodeId=${orders}&depth=0&asOf=${encodeURIComponent(at(T0 + 4 * MINUTE))}`)).toEqual(
        await ids(`nodeId=${orders}&depth=0`),
      );
    });

    it('with a direction, only that walk (both: upstream and downstream, no siblings)', async () => {
      const node = encodeURIComponent('dataset:component:mart');
      const both = await ids(`nodeId=${node}&depth=20&direction=both`);
      expect(both).not.toContain('job:component:audit');
      expect(both).toContain('job:component:load_customers');
    });
  });

  describe('GET /api/v1/column-lineage: Marquez orientation', () => {
    beforeAll(async () => {
      await complete({
        job: 'cll',
        namespace: 'cll',
        inputs: [{ namespace: 'cll', name: 'src', facets: {} }],
        outputs: [
          {
            namespace: 'cll',
            name: 'dst',
            facets: {
              schema: facet('SchemaDatasetFacet', { fields: [{ name: 'b', type: 'INT' }] }),
              columnLineage: {
                _producer: PRODUCER,
                _schemaURL: 'https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json',
                fields: {
                  b: { inputFields: [{ namespace: 'cll', name: 'src', field: 'a', transformations: [] }] },
                },
              },
            },
          },
        ],
      });
    });
    type Graph = {
      graph: {
        id: string;
        inEdges: { origin: string; destination: string }[];
        outEdges: { origin: string; destination: string }[];
      }[];
    };

    it("inEdges name the node as origin (Marquez's quirk, which its UI relies on); outEdges point downstream", async () => {
      const reply = await get<Graph>(
        `/api/v1/column-lineage?nodeId=${encodeURIComponent('datasetField:cll:dst:b')}&withDownstream=true`,
      );
      const b = reply.body.graph.find((n) => n.id === 'datasetField:cll:dst:b')!;
      const a = reply.body.graph.find((n) => n.id === 'datasetField:cll:src:a')!;
      expect(b.inEdges).toEqual([
        { origin: 'datasetField:cll:dst:b', destination: 'datasetField:cll:src:a' },
      ]);
      expect(a.outEdges).toEqual([
        { origin: 'datasetField:cll:src:a', destination: 'datasetField:cll:dst:b' },
      ]);
    });

    it.each(['False', 'FALSE', 'false', 'TRUE', 'True', 'true'])(
      'takes withDownstream=%s, booleans in any case as Marquez',
      async (value) => {
        const reply = await get<Graph>(
          `/api/v1/column-lineage?nodeId=${encodeURIComponent('datasetField:cll:src:a')}&withDownstream=${value}`,
        );
        expect(reply.status).toBe(200);
        // Downstream of src.a is dst.b: there only when withDownstream is true.
        expect(reply.body.graph.map((n) => n.id)).toEqual(
          value.toLowerCase() === 'true'
            ? ['datasetField:cll:dst:b', 'datasetField:cll:src:a']
            : ['datasetField:cll:src:a'],
        );
      },
    );

    it('edges=lineage answers every edge from input to output', async () => {
      const reply = await get<Graph>(
        `/api/v1/column-lineage?nodeId=${encodeURIComponent('datasetField:cll:dst:b')}&withDownstream=true&edges=lineage`,
      );
      const b = reply.body.graph.find((n) => n.id === 'datasetField:cll:dst:b')!;
      expect(b.inEdges).toEqual([
        { origin: 'datasetField:cll:src:a', destination: 'datasetField:cll:dst:b' },
      ]);
    });
  });

  describe('/api/v2beta/search (the advanced-search build of the Marquez UI)', () => {
    const sql = (table: string) =>
      facet('SQLJobFacet', { query: `SELECT id, contact\nFROM lake.${table}\nWHERE status = 'open'` });
    beforeAll(async () => {
      // The job's SQL changes: only its latest sql facet is searched, as Marquez's index holds the latest.
      await post(
        runEvent({
          eventType: 'COMPLETE',
          time: T0 - MINUTE,
          runId: randomUUID(),
          job: 'beta_search_job',
          namespace: 'beta',
          jobFacets: { sql: sql('orders_old') },
        }),
      );
      await post(
        runEvent({
          eventType: 'COMPLETE',
          time: T0,
          runId: '0190d3a2-0000-7000-8000-0000000000b1',
          job: 'beta_search_job',
          namespace: 'beta',
          jobFacets: { sql: sql('orders_raw') },
          outputs: [
            {
              namespace: 'beta',
              name: 'beta_search_table',
              facets: {
                schema: facet('SchemaDatasetFacet', {
                  fields: [
                    { name: 'id', type: 'INT' },
                    { name: 'contact', type: 'STRUCT', fields: [{ name: 'customer_email', type: 'STRING' }] },
                  ],
                }),
              },
            },
          ],
        }),
      );
    });
    type Hits = { hits: { name: string }[]; highlights: Record<string, string[]>[] };

    it("matches a job's SQL (its latest sql facet) and says so in highlights", async () => {
      const reply = await get<Hits>('/api/v2beta/search/jobs?q=ORDERS_RAW');
      expect(reply.body.hits.map((hit) => hit.name)).toEqual(['beta_search_job']);
      expect(reply.body.highlights).toEqual([{ 'facets.sql.query': ['FROM lake.<em>orders_raw</em>'] }]);
      expect((await get<Hits>('/api/v2beta/search/jobs?q=orders_old')).body.hits).toEqual([]);
      // /api/v1/search matches names only, as Marquez's (SearchDao).
      expect((await get<{ results: unknown[] }>('/api/v1/search?q=orders_raw')).body.results).toEqual([]);
    });

    it("matches a dataset's field names, nested ones too, and its namespace", async () => {
      const fields = await get<Hits>('/api/v2beta/search/datasets?q=customer_e');
      expect(fields.body.hits.map((hit) => hit.name)).toEqual(['beta_search_table']);
      expect(fields.body.highlights).toEqual([{ 'facets.schema.fields.name': ['<em>customer_e</em>mail'] }]);
      const namespace = await get<Hits>('/api/v2beta/search/datasets?q=bet');
      expect(namespace.body.hits.map((hit) => hit.name)).toEqual(['beta_search_table']);
      expect(namespace.body.highlights).toEqual([
        { name: ['<em>bet</em>a_search_table'], namespace: ['<em>bet</em>a'] },
      ]);
      // A field of no dataset, and text that spans two field names in the index's JSON text, match nothing.
      expect((await get<Hits>('/api/v2beta/search/datasets?q=customer_phone')).body.hits).toEqual([]);
      expect(
        (await get<Hits>(`/api/v2beta/search/datasets?q=${encodeURIComponent('id", "con')}`)).body.hits,
      ).toEqual([]);
    });

    it('jobs: hits with run_id, name, namespace, eventType and type; one highlight per hit', async () => {
      const reply = await get<{ hits: Record<string, unknown>[]; highlights: Record<string, string[]>[] }>(
        '/api/v2beta/search/jobs?q=beta_search',
      );
      expect(reply.status).toBe(200);
      expect(reply.body.hits).toEqual([
        expect.objectContaining({
          run_id: '0190d3a2-0000-7000-8000-0000000000b1',
          name: 'beta_search_job',
          namespace: 'beta',
          eventType: 'COMPLETE',
          type: 'BATCH',
          runFacets: expect.any(Object),
        }),
      ]);
      expect(reply.body.highlights).toEqual([{ name: ['<em>beta_search</em>_job'] }]);
    });

    it('datasets: hits with their facets', async () => {
      const reply = await get<{ hits: Record<string, unknown>[]; highlights: unknown[] }>(
        '/api/v2beta/search/datasets?q=BETA_SEARCH',
      );
      expect(reply.body.hits).toEqual([
        expect.objectContaining({
          run_id: '0190d3a2-0000-7000-8000-0000000000b1',
          name: 'beta_search_table',
          namespace: 'beta',
          eventType: 'COMPLETE',
          facets: expect.objectContaining({ schema: expect.any(Object) }),
        }),
      ]);
      expect(reply.body.highlights).toEqual([{ name: ['<em>beta_search</em>_table'] }]);
      expect((await get('/api/v2beta/search/datasets')).status).toBe(400);
    });
  });

  it('the OpenAPI document states the limits it enforces', async () => {
    const doc = await get<{
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; schema: Record<string, unknown> }[];
            requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
            responses: Record<string, unknown>;
          }
        >
      >;
    }>('/api/v1/openapi.json');
    const list = doc.body.paths['/api/v1/namespaces']!.get!;
    const limit = list.parameters!.find((p) => p.name === 'limit')!.schema;
    expect(limit).toMatchObject({ type: 'integer', minimum: 0, maximum: 2147483647 });
    const events = doc.body.paths['/api/v1/events/lineage']!.get!;
    expect(events.parameters!.find((p) => p.name === 'offset')!.schema).toMatchObject({
      maximum: 2147483647,
    });
    expect(Object.keys(events.responses)).toContain('400');
    const put = doc.body.paths['/api/v1/namespaces/{namespace}']!.put!;
    const body = put.requestBody!.content['application/json']!.schema as {
      properties: Record<string, Record<string, unknown>>;
      required: string[];
    };
    expect(body.required).toEqual(['ownerName']);
    expect(body.properties.ownerName).toMatchObject({
      type: 'string',
      minLength: 1,
      pattern: '^[^\\u0000]*$',
    });
    expect(body.properties.description).toMatchObject({ pattern: '^[^\\u0000]*$' });
    expect(Object.keys(put.responses)).toContain('400');
  });
});
