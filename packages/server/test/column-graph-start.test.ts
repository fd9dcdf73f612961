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
