/**
 * Limits and redaction at ingest, against a real server on every backend: each rule of a redaction config is
 * visible on the stored event and in the read API, no secret reaches the store, and the reject mode still refuses
 * an oversized facet alone in a batch.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/server-config.js';
import { backends, startApp } from './helpers/backends.js';
import { PRODUCER, at, T0 } from './read-scenario.js';

const EMAIL = 'ana.zzleak@corp.example';
const LITERAL = 'zzleak-literal-value';
const RUN = '0190d3a2-0000-7000-8000-0000000000e1';
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-1/${name}.json`,
  ...fields,
});

const rulesYaml = `
rules:
  - { name: no-environment, type: dropFacets, facets: [environmentVariables] }
  - { name: emails, type: mask, builtin: email, replacement: "<email>" }
  - { name: sql-literals, type: maskSqlLiterals }
  - name: no-distributions
    type: dropQualityDistributions
`;

/** A run event that gives every rule something to do. */
const runEvent = (eventType = 'COMPLETE') => ({
  eventType,
  eventTime: at(T0),
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
  run: {
    runId: RUN,
    facets: {
      environmentVariables: facet('EnvironmentVariablesRunFacet', {
        environmentVariables: [{ name: 'DB_PASSWORD', value: LITERAL }],
      }),
      errorMessage: facet('ErrorMessageRunFacet', {
        message: `mail to ${EMAIL} bounced`,
        programmingLanguage: 'python',
      }),
      // Larger than the 4 KiB limit, by text.
      spark_plan: {
        _producer: PRODUCER,
        _schemaURL: 'https://example.com/plan.json',
        plan: 'p'.repeat(6000),
      },
    },
  },
  job: {
    namespace: 'redaction-jobs',
    name: 'load',
    facets: {
      sql: facet('SQLJobFacet', {
        query: `SELECT * FROM shop.orders WHERE note = '${LITERAL}' AND id = 42 /* ${'x'.repeat(400)} */`,
      }),
    },
  },
  inputs: [
    {
      namespace: 'redaction://lake',
      name: 'orders',
      facets: { documentation: facet('DocumentationDatasetFacet', { description: `owned by ${EMAIL}` }) },
      inputFacets: {
        dataQualityMetrics: facet('DataQualityMetricsInputDatasetFacet', {
          rowCount: 10,
          columnMetrics: {
            amount: { nullCount: 1, count: 10, min: 1, max: 9000, sum: 12345, quantiles: { '0.5': 17 } },
          },
        }),
      },
    },
  ],
  outputs: [{ namespace: 'redaction://lake', name: 'clean' }],
});

const datasetEvent = {
  eventTime: at(T0 + 1000),
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
  dataset: {
    namespace: 'redaction://lake',
    name: 'contacts',
    facets: { documentation: facet('DocumentationDatasetFacet', { description: `ask ${EMAIL}` }) },
  },
};

type Facets = Record<string, Record<string, unknown>>;
/** A stored event, as much of it as these tests read. */
interface Stored {
  run?: { runId: string; facets: Facets };
  job: { facets: Facets };
  inputs: { facets: Facets; inputFacets: Facets }[];
  dataset?: { name: string; facets: Facets };
}

describe.each(backends())('redaction at ingest on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let dir: string;
  const get = async <T>(url: string) => {
    const response = await ctx.request(`/api/v1${url}`);
    expect(response.status, url).toBe(200);
    return (await response.json()) as T;
  };
  const post = (url: string, body: unknown) =>
    ctx.request(`/api/v1${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-redaction-'));
    await writeFile(path.join(dir, 'redaction.yml'), rulesYaml);
    const { redaction } = resolveConfig(
      {
        'redaction-config': path.join(dir, 'redaction.yml'),
        'max-sql-length': '200',
        'oversized-facets': 'truncate',
        'max-facet-bytes': '4096',
      },
      {},
    );
    ctx = await startApp(backend, { redaction });
    expect((await post('/lineage', runEvent())).status).toBe(201);
    expect((await post('/lineage', datasetEvent)).status).toBe(201);
  });
  afterAll(async () => {
    await ctx?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stores the redacted event, recording each rule and its count', async () => {
    const { events } = await get<{ events: Stored[] }>('/events/lineage?kind=run&kind=dataset');
    const run = events.find((event) => event.run?.runId === RUN)!;
    const facets = run.run!.facets;
    expect(facets.environmentVariables).toBeUndefined();
    expect(facets.errorMessage!.message).toBe('mail to <email> bounced');
    const plan = facets.spark_plan!;
    expect(Buffer.byteLength(JSON.stringify(plan))).toBeLessThanOrEqual(4096);
    expect(plan.plan).toMatch(/^p+…\[truncated \d+ characters\]$/);
    const query = run.job.facets.sql!.query as string;
    expect(query.startsWith('SELECT * FROM shop.orders WHERE note = ? AND id = ? /* xxx')).toBe(true);
    expect(query).toHaveLength(200);
    expect(query.endsWith('…[truncated]')).toBe(true);
    expect(run.inputs[0]!.facets.documentation!.description).toBe('owned by <email>');
    expect(run.inputs[0]!.inputFacets.dataQualityMetrics!.columnMetrics).toEqual({
      amount: { nullCount: 1, count: 10 },
    });
    expect(facets.headwater_redaction).toEqual({
      _producer: 'https://github.com/headwater/headwater/tree/v0.1.0/packages/server',
      _schemaURL:
        'https://github.com/headwater/headwater/tree/v0.1.0/packages/openlineage/schemas/RedactionFacet.json#/$defs/RedactionFacet',
      rules: [
        { name: 'no-environment', changes: 1 },
        { name: 'emails', changes: 2 },
        { name: 'sql-literals', changes: 1 },
        { name: 'no-distributions', changes: 1 },
        { name: 'maxSqlLength', changes: 1 },
        { name: 'maxFacetBytes', changes: 1 },
      ],
      removedFacets: ['run.environmentVariables'],
      truncatedFacets: ['run.spark_plan'],
    });
    // A DatasetEvent records it on its dataset.
    const dataset = events.find((event) => event.dataset?.name === 'contacts')!;
    expect(dataset.dataset!.facets.documentation!.description).toBe('ask <email>');
    expect(dataset.dataset!.facets.headwater_redaction!.rules).toEqual([{ name: 'emails', changes: 1 }]);
  });

  it('serves the redacted facets from the job, run and dataset routes', async () => {
    const job = await get<{ facets: Facets }>(`/jobs/runs/${RUN}/facets?type=job`);
    expect(job.facets.sql!.query).toContain('note = ? AND id = ?');
    const run = await get<{ facets: Facets }>(`/jobs/runs/${RUN}/facets?type=run`);
    expect(Object.keys(run.facets).sort()).toEqual(['errorMessage', 'headwater_redaction', 'spark_plan']);
    const orders = await get<{ facets: Facets }>(
      `/namespaces/${encodeURIComponent('redaction://lake')}/datasets/orders`,
    );
    expect(orders.facets.documentation!.description).toBe('owned by <email>');
    expect(orders.facets.dataQualityMetrics!.columnMetrics).toEqual({ amount: { nullCount: 1, count: 10 } });
    const contacts = await get<{ facets: Facets }>(
      `/namespaces/${encodeURIComponent('redaction://lake')}/datasets/contacts`,
    );
    expect(contacts.facets.documentation!.description).toBe('ask <email>');
  });

  it('never lets a secret reach the store', async () => {
    const tables = await ctx.server.db.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    expect(tables.length).toBeGreaterThan(5);
    let rows = 0;
    for (const { name } of tables) {
      const content = await ctx.server.db.query<Record<string, unknown>>(`SELECT * FROM "${name}"`);
      rows += content.length;
      const text = JSON.stringify(content, (_key, value: unknown) =>
        typeof value === 'bigint' ? String(value) : Buffer.isBuffer(value) ? value.toString('utf8') : value,
      );
      expect(text, name).not.toContain('zzleak');
      // The statistic as a value of its own, not four digits inside a random id or a time in milliseconds.
      expect(text, name).not.toMatch(/(?<![\w.-])9000(?![\w-])/);
    }
    // The events are in there (the search would pass on an empty store).
    expect(rows).toBeGreaterThan(10);
  });

  it('stores an identical event once, by its redacted content', async () => {
    expect((await post('/lineage', runEvent())).status).toBe(201);
    const { totalCount } = await get<{ totalCount: number }>('/events/lineage?limit=0&kind=run&kind=dataset');
    expect(totalCount).toBe(2);
  });
});

describe('oversized facets in reject mode', () => {
  const [embedded] = backends();
  let ctx: Awaited<ReturnType<typeof startApp>>;

  beforeAll(async () => {
    const { redaction } = resolveConfig({ 'max-facet-bytes': '4096' }, {});
    ctx = await startApp(embedded!, { redaction });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('refuses the event with the path and the limit, alone in a batch', async () => {
    const good = { ...runEvent(), run: { runId: RUN, facets: {} } };
    const single = await ctx.request('/api/v1/lineage', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(runEvent()),
    });
    expect(single.status).toBe(422);
    const body = (await single.json()) as { errors: string[] };
    expect(body.errors).toEqual([
      expect.stringMatching(
        /^\$\.run\.facets\.spark_plan: is \d+ bytes of JSON; a facet may have at most 4096 bytes$/,
      ),
    ]);
    const batch = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([good, runEvent('FAIL')]),
    });
    expect(batch.status).toBe(200);
    const answer = (await batch.json()) as {
      summary: { successful: number; failed: number };
      failed_events: { index: number; reason: string }[];
    };
    expect(answer.summary).toMatchObject({ successful: 1, failed: 1 });
    expect(answer.failed_events).toEqual([expect.objectContaining({ index: 1, retriable: false })]);
    expect(answer.failed_events[0]!.reason).toContain('spark_plan');
    // Nothing is changed in reject mode: the stored event is the one sent.
    const { events } = (await (await ctx.request('/api/v1/events/lineage')).json()) as {
      events: unknown[];
    };
    expect(events).toEqual([good]);
  });
});
