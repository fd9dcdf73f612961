import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';

const base = { _producer: 'https://example.com/describing', _schemaURL: 'https://example.com/facet.json' };
const deleted = { ...base, _deleted: true };
const FIRST = '2025-03-01T00:00:00.000Z';
const SECOND = '2025-03-02T00:00:00.000Z';

/** A run of etl writing orders, with the job's and the dataset's describing facets as given. */
function event(
  eventType: string,
  eventTime: string,
  runId: string,
  jobFacets: Record<string, unknown>,
  datasetFacets: Record<string, unknown>,
) {
  return {
    eventType,
    eventTime,
    producer: base._producer,
    run: { runId },
    job: { namespace: 'df', name: 'etl', facets: jobFacets },
    inputs: [],
    outputs: [{ namespace: 'df', name: 'orders', facets: datasetFacets }],
  };
}

describe.each(backends())('describing facets deleted by their producer on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const get = async (path: string) => (await ctx.request(path)).json() as Promise<Record<string, unknown>>;
  beforeAll(async () => {
    ctx = await startApp(backend);
    const runId = randomUUID();
    const response = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      body: JSON.stringify([
        event(
          'START',
          FIRST,
          runId,
          {
            documentation: { ...base, description: 'Loads orders' },
            sourceCodeLocation: { ...base, type: 'git', url: 'https://git.example.com/etl' },
            jobType: { ...base, processingType: 'STREAMING', integration: 'FLINK' },
          },
          {
            documentation: { ...base, description: 'Every order' },
            dataSource: { ...base, name: 'warehouse', uri: 'postgres://db.example.com/wh' },
          },
        ),
        // The producer removes what it said (OpenLineage: `_deleted` "set to true to delete a facet").
        event(
          'COMPLETE',
          SECOND,
          runId,
          { documentation: deleted, sourceCodeLocation: deleted, jobType: deleted },
          { documentation: deleted, dataSource: deleted },
        ),
      ]),
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  const described = (record: Record<string, unknown>) => ({
    description: record.description,
    ...('location' in record ? { location: record.location, type: record.type } : {}),
    ...('sourceName' in record ? { sourceName: record.sourceName } : {}),
  });

  it('leaves a job undescribed, now and as of the deletion, as it was described before', async () => {
    const now = described(await get('/api/v1/namespaces/df/jobs/etl'));
    expect(now).toEqual({ description: null, location: null, type: 'BATCH' });
    expect(described(await get(`/api/v1/namespaces/df/jobs/etl?asOf=${SECOND}`))).toEqual(now);
    expect(described(await get(`/api/v1/namespaces/df/jobs/etl?asOf=${FIRST}`))).toEqual({
      description: 'Loads orders',
      location: 'https://git.example.com/etl',
      type: 'STREAM',
    });
  });

  it('leaves a dataset undescribed, now and as of the deletion, as it was described before', async () => {
    const now = described(await get('/api/v1/namespaces/df/datasets/orders'));
    expect(now).toEqual({ description: null, sourceName: 'default' });
    expect(described(await get(`/api/v1/namespaces/df/datasets/orders?asOf=${SECOND}`))).toEqual(now);
    expect(described(await get(`/api/v1/namespaces/df/datasets/orders?asOf=${FIRST}`))).toEqual({
      description: 'Every order',
      sourceName: 'warehouse',
    });
  });
});
