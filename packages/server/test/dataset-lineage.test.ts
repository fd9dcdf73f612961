/**
 * Dataset-level column lineage, as the Spark listener sends it: the columnLineage facet's `dataset` list names
 * the input columns that influence the whole output (a join key, a filter, a grouping). They are stored, served
 * on the dataset, and count in column impact and root cause: dropping a join key breaks the job.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from './helpers/api.js';
import { backends, startApp } from './helpers/backends.js';
import { PRODUCER, T0, runEvent } from './read-scenario.js';

const NS = 'file';
const ORDERS = '/lake/orders';
const CUSTOMERS = '/lake/customers';
const OUT = '/lake/revenue_by_customer';
const input = (name: string, field: string, type: string, subtype: string) => ({
  namespace: NS,
  name,
  field,
  transformations: [{ type, subtype, description: '', masking: false }],
});
const lineage = {
  _producer: PRODUCER,
  _schemaURL: 'https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json',
  fields: {
    customer_name: { inputFields: [input(CUSTOMERS, 'name', 'DIRECT', 'IDENTITY')] },
    revenue: { inputFields: [input(ORDERS, 'amount', 'DIRECT', 'AGGREGATION')] },
  },
  dataset: [
    input(ORDERS, 'customer_id', 'INDIRECT', 'JOIN'),
    input(CUSTOMERS, 'id', 'INDIRECT', 'JOIN'),
    input(ORDERS, 'status', 'INDIRECT', 'FILTER'),
    input(CUSTOMERS, 'name', 'INDIRECT', 'GROUP_BY'),
  ],
};

interface Impacted {
  nodeId: string;
  level: string;
  breakingColumns: string[];
}

describe.each(backends())('dataset-level column lineage on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const api = apiOf(() => ctx.request);
  const field = (dataset: string, name: string) => `datasetField:${NS}:${dataset}:${name}`;

  beforeAll(async () => {
    ctx = await startApp(backend);
    const runId = randomUUID();
    const base = { runId, job: 'spark_app.revenue', namespace: 'spark' };
    const inputs = [
      { namespace: NS, name: ORDERS, facets: {} },
      { namespace: NS, name: CUSTOMERS, facets: {} },
    ];
    await api.post(
      runEvent({ ...base, eventType: 'START', time: T0, inputs }),
      runEvent({
        ...base,
        eventType: 'COMPLETE',
        time: T0 + 60_000,
        inputs,
        outputs: [{ namespace: NS, name: OUT, facets: { columnLineage: lineage } }],
      }),
    );
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('serves them on the dataset, apart from the per-column lineage', async () => {
    const dataset = await api.get<{
      columnLineage: { name: string }[];
      datasetInputFields: { dataset: string; field: string; transformationType: string }[];
    }>(`/api/v1/namespaces/${NS}/datasets/${encodeURIComponent(OUT)}`);
    expect(dataset.columnLineage.map((c) => c.name)).toEqual(['customer_name', 'revenue']);
    expect(dataset.datasetInputFields.map((f) => [f.dataset, f.field, f.transformationType])).toEqual([
      [CUSTOMERS, 'id', 'INDIRECT'],
      [CUSTOMERS, 'name', 'INDIRECT'],
      [ORDERS, 'customer_id', 'INDIRECT'],
      [ORDERS, 'status', 'INDIRECT'],
    ]);
  });

  it('dropping the join key breaks the job and every column of its output', async () => {
    const answer = await api.get<{ breaking: boolean; nodes: Impacted[] }>(
      `/api/v1/analysis/impact?change=removed&nodeId=${encodeURIComponent(field(ORDERS, 'customer_id'))}`,
    );
    expect(answer.breaking).toBe(true);
    expect(answer.nodes.map((n) => [n.nodeId, n.level, n.breakingColumns])).toEqual([
      ['job:spark:spark_app.revenue', 'breaking', [field(ORDERS, 'customer_id')]],
      [`dataset:${NS}:${OUT}`, 'breaking', [field(OUT, 'customer_name'), field(OUT, 'revenue')]],
    ]);
  });

  it('root cause of an output column walks up to the columns that filter and join it', async () => {
    const answer = await api.get<{ checked: { datasets: number; jobs: number } }>(
      `/api/v1/analysis/root-cause?nodeId=${encodeURIComponent(field(OUT, 'revenue'))}`,
    );
    // revenue itself, and orders (amount, customer_id, status) and customers (id) through the job.
    expect(answer.checked).toEqual({ datasets: 3, jobs: 1 });
  });
});
