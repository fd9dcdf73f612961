import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/security/keys.js';
import { backends, startApp } from './helpers/backends.js';
import { spawnServer, type ChildServer } from './helpers/child-server.js';
import { until, waitFor } from './helpers/wait.js';

// Dataset aliases (issue 12, item 8). The oracle: a store whose events used one name throughout. Lineage across
// an alias must answer exactly what that store answers, and removing the alias must give back exactly what the
// store answered before it was declared.

const producer = 'https://example.com/aliases-test';
const facet = { _producer: producer, _schemaURL: 'https://openlineage.io/spec/facets/1-2-0/Facet.json' };

/** A: the storage path Spark writes; B: the table dbt reads. One dataset, two names. */
const A = { namespace: 's3://bucket', name: 'warehouse/orders' };
const B = { namespace: 'hive://metastore', name: 'db.orders' };
const RAW = { namespace: 's3://raw', name: 'orders_raw' };
const LEGACY = { namespace: 's3://raw', name: 'orders_legacy' };
const MART = { namespace: 'hive://metastore', name: 'db.orders_mart' };
const AUDIT = { namespace: 'hive://metastore', name: 'db.audit' };

const T1 = '2025-01-01T01:00:00.000Z';
const T2 = '2025-01-01T02:00:00.000Z';
const T3 = '2025-01-01T03:00:00.000Z';
/** Between T2 and T3: the audit job (which reads both names) has not run yet. */
const BETWEEN = '2025-01-01T02:30:00.000Z';

type Ref = { namespace: string; name: string };
type Lineage = [input: Ref, field: string, type: string, subtype: string][];

const schema = (...fields: string[]) => ({ ...facet, fields: fields.map((name) => ({ name, type: 'int' })) });

/** A completed run of `job` reading `inputs` and writing `output`, whose columns come from `columns`. */
function run(
  index: number,
  time: string,
  job: Ref,
  inputs: Ref[],
  output: Ref,
  columns: Record<string, Lineage>,
  whole: Lineage = [],
) {
  const inputField = ([input, field, type, subtype]: Lineage[number]) => ({
    ...input,
    field,
    transformations: [{ type, subtype }],
  });
  return {
    eventType: 'COMPLETE',
    eventTime: time,
    producer,
    run: { runId: `01940000-0000-7000-8000-00000000000${index}` },
    job,
    inputs: inputs.map((input) => ({ ...input, facets: { schema: schema('id', 'amount', 'amt') } })),
    outputs: [
      {
        ...output,
        facets: {
          schema: schema('id', 'amount', 'total', 'n'),
          columnLineage: {
            ...facet,
            fields: Object.fromEntries(
              Object.entries(columns).map(([column, from]) => [
                column,
                { inputFields: from.map(inputField) },
              ]),
            ),
            ...(whole.length > 0 ? { dataset: whole.map(inputField) } : {}),
          },
        },
      },
    ],
  };
}

/** The events, naming the orders dataset A where Spark wrote it and B where dbt read it. */
const EVENTS = [
  run(1, T1, { namespace: 'spark', name: 'load_orders' }, [RAW], A, {
    id: [[RAW, 'id', 'DIRECT', 'IDENTITY']],
    amount: [[RAW, 'amt', 'DIRECT', 'TRANSFORMATION']],
  }),
  run(2, T2, { namespace: 'legacy', name: 'copy_orders' }, [LEGACY], B, {
    id: [[LEGACY, 'id', 'DIRECT', 'IDENTITY']],
  }),
  run(
    3,
    T2,
    { namespace: 'dbt', name: 'orders_mart' },
    [B],
    MART,
    { total: [[B, 'amount', 'DIRECT', 'AGGREGATION']], id: [[B, 'id', 'DIRECT', 'IDENTITY']] },
    [[B, 'id', 'INDIRECT', 'FILTER']],
  ),
  // Reads both names: after the join, one input with the transformations of both edges.
  run(4, T3, { namespace: 'dbt', name: 'audit' }, [A, B], AUDIT, {
    n: [
      [A, 'id', 'INDIRECT', 'FILTER'],
      [B, 'id', 'DIRECT', 'IDENTITY'],
    ],
  }),
];

/** `value` with every `{namespace, name}` of A renamed to B: the events as if one name had been used throughout. */
function renamed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renamed);
  if (typeof value !== 'object' || value === null) return value;
  const object = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renamed(item)]));
  if (object.namespace === A.namespace && object.name === A.name) return { ...object, ...B };
  return object;
}

const nodeId = (ref: Ref) => `dataset:${ref.namespace}:${ref.name}`;
const JOBS = ['spark:load_orders', 'legacy:copy_orders', 'dbt:orders_mart', 'dbt:audit'].map(
  (j) => `job:${j}`,
);
const DATASETS = [RAW, LEGACY, B, MART, AUDIT].map(nodeId);

interface LineageNode {
  id: string;
  type: string;
  data: { inputs?: Ref[]; outputs?: Ref[] } | null;
  inEdges: { origin: string; destination: string }[];
  outEdges: { origin: string; destination: string }[];
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const refText = (ref: Ref) => `${ref.namespace}:${ref.name}`;

/** What lineage answers, without what is not lineage (a dataset's own facets and versions, run ids). */
function lineageShape(body: { graph: LineageNode[] }) {
  return body.graph.map((node) => ({
    id: node.id,
    type: node.type,
    inEdges: node.inEdges.map((edge) => `${edge.origin}>${edge.destination}`).sort(byText),
    outEdges: node.outEdges.map((edge) => `${edge.origin}>${edge.destination}`).sort(byText),
    ...(node.type === 'JOB'
      ? {
          inputs: (node.data?.inputs ?? []).map(refText).sort(byText),
          outputs: (node.data?.outputs ?? []).map(refText).sort(byText),
        }
      : {}),
  }));
}

interface ColumnNode {
  id: string;
  data: {
    inputFields: {
      namespace: string;
      dataset: string;
      field: string;
      transformations: { type: string; subtype: string }[];
    }[];
  };
  inEdges: { origin: string }[];
  outEdges: { destination: string }[];
}

function columnShape(body: { graph: ColumnNode[] }) {
  return body.graph.map((node) => ({
    id: node.id,
    inEdges: node.inEdges.map((edge) => edge.origin).sort(byText),
    outEdges: node.outEdges.map((edge) => edge.destination).sort(byText),
    inputFields: node.data.inputFields
      .map(
        (input) =>
          `${input.namespace}:${input.dataset}:${input.field}[${input.transformations
            .map((t) => `${t.type}/${t.subtype}`)
            .sort(byText)
            .join(',')}]`,
      )
      .sort(byText),
  }));
}

/** The lineage questions asked of both stores, with the answer shapes compared. */
function questions(): { path: string; shape: (body: never) => unknown }[] {
  const list: { path: string; shape: (body: never) => unknown }[] = [];
  for (const node of [...JOBS, ...DATASETS]) {
    for (const direction of [undefined, 'upstream', 'downstream', 'both']) {
      for (const asOf of [undefined, BETWEEN, T3]) {
        const query = new URLSearchParams({ nodeId: node, depth: '20' });
        if (direction) query.set('direction', direction);
        if (asOf) query.set('asOf', asOf);
        list.push({ path: `/api/v1/lineage?${query.toString()}`, shape: lineageShape });
      }
    }
  }
  for (const node of [...DATASETS, ...JOBS, `datasetField:${B.namespace}:${B.name}:id`]) {
    for (const asOf of [undefined, BETWEEN]) {
      const query = new URLSearchParams({ nodeId: node, withDownstream: 'true', edges: 'lineage' });
      if (asOf) query.set('asOf', asOf);
      list.push({ path: `/api/v1/column-lineage?${query.toString()}`, shape: columnShape });
    }
  }
  for (const node of [`datasetField:${RAW.namespace}:${RAW.name}:amt`, nodeId(RAW), nodeId(LEGACY)])
    list.push({ path: `/api/v1/analysis/impact?nodeId=${encodeURIComponent(node)}`, shape: (body) => body });
  for (const node of [nodeId(MART), `datasetField:${MART.namespace}:${MART.name}:total`, nodeId(AUDIT)])
    list.push({
      path: `/api/v1/analysis/root-cause?nodeId=${encodeURIComponent(node)}`,
      shape: (body) => body,
    });
  return list;
}

const aliasPath = (ref: Ref) =>
  `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/datasets/${encodeURIComponent(ref.name)}/alias`;

describe.each(backends())('dataset aliases on the $name store', (backend) => {
  let joined: Awaited<ReturnType<typeof startApp>>;
  let oracle: Awaited<ReturnType<typeof startApp>>;

  const call = async (
    ctx: typeof joined,
    method: string,
    url: string,
    body?: unknown,
    key?: string,
  ): Promise<{ status: number; body: unknown; text: string }> => {
    const response = await ctx.server.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return {
      status: response.statusCode,
      body: response.body ? response.json() : undefined,
      text: response.body,
    };
  };
  const answers = async (ctx: typeof joined, rename: (path: string) => string = (path) => path) => {
    const result: Record<string, unknown> = {};
    let found = 0;
    for (const { path, shape } of questions()) {
      const answer = await call(ctx, 'GET', rename(path));
      // A node that did not exist at asOf is a 404 in either store; nothing else may fail.
      expect([200, 404], `${path}: ${answer.text}`).toContain(answer.status);
      if (answer.status === 200) found++;
      result[path] = answer.status === 200 ? shape(answer.body as never) : answer.status;
    }
    // Not a comparison of 404s: nearly every question has an answer.
    expect(found).toBeGreaterThan(questions().length * 0.8);
    return result;
  };
  const ingest = async (ctx: typeof joined, events: unknown[]) => {
    for (const event of events) expect((await call(ctx, 'POST', '/api/v1/lineage', event)).status).toBe(201);
  };

  beforeAll(async () => {
    [joined, oracle] = await Promise.all([startApp(backend), startApp(backend)]);
    await Promise.all([ingest(joined, EVENTS), ingest(oracle, EVENTS.map(renamed))]);
  });
  afterAll(async () => {
    await Promise.all([joined?.stop(), oracle?.stop()]);
  });

  it('joins lineage, column lineage and the analyses as one name would, and removing the alias restores them', async () => {
    const before = await answers(joined);
    // Without the alias the graphs are not the oracle's: the join is what makes them equal.
    expect(before).not.toEqual(await answers(oracle));

    const declared = await call(joined, 'PUT', aliasPath(A), B);
    expect(declared.status).toBe(200);
    expect(declared.body).toMatchObject({ alias: A, dataset: B });
    expect(await answers(joined)).toEqual(await answers(oracle));
    // Asked by the alias's name, lineage answers with the dataset it is.
    const byAlias = await answers(joined, (path) => {
      const url = new URL(path, 'http://x');
      const node = url.searchParams.get('nodeId')!;
      const column = `datasetField:${B.namespace}:${B.name}:`;
      if (node === nodeId(B)) url.searchParams.set('nodeId', nodeId(A));
      else if (node.startsWith(column))
        url.searchParams.set('nodeId', `datasetField:${A.namespace}:${A.name}:${node.slice(column.length)}`);
      return `${url.pathname}${url.search}`;
    });
    expect(byAlias).toEqual(await answers(oracle));

    const removed = await call(joined, 'DELETE', aliasPath(A));
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ alias: A, dataset: B });
    expect(await answers(joined)).toEqual(before);
  });

  it('says on each dataset what it is an alias of and what its aliases are, lists them, and searches by either name', async () => {
    const dataset = (ref: Ref) =>
      call(
        joined,
        'GET',
        `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/datasets/${encodeURIComponent(ref.name)}`,
      );
    const search = async (q: string) =>
      (
        (await call(joined, 'GET', `/api/v1/search?q=${encodeURIComponent(q)}&filter=DATASET`)).body as {
          results: { nodeId: string }[];
        }
      ).results.map((result) => result.nodeId);
    expect(await search('warehouse/orders')).toEqual([nodeId(A)]);

    expect((await call(joined, 'PUT', aliasPath(A), B)).status).toBe(200);
    expect((await dataset(A)).body).toMatchObject({ aliasOf: B });
    expect((await dataset(A)).body).not.toHaveProperty('aliases');
    expect((await dataset(B)).body).toMatchObject({ aliases: [A] });
    expect((await dataset(B)).body).not.toHaveProperty('aliasOf');
    expect((await dataset(MART)).body).not.toHaveProperty('aliases');
    // As of the past too: an alias repairs naming, for every time.
    const past = await call(
      joined,
      'GET',
      `/api/v1/namespaces/${encodeURIComponent(B.namespace)}/datasets/${encodeURIComponent(B.name)}?asOf=${T2}`,
    );
    expect(past.body).toMatchObject({ aliases: [A] });
    expect((await call(joined, 'GET', '/api/v1/aliases')).body).toMatchObject({
      aliases: [{ alias: A, dataset: B }],
      totalCount: 1,
    });
    // Found as the dataset it is, by its own name or the alias's; the alias is not found as itself.
    expect(await search('warehouse/orders')).toEqual([nodeId(B)]);
    expect((await search('orders')).sort(byText)).toEqual(
      [nodeId(B), nodeId(MART), nodeId(LEGACY), nodeId(RAW)].sort(byText),
    );
    // Four datasets (not A) and the jobs load_orders, copy_orders and orders_mart.
    const counted = (await call(joined, 'GET', '/api/v1/search?q=orders')).body as { totalCount: number };
    expect(counted.totalCount).toBe(7);

    expect((await call(joined, 'DELETE', aliasPath(A))).status).toBe(200);
    expect((await dataset(A)).body).not.toHaveProperty('aliasOf');
    expect((await dataset(B)).body).not.toHaveProperty('aliases');
    expect(await search('warehouse/orders')).toEqual([nodeId(A)]);
    expect((await call(joined, 'GET', '/api/v1/aliases')).body).toEqual({ aliases: [], totalCount: 0 });
  });

  it('refuses chains, cycles, self-aliases and unknown datasets with a clear 4xx, and is idempotent', async () => {
    const put = (from: Ref, to: Ref) => call(joined, 'PUT', aliasPath(from), to);
    expect((await put(A, B)).status).toBe(200);
    expect((await put(A, B)).status).toBe(200);
    const message = (answer: { body: unknown }) => (answer.body as { message: string }).message;
    // A is B, then B is MART: a chain (A would be an alias of an alias).
    const chain = await put(B, MART);
    expect(chain.status).toBe(409);
    expect(message(chain)).toContain('has aliases of its own');
    // RAW is A: A is itself an alias, so RAW should be an alias of B.
    const ofAlias = await put(RAW, A);
    expect(ofAlias.status).toBe(409);
    expect(message(ofAlias)).toContain(
      `declare ${RAW.namespace}:${RAW.name} an alias of ${B.namespace}:${B.name}`,
    );
    // A is B and B is A: a cycle.
    const cycle = await put(B, A);
    expect(cycle.status).toBe(409);
    // A is B, then A is MART: one dataset, one alias.
    const twice = await put(A, MART);
    expect(twice.status).toBe(409);
    expect(message(twice)).toContain('is already an alias of');
    const self = await put(B, B);
    expect(self.status).toBe(400);
    expect(message(self)).toContain('cannot be an alias of itself');
    expect((await put(A, { namespace: B.namespace, name: 'nope' })).status).toBe(404);
    expect((await put({ namespace: A.namespace, name: 'nope' }, B)).status).toBe(404);
    expect((await call(joined, 'PUT', aliasPath(RAW), { namespace: B.namespace })).status).toBe(400);
    expect((await call(joined, 'DELETE', aliasPath(A))).status).toBe(200);
    expect((await call(joined, 'DELETE', aliasPath(A))).status).toBe(404);
    expect((await call(joined, 'GET', '/api/v1/aliases')).body).toEqual({ aliases: [], totalCount: 0 });
  });

  it('audits declaring and removing an alias, and needs the admin role over both namespaces', async () => {
    const admin = await call(joined, 'POST', '/api/v1/keys', {
      name: 'root',
      role: 'admin',
      namespaces: ['*'],
    });
    expect(admin.status).toBe(201);
    const rootKey = (admin.body as { key: string }).key;
    const key = async (name: string, role: string, namespaces: string[]) => {
      const created = await call(joined, 'POST', '/api/v1/keys', { name, role, namespaces }, rootKey);
      expect(created.status).toBe(201);
      return (created.body as { key: string }).key;
    };
    const hiveAdmin = await key('hive-admin', 'admin', ['hive://*']);
    const reader = await key('reader', 'reader', ['*']);
    // Reads all but may not administer: refused.
    expect((await call(joined, 'PUT', aliasPath(A), B, reader)).status).toBe(403);
    // Administers B's namespace only, and may not read A's: A is not even said to exist.
    expect((await call(joined, 'PUT', aliasPath(A), B, hiveAdmin)).status).toBe(404);
    expect((await call(joined, 'PUT', aliasPath(MART), A, hiveAdmin)).status).toBe(404);
    expect((await call(joined, 'GET', '/api/v1/aliases', undefined, rootKey)).body).toEqual({
      aliases: [],
      totalCount: 0,
    });
    // Within its namespace it may.
    expect((await call(joined, 'PUT', aliasPath(AUDIT), MART, hiveAdmin)).status).toBe(200);
    expect((await call(joined, 'DELETE', aliasPath(AUDIT), undefined, hiveAdmin)).status).toBe(200);
    expect((await call(joined, 'PUT', aliasPath(A), B, rootKey)).status).toBe(200);
    expect((await call(joined, 'DELETE', aliasPath(A), undefined, rootKey)).status).toBe(200);

    type Entry = { actor: string; action: string; status: number; detail: string | null };
    const a = `${A.namespace}:${A.name}`;
    const b = `${B.namespace}:${B.name}`;
    const route = '/api/v1/namespaces/:namespace/datasets/:dataset/alias';
    const expected = [
      `PUT ${route} 403 `,
      `PUT ${route} 200 ${MART.namespace}:${AUDIT.name} is ${MART.namespace}:${MART.name}`,
      `DELETE ${route} 200 ${MART.namespace}:${AUDIT.name} is no longer ${MART.namespace}:${MART.name}`,
      `PUT ${route} 200 ${a} is ${b}`,
      `DELETE ${route} 200 ${a} is no longer ${b}`,
    ];
    const audit = async () =>
      (
        (await call(joined, 'GET', '/api/v1/audit?limit=1000', undefined, rootKey)).body as {
          entries: Entry[];
        }
      ).entries;
    const described = (entries: Entry[]) =>
      entries
        .filter((entry) => entry.action.endsWith('/alias'))
        .map((entry) => `${entry.action} ${entry.status} ${entry.detail ?? ''}`);
    // Audit entries are written as the answers go out, so the last ones may land after the answer.
    const entries = await until('the alias calls in the audit log', audit, (all) =>
      expected.every((entry) => described(all).includes(entry)),
    );
    expect(described(entries)).toEqual(expect.arrayContaining(expected));
    const declaredBy = entries.find((entry) => entry.detail === `${a} is ${b}`);
    expect(declaredBy?.actor).toMatch(/^key:/);
  });
});

describe.each(backends())('dataset aliases and namespace scopes on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let admin: string;
  let reader: string;
  const get = (url: string, key: string) =>
    ctx.server.app.inject({ url, headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    ctx = await startApp(backend);
    for (const event of EVENTS) {
      const response = await ctx.server.app.inject({
        method: 'POST',
        url: '/api/v1/lineage',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(event),
      });
      expect(response.statusCode).toBe(201);
    }
    const declared = await ctx.server.app.inject({
      method: 'PUT',
      url: aliasPath(A),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(B),
    });
    expect(declared.statusCode).toBe(200);
    admin = (await createApiKey(ctx.server.db, { name: 'admin', role: 'admin', namespaces: ['*'] })).token;
    // Reads B's namespace and the dbt jobs, not A's namespace.
    reader = (
      await createApiKey(ctx.server.db, { name: 'hive', role: 'reader', namespaces: ['hive://*', 'dbt'] })
    ).token;
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it("tells a reader who may not read the alias's namespace nothing of it through the dataset it is", async () => {
    const enc = encodeURIComponent;
    const urls = [
      `/api/v1/namespaces/${enc(B.namespace)}/datasets/${enc(B.name)}`,
      `/api/v1/namespaces/${enc(B.namespace)}/datasets/${enc(B.name)}?asOf=${T3}`,
      `/api/v1/namespaces/${enc(B.namespace)}/datasets`,
      '/api/v1/aliases',
      `/api/v1/search?q=${enc('warehouse')}`,
      `/api/v1/search?q=orders`,
      `/api/v2beta/search/datasets?q=${enc('warehouse')}`,
      ...['upstream', 'downstream', 'both'].flatMap((direction) => [
        `/api/v1/lineage?nodeId=${enc(nodeId(B))}&direction=${direction}`,
        `/api/v1/lineage?nodeId=${enc(nodeId(MART))}&direction=${direction}&asOf=${T3}`,
      ]),
      `/api/v1/lineage?nodeId=${enc(nodeId(B))}`,
      `/api/v1/column-lineage?nodeId=${enc(nodeId(MART))}&withDownstream=true`,
      `/api/v1/column-lineage?nodeId=${enc(nodeId(B))}&withDownstream=true`,
      `/api/v1/analysis/impact?nodeId=${enc(`datasetField:${B.namespace}:${B.name}:id`)}`,
      `/api/v1/analysis/root-cause?nodeId=${enc(nodeId(AUDIT))}`,
    ];
    const leaks: string[] = [];
    let adminSaw = 0;
    for (const url of urls) {
      const asReader = await get(url, reader);
      expect(asReader.statusCode, url).toBe(200);
      if (asReader.body.includes(A.name) || asReader.body.includes(A.namespace))
        leaks.push(`${url}: ${asReader.body.slice(0, 300)}`);
      if ((await get(url, admin)).body.includes(A.name)) adminSaw++;
    }
    expect(leaks).toEqual([]);
    // The same requests name the alias to an admin: the dataset, the list, both searches, the dataset list.
    expect(adminSaw).toBeGreaterThanOrEqual(5);
    // Searching by the alias's name finds nothing, not even the dataset it is: that would tell the name exists.
    const search = (await get(`/api/v1/search?q=${encodeURIComponent('warehouse/orders')}`, reader)).json();
    expect(search).toEqual({ totalCount: 0, results: [] });
    expect((await get('/api/v1/aliases', reader)).json()).toEqual({ aliases: [], totalCount: 0 });
    // Lineage by the alias's name answers as for a name that does not exist.
    const byAlias = await get(`/api/v1/lineage?nodeId=${encodeURIComponent(nodeId(A))}`, reader);
    const missing = await get(
      `/api/v1/lineage?nodeId=${encodeURIComponent(`dataset:${A.namespace}:nothing`)}`,
      reader,
    );
    expect([byAlias.statusCode, byAlias.body]).toEqual([missing.statusCode, missing.body]);
  });
});

// Replicas share one PostgreSQL; backends() fails in CI without one and warns locally.
const postgres = backends().find((backend) => backend.name === 'postgres');

describe.skipIf(postgres === undefined)('dataset aliases across replicas', () => {
  let cleanup: () => Promise<void> = () => Promise.resolve();
  const servers: ChildServer[] = [];
  afterAll(async () => {
    for (const server of servers.splice(0)) {
      server.process.kill('SIGKILL');
      await server.exited;
    }
    await cleanup();
  });

  const send = (url: string, method: string, body?: unknown) =>
    fetch(url, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  /** Whether the lineage downstream of the spark job, as `server` answers it, goes through B (the alias joined). */
  const joinedOn = async (server: ChildServer) => {
    const response = await fetch(
      `${server.url}/api/v1/lineage?nodeId=${encodeURIComponent('job:spark:load_orders')}&direction=downstream`,
    );
    const ids = ((await response.json()) as { graph: { id: string }[] }).graph.map((node) => node.id);
    if (!ids.includes(nodeId(A)) && !ids.includes(nodeId(B))) throw new Error('not there yet');
    return ids.includes(nodeId(B)) && ids.includes('job:dbt:orders_mart') && !ids.includes(nodeId(A));
  };

  it('a follower forwards the declaration to the writer, and every replica joins and unjoins the lineage', async () => {
    const fresh = await postgres!.fresh();
    cleanup = fresh.cleanup;
    const start = async () => {
      const server = await spawnServer(['--database-url', fresh.config.databaseUrl!, '--log-level', 'warn']);
      servers.push(server);
      return server;
    };
    const writer = await start();
    const follower = await start();
    for (const event of EVENTS)
      expect((await send(`${writer.url}/api/v1/lineage`, 'POST', event)).status).toBe(201);
    await waitFor('the follower to have the events', async () => (await joinedOn(follower)) === false);

    // Declared through the follower: forwarded, committed by the writer, carried to the follower by the feed.
    const declared = await send(`${follower.url}${aliasPath(A)}`, 'PUT', B);
    expect(declared.status).toBe(200);
    expect(await joinedOn(writer)).toBe(true);
    await waitFor('the follower to join the alias', () => joinedOn(follower));
    const page = await fetch(
      `${follower.url}/api/v1/namespaces/${encodeURIComponent(B.namespace)}/datasets/${encodeURIComponent(B.name)}`,
    );
    expect(await page.json()).toMatchObject({ aliases: [A] });

    // A replica started now loads the alias with the graph.
    const late = await start();
    await waitFor(
      'the late replica to answer',
      async () => (await fetch(`${late.url}/readyz`)).status === 200,
    );
    expect(await joinedOn(late)).toBe(true);

    // Removed through the writer: every replica answers as before it was declared.
    expect((await send(`${writer.url}${aliasPath(A)}`, 'DELETE')).status).toBe(200);
    expect(await joinedOn(writer)).toBe(false);
    await waitFor('the follower to drop the alias', async () => (await joinedOn(follower)) === false);
    await waitFor('the late replica to drop the alias', async () => (await joinedOn(late)) === false);
    const list = await fetch(`${late.url}/api/v1/aliases`);
    expect(await list.json()).toEqual({ aliases: [], totalCount: 0 });
  });
});
