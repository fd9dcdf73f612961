import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../src/config/server-config.js';
import { ColumnGraph } from '../src/read-model/column-graph.js';
import { createServer, type HeadwaterServer } from '../src/servers/server.js';
import { backends, startApp } from './helpers/backends.js';

const facet = { _producer: 'https://example.com/column-start', _schemaURL: 'https://example.com/facet.json' };

/** A run of `job` writing `output`.total from `input`.`field`. */
const event = (job: string, input: string, field: string, output: string) => ({
  eventType: 'COMPLETE',
  eventTime: '2025-06-01T00:00:00Z',
  producer: facet._producer,
  run: { runId: randomUUID() },
  job: { namespace: 'cs', name: job },
  inputs: [{ namespace: 'wh', name: input }],
  outputs: [
    {
      namespace: 'wh',
      name: output,
      facets: {
        columnLineage: {
          ...facet,
          fields: {
            total: {
              inputFields: [
                {
                  namespace: 'wh',
                  name: input,
                  field,
                  transformations: [{ type: 'DIRECT', subtype: 'AGGREGATION' }],
                },
              ],
            },
          },
        },
      },
    },
  ],
});

it('a graph waiting for its load answers nothing (503), not an empty answer', () => {
  const graph = new ColumnGraph({ loaded: false });
  expect(() => graph.fieldsOf(1)).toThrow(/still loading/);
  expect(new ColumnGraph().fieldsOf(1)).toEqual([]);
});

describe.each(backends())('column lineage after a restart on the $name store', (backend) => {
  let first: Awaited<ReturnType<typeof startApp>>;
  let server: HeadwaterServer;
  beforeAll(async () => {
    first = await startApp(backend);
    const response = await first.request('/api/v1/lineage/batch', {
      method: 'POST',
      body: JSON.stringify([
        event('stage', 'raw', 'amount', 'staged'),
        event('mart', 'staged', 'total', 'mart'),
      ]),
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
    await first.server.close();
    // The same store again, not listening: nothing has started the column graph's load yet.
    const config: ServerConfig = Object.freeze({ ...first.config, port: 0 });
    server = await createServer(config);
  });
  afterAll(async () => {
    await server?.close();
    await first?.stop();
  });

  it('is loading until a request needs it, which waits for it and gets the whole answer', async () => {
    const ready = async () => (await server.app.inject({ url: '/readyz' })).json<{ columnLineage: string }>();
    // Not listening, nothing has asked for it: /readyz says so (and reading it starts nothing).
    expect((await ready()).columnLineage).toBe('loading');
    expect((await ready()).columnLineage).toBe('loading');
    const response = await server.app.inject({
      url: '/api/v1/column-lineage?nodeId=datasetField:wh:mart:total&depth=5&edges=lineage',
    });
    expect(response.statusCode).toBe(200);
    const ids = response
      .json<{ graph: { id: string }[] }>()
      .graph.map((node) => node.id)
      .sort();
    expect(ids).toEqual([
      'datasetField:wh:mart:total',
      'datasetField:wh:raw:amount',
      'datasetField:wh:staged:total',
    ]);
    expect((await ready()).columnLineage).toBe('loaded');
  });
});

/**
 * A run whose output column names its inputs out of any sorted order, one of them with two transformations, and
 * with dataset-level inputs: in the facet's order, zeta (named first, the lower id) comes between alpha's.
 */
const unorderedRun = () => ({
  eventType: 'COMPLETE',
  eventTime: '2025-06-01T00:00:00Z',
  producer: facet._producer,
  run: { runId: randomUUID() },
  job: { namespace: 'cs', name: 'report' },
  inputs: [
    { namespace: 'wh', name: 'zeta' },
    { namespace: 'wh', name: 'alpha' },
  ],
  outputs: [
    {
      namespace: 'wh',
      name: 'report',
      facets: {
        columnLineage: {
          ...facet,
          fields: {
            total: {
              inputFields: [
                {
                  namespace: 'wh',
                  name: 'alpha',
                  field: 'b',
                  transformations: [
                    { type: 'INDIRECT', subtype: 'FILTER' },
                    { type: 'DIRECT', subtype: 'AGGREGATION' },
                  ],
                },
                {
                  namespace: 'wh',
                  name: 'zeta',
                  field: 'b',
                  transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
                },
                {
                  namespace: 'wh',
                  name: 'alpha',
                  field: 'a',
                  transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
                },
                {
                  namespace: 'wh',
                  name: 'zeta',
                  field: 'a',
                  transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
                },
              ],
            },
          },
          dataset: [
            {
              namespace: 'wh',
              name: 'alpha',
              field: 'k',
              transformations: [{ type: 'INDIRECT', subtype: 'JOIN' }],
            },
            {
              namespace: 'wh',
              name: 'zeta',
              field: 'k',
              transformations: [{ type: 'INDIRECT', subtype: 'JOIN' }],
            },
          ],
        },
      },
    },
  ],
});

describe.each(backends())("the order of a column's inputs on the $name store", (backend) => {
  let first: Awaited<ReturnType<typeof startApp>>;
  let restarted: HeadwaterServer | undefined;
  const url = '/api/v1/column-lineage?nodeId=datasetField:wh:report:total&depth=1&edges=lineage';
  type Inputs = {
    graph: {
      id: string;
      data: {
        inputFields: {
          dataset: string;
          field: string;
          transformationType: string;
          transformations: { type: string; subtype: string }[];
        }[];
      };
    }[];
  };
  /** The input columns of report.total as answered, each with its transformations as TYPE/SUBTYPE. */
  const inputsOf = (body: Inputs) =>
    body.graph
      .find((node) => node.id === 'datasetField:wh:report:total')!
      .data.inputFields.map((input) => [
        `${input.dataset}.${input.field}`,
        input.transformationType,
        input.transformations.map((t) => `${t.type}/${t.subtype}`),
      ]);
  beforeAll(async () => {
    first = await startApp(backend);
    const response = await first.request('/api/v1/lineage', {
      method: 'POST',
      body: JSON.stringify(unorderedRun()),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(201);
  });
  afterAll(async () => {
    await restarted?.close();
    await first?.stop();
  });

  it('is one order in the graph built from commits and in the graph loaded at a restart', async () => {
    const running = await first.request(url);
    expect(running.status).toBe(200);
    const live = inputsOf((await running.json()) as Inputs);
    await first.server.close();
    restarted = await createServer(Object.freeze({ ...first.config, port: 0 }));
    const response = await restarted.app.inject({ url });
    expect(response.statusCode).toBe(200);
    expect(inputsOf(response.json<Inputs>())).toEqual(live);
    // By input dataset (zeta was named first), then field; an input's transformations by type, then subtype.
    expect(live).toEqual([
      ['zeta.a', 'DIRECT', ['DIRECT/IDENTITY']],
      ['zeta.b', 'DIRECT', ['DIRECT/IDENTITY']],
      ['alpha.a', 'DIRECT', ['DIRECT/IDENTITY']],
      ['alpha.b', 'DIRECT', ['DIRECT/AGGREGATION', 'INDIRECT/FILTER']],
      ['zeta.k', 'INDIRECT', ['INDIRECT/JOIN']],
      ['alpha.k', 'INDIRECT', ['INDIRECT/JOIN']],
    ]);
  });
});
