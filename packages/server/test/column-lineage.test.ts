import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startServer } from './helpers/backends.js';

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
  let ctx: Awaited<ReturnType<typeof startServer>>;
  const get = async (query: string) => {
    const response = await fetch(`${ctx.url}/api/v1/column-lineage?${query}&edges=lineage`);
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
    ctx = await startServer(backend);
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
    const response = await fetch(`${ctx.url}/api/v1/lineage/batch`, {
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
      ['y', 'DIRECT'],
      ['flag', 'INDIRECT'],
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
