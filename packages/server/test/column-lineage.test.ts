import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';

const producer = 'https://example.com/column-test';
const base = {
  _producer: producer,
  _schemaURL: 'https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json',
};

/** A run of `job` writing `output` whose columns come from `from` (output column -> [input dataset, column, type]). */
function run(
  job: string,
  output: string,
  from: Record<string, [string, string, string][]>,
  fields: string[],
) {
  const inputs = [...new Set(Object.values(from).flatMap((list) => list.map(([dataset]) => dataset)))];
  return {
    eventType: 'COMPLETE',
    eventTime: '2024-07-01T00:00:00Z',
    producer,
    run: { runId: randomUUID() },
    job: { namespace: 'cl', name: job },
    inputs: inputs.map((name) => ({ namespace: 'wh', name })),
    outputs: [
      {
        namespace: 'wh',
        name: output,
        facets: {
          schema: { ...base, fields: fields.map((name) => ({ name, type: 'int' })) },
          columnLineage: {
            ...base,
            fields: Object.fromEntries(
              Object.entries(from).map(([column, list]) => [
                column,
                {
                  inputFields: list.map(([dataset, field, type]) => ({
                    namespace: 'wh',
                    name: dataset,
                    field,
                    transformations: [{ type, subtype: type === 'DIRECT' ? 'IDENTITY' : 'FILTER' }],
                  })),
                },
              ]),
            ),
          },
        },
      },
    ],
  };
}

describe.each(backends())('column lineage on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const get = async (query: string) => {
    const response = await ctx.request(`/api/v1/column-lineage?${query}&edges=lineage`);
    return {
      status: response.status,
      body: (await response.json()) as {
        graph: {
          id: string;
          data: Record<string, unknown>;
          inEdges: { origin: string }[];
          outEdges: { destination: string }[];
        }[];
      },
    };
  };

  beforeAll(async () => {
    ctx = await startApp(backend);
    const events = [
      run('stage', 'b', { y: [['a', 'x', 'DIRECT']], flag: [['a', 'status', 'INDIRECT']] }, ['y', 'flag']),
      run(
        'mart',
        'c',
        {
          z: [
            ['b', 'y', 'DIRECT'],
            ['b', 'flag', 'INDIRECT'],
          ],
        },
        ['z'],
      ),
    ];
    const response = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      body: JSON.stringify(events),
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('walks upstream from every column of a dataset', async () => {
    const { status, body } = await get('nodeId=dataset:wh:c&depth=20');
    expect(status).toBe(200);
    expect(body.graph.map((node) => node.id)).toEqual([
      'datasetField:wh:a:status',
      'datasetField:wh:a:x',
      'datasetField:wh:b:flag',
      'datasetField:wh:b:y',
      'datasetField:wh:c:z',
    ]);
    const z = body.graph.find((node) => node.id === 'datasetField:wh:c:z')!;
    expect(z.data).toMatchObject({ namespace: 'wh', dataset: 'c', field: 'z', fieldType: 'int' });
    expect(z.inEdges.map((edge) => edge.origin)).toEqual(['datasetField:wh:b:flag', 'datasetField:wh:b:y']);
    expect(
      (z.data.inputFields as { field: string; transformationType: string }[]).map((f) => [
        f.field,
        f.transformationType,
      ]),
    ).toEqual([
      // In the column graph's order (compareColumns): by input dataset, then field.
      ['flag', 'INDIRECT'],
      ['y', 'DIRECT'],
    ]);
  });

  it('limits the walk by depth and adds downstream on request', async () => {
    const shallow = await get('nodeId=datasetField:wh:c:z&depth=1');
    expect(shallow.body.graph.map((node) => node.id)).toEqual([
      'datasetField:wh:b:flag',
      'datasetField:wh:b:y',
      'datasetField:wh:c:z',
    ]);
    // Marquez's ColumnLineageDao fetches the node's own edges whatever the depth: 0 answers as 1.
    expect((await get('nodeId=datasetField:wh:c:z&depth=0')).body).toEqual(shallow.body);
    const both = await get('nodeId=datasetField:wh:b:y&depth=5&withDownstream=true');
    expect(both.body.graph.map((node) => node.id)).toEqual([
      'datasetField:wh:a:x',
      'datasetField:wh:b:y',
      'datasetField:wh:c:z',
    ]);
  });

  it('answers 404 for an unknown dataset', async () => {
    expect((await get('nodeId=dataset:wh:nope')).status).toBe(404);
  });
});

/** A Spark-like event: columns with several transformations, and inputs that influence the whole output. */
function sparkRun() {
  const input = (name: string, field: string, ...transformations: [string, string, string?][]) => ({
    namespace: 'lake',
    name,
    field,
    transformations: transformations.map(([type, subtype, description]) => ({
      type,
      subtype,
      ...(description ? { description } : {}),
    })),
  });
  return {
    eventType: 'COMPLETE',
    eventTime: '2024-07-02T00:00:00Z',
    producer,
    run: { runId: randomUUID() },
    job: { namespace: 'spark', name: 'revenue' },
    inputs: [
      { namespace: 'lake', name: 'orders' },
      { namespace: 'lake', name: 'customers' },
    ],
    outputs: [
      {
        namespace: 'lake',
        name: 'revenue',
        facets: {
          schema: {
            ...base,
            fields: [
              { name: 'total', type: 'int' },
              { name: 'name', type: 'string' },
            ],
          },
          columnLineage: {
            ...base,
            fields: {
              total: {
                inputFields: [
                  input('orders', 'amount', ['DIRECT', 'AGGREGATION', 'sum'], ['INDIRECT', 'FILTER']),
                ],
              },
              name: { inputFields: [input('customers', 'name', ['DIRECT', 'IDENTITY'])] },
            },
            dataset: [
              input('orders', 'customer_id', ['INDIRECT', 'JOIN']),
              input('customers', 'id', ['INDIRECT', 'JOIN']),
              input('orders', 'amount', ['INDIRECT', 'GROUP_BY']),
            ],
          },
        },
      },
    ],
  };
}

describe.each(backends())(
  'column lineage with subtypes and dataset-level inputs on the $name store',
  (backend) => {
    let ctx: Awaited<ReturnType<typeof startApp>>;
    type InputField = {
      dataset: string;
      field: string;
      transformationType?: string;
      transformations?: { type: string; subtype: string }[];
    };
    type Node = { id: string; data: { inputFields: InputField[] } };
    const graph = async (query: string) =>
      ((await (await ctx.request(`/api/v1/column-lineage?${query}`)).json()) as { graph: Node[] }).graph;
    /** Per input column, its transformations as TYPE/SUBTYPE. */
    const inputs = (fields: InputField[]) =>
      fields.map((f) => [
        `${f.dataset}.${f.field}`,
        (f.transformations ?? []).map((t) => `${t.type}/${t.subtype}`),
      ]);

    beforeAll(async () => {
      ctx = await startApp(backend);
      const response = await ctx.request('/api/v1/lineage', {
        method: 'POST',
        body: JSON.stringify(sparkRun()),
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(201);
    });
    afterAll(async () => {
      await ctx?.stop();
    });

    it('answers each input column once, with every subtype, dataset-level inputs included', async () => {
      const nodes = await graph('nodeId=dataset:lake:revenue&depth=1');
      expect(nodes.map((node) => node.id)).toEqual([
        'datasetField:lake:customers:id',
        'datasetField:lake:customers:name',
        'datasetField:lake:orders:amount',
        'datasetField:lake:orders:customer_id',
        'datasetField:lake:revenue:name',
        'datasetField:lake:revenue:total',
      ]);
      const total = nodes.find((node) => node.id === 'datasetField:lake:revenue:total')!;
      expect(inputs(total.data.inputFields)).toEqual([
        ['orders.amount', ['DIRECT/AGGREGATION', 'INDIRECT/FILTER', 'INDIRECT/GROUP_BY']],
        ['orders.customer_id', ['INDIRECT/JOIN']],
        ['customers.id', ['INDIRECT/JOIN']],
      ]);
      // Marquez's own fields: the first transformation's type.
      expect(total.data.inputFields.map((f) => f.transformationType)).toEqual([
        'DIRECT',
        'INDIRECT',
        'INDIRECT',
      ]);
      const name = nodes.find((node) => node.id === 'datasetField:lake:revenue:name')!;
      expect(inputs(name.data.inputFields)).toEqual([
        // The column's own inputs, then its dataset's, each in the column graph's order (orders was named first).
        ['customers.name', ['DIRECT/IDENTITY']],
        ['orders.amount', ['INDIRECT/GROUP_BY']],
        ['orders.customer_id', ['INDIRECT/JOIN']],
        ['customers.id', ['INDIRECT/JOIN']],
      ]);
    });

    it('walks downstream from a join key to every column of the dataset it influences', async () => {
      const nodes = await graph('nodeId=datasetField:lake:orders:customer_id&withDownstream=true');
      expect(nodes.map((node) => node.id)).toEqual(
        expect.arrayContaining(['datasetField:lake:revenue:name', 'datasetField:lake:revenue:total']),
      );
    });

    it("lists a dataset's input column once per output column, with its subtypes", async () => {
      const dataset = (await (await ctx.request('/api/v1/namespaces/lake/datasets/revenue')).json()) as {
        columnLineage: { name: string; inputFields: InputField[] }[];
        datasetInputFields: InputField[];
      };
      expect(dataset.columnLineage.map((c) => [c.name, inputs(c.inputFields)])).toEqual([
        ['name', [['customers.name', ['DIRECT/IDENTITY']]]],
        ['total', [['orders.amount', ['DIRECT/AGGREGATION', 'INDIRECT/FILTER']]]],
      ]);
      expect(inputs(dataset.datasetInputFields)).toEqual([
        ['customers.id', ['INDIRECT/JOIN']],
        ['orders.amount', ['INDIRECT/GROUP_BY']],
        ['orders.customer_id', ['INDIRECT/JOIN']],
      ]);
    });
  },
);
