/**
 * ML lineage (GET /api/v1/compliance/models): a model is a dataset of type MODEL, trained by the runs that write
 * it and served by the jobs that read it; "which served models were trained on data that was bad or has been
 * erased" comes from each model's upstream journey.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp, type TestServer } from './helpers/backends.js';

const PRODUCER = 'https://example.com/headwater/models-test';
const WH = 'postgres://warehouse:5432';
const REGISTRY = 'mlflow://registry';
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});
const model = facet('DatasetTypeDatasetFacet', { datasetType: 'MODEL', subType: 'classifier' });

let hour = 0;
interface Io {
  namespace: string;
  name: string;
  facets?: Record<string, unknown>;
  inputFacets?: Record<string, unknown>;
}
const run = (namespace: string, job: string, inputs: Io[], outputs: Io[]) => ({
  eventType: 'COMPLETE',
  eventTime: new Date(Date.UTC(2026, 5, 1, ++hour)).toISOString(),
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
  run: { runId: randomUUID() },
  job: { namespace, name: job },
  inputs,
  outputs,
});
const failing = {
  dataQualityAssertions: facet('DataQualityAssertionsDatasetFacet', {
    assertions: [{ assertion: 'not_null', column: 'customer_id', success: false }],
  }),
};

const events = [
  // churn: its features were built from raw data that failed a check; trained twice, served.
  run(
    'features',
    'build_churn',
    [{ namespace: WH, name: 'raw.events', inputFacets: failing }],
    [{ namespace: WH, name: 'features.churn' }],
  ),
  run(
    'ml',
    'train_churn',
    [{ namespace: WH, name: 'features.churn' }],
    [{ namespace: REGISTRY, name: 'churn', facets: { datasetType: model } }],
  ),
  run(
    'ml',
    'train_churn',
    [{ namespace: WH, name: 'features.churn' }],
    [{ namespace: REGISTRY, name: 'churn' }],
  ),
  run(
    'serving',
    'churn_api',
    [{ namespace: REGISTRY, name: 'churn' }],
    [{ namespace: WH, name: 'predictions.churn' }],
  ),
  // clean: good data, served.
  run(
    'ml',
    'train_clean',
    [{ namespace: WH, name: 'features.clean' }],
    [{ namespace: REGISTRY, name: 'clean', facets: { datasetType: model } }],
  ),
  run('serving', 'clean_api', [{ namespace: REGISTRY, name: 'clean' }], []),
  // legacy: trained on data since erased, never served.
  run(
    'ml',
    'train_legacy',
    [{ namespace: WH, name: 'features.old' }],
    [{ namespace: REGISTRY, name: 'legacy', facets: { datasetType: model } }],
  ),
  run(
    'ops',
    'erase',
    [],
    [
      {
        namespace: WH,
        name: 'features.old',
        facets: {
          lifecycleStateChange: facet('LifecycleStateChangeDatasetFacet', { lifecycleStateChange: 'DROP' }),
        },
      },
    ],
  ),
  // Not a model: a table the serving job wrote.
];

interface Models {
  models: {
    nodeId: string;
    trainedBy: string[];
    servedBy: string[];
    lastTrained: string | null;
    tainted: { nodeId: string; reason: string; distance: number }[];
  }[];
}

describe.each(backends())('ML lineage ($name)', (backend) => {
  let t: TestServer;
  const get = async (query: string) => {
    const response = await t.request(`/api/v1/compliance/models${query}`);
    expect(response.status).toBe(200);
    return (await response.json()) as Models;
  };
  beforeAll(async () => {
    t = await startApp(backend);
    const response = await t.request('/api/v1/lineage/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(events),
    });
    expect(response.status).toBe(200);
  });
  afterAll(() => t?.stop());

  it('lists the models with who trained and serves them, and what they were trained on that was bad or erased', async () => {
    const { models } = await get('?from=2026-05-01T00:00:00Z');
    expect(models.map((m) => m.nodeId)).toEqual([
      `dataset:${REGISTRY}:churn`,
      `dataset:${REGISTRY}:clean`,
      `dataset:${REGISTRY}:legacy`,
    ]);
    const [churn, clean, legacy] = models;
    expect(churn).toMatchObject({
      trainedBy: ['job:ml:train_churn'],
      servedBy: ['job:serving:churn_api'],
      lastTrained: new Date(Date.UTC(2026, 5, 1, 3)).toISOString(),
      tainted: [{ nodeId: `dataset:${WH}:raw.events`, reason: 'failed-assertion', distance: 2 }],
    });
    expect(clean).toMatchObject({ servedBy: ['job:serving:clean_api'], tainted: [] });
    expect(legacy).toMatchObject({
      servedBy: [],
      tainted: [{ nodeId: `dataset:${WH}:features.old`, reason: 'erased', distance: 1 }],
    });
  });

  it('answers "which served models were trained on bad or erased data" with served=true&tainted=true', async () => {
    const { models } = await get('?from=2026-05-01T00:00:00Z&served=true&tainted=true');
    expect(models.map((m) => m.nodeId)).toEqual([`dataset:${REGISTRY}:churn`]);
    const all = await get('?from=2026-05-01T00:00:00Z&tainted=true');
    expect(all.models.map((m) => m.nodeId)).toEqual([
      `dataset:${REGISTRY}:churn`,
      `dataset:${REGISTRY}:legacy`,
    ]);
    // A window that ends after legacy's training but before its data was erased: legacy is not tainted yet.
    const before = await get(
      `?from=2026-05-01T00:00:00Z&to=${new Date(Date.UTC(2026, 5, 1, 7)).toISOString()}&tainted=true`,
    );
    expect(before.models.map((m) => m.nodeId)).toEqual([`dataset:${REGISTRY}:churn`]);
  });
});
