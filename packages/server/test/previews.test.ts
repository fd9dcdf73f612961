/**
 * Previews (/api/v1/previews): a pull request's events go to a store of their own, production's reads never see
 * them, `?preview=` reads them, and the diff against production tells each change's category and consumers.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startServer, type TestServer } from './helpers/backends.js';
import { runCommand } from './helpers/cli.js';
import { previewCommand } from '../src/cli/preview.js';

const PRODUCER = 'https://example.com/headwater/previews-test';
const WAREHOUSE = 'postgres://warehouse:5432';
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});
const schema = (columns: Record<string, string>) =>
  facet('SchemaDatasetFacet', {
    fields: Object.entries(columns).map(([name, type]) => ({ name, type })),
  });
/** Column lineage: output field -> [input dataset, input field]. */
const lineage = (fields: Record<string, readonly (readonly [string, string])[]>) =>
  facet('ColumnLineageDatasetFacet', {
    fields: Object.fromEntries(
      Object.entries(fields).map(([field, inputs]) => [
        field,
        {
          inputFields: inputs.map(([name, inputField]) => ({
            namespace: WAREHOUSE,
            name,
            field: inputField,
            transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
          })),
        },
      ]),
    ),
  });

let minute = 0;
interface RunSpec {
  readonly namespace: string;
  readonly job: string;
  readonly inputs: readonly string[];
  readonly output?: {
    name: string;
    columns: Record<string, string>;
    lineage: Record<string, readonly (readonly [string, string])[]>;
  };
  readonly sql?: string;
  readonly state?: 'COMPLETE' | 'FAIL';
  readonly jobFacets?: Record<string, unknown>;
  /** The output's rowCount (outputStatistics). */
  readonly rows?: number;
  /** Dataset-level lineage: [input dataset, field, INDIRECT subtype]. */
  readonly whole?: readonly (readonly [string, string, string])[];
}
function run(spec: RunSpec): unknown {
  minute++;
  return {
    eventType: spec.state ?? 'COMPLETE',
    eventTime: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: randomUUID() },
    job: {
      namespace: spec.namespace,
      name: spec.job,
      facets: {
        ...(spec.sql ? { sql: facet('SQLJobFacet', { query: spec.sql }) } : {}),
        ...spec.jobFacets,
      },
    },
    inputs: spec.inputs.map((name) => ({ namespace: WAREHOUSE, name })),
    outputs: spec.output
      ? [
          {
            namespace: WAREHOUSE,
            name: spec.output.name,
            facets: {
              schema: schema(spec.output.columns),
              columnLineage: {
                ...lineage(spec.output.lineage),
                ...(spec.whole
                  ? {
                      dataset: spec.whole.map(([name, field, subtype]) => ({
                        namespace: WAREHOUSE,
                        name,
                        field,
                        transformations: [{ type: 'INDIRECT', subtype }],
                      })),
                    }
                  : {}),
              },
            },
            ...(spec.rows === undefined
              ? {}
              : {
                  outputFacets: {
                    outputStatistics: facet('OutputStatisticsOutputDatasetFacet', { rowCount: spec.rows }),
                  },
                }),
          },
        ]
      : [],
  };
}

/** Production: raw.orders -> etl.orders -> analytics.orders -> dashboards.revenue (reads amount, country). */
const production = [
  run({
    namespace: 'etl',
    job: 'analytics.orders',
    inputs: ['raw.orders'],
    sql: "select id, amount, country, note from raw.orders where status = 'done'",
    output: {
      name: 'analytics.orders',
      columns: { id: 'int', amount: 'numeric', country: 'text', note: 'text' },
      lineage: {
        id: [['raw.orders', 'id']],
        amount: [['raw.orders', 'amount']],
        country: [['raw.orders', 'country']],
        note: [['raw.orders', 'note']],
      },
    },
  }),
  run({
    namespace: 'dashboards',
    job: 'revenue',
    inputs: ['analytics.orders'],
    output: {
      name: 'reports.revenue',
      columns: { amount: 'numeric', country: 'text' },
      lineage: { amount: [['analytics.orders', 'amount']], country: [['analytics.orders', 'country']] },
    },
  }),
];

interface Diff {
  summary: { breaking: number; partial: number; nonBreaking: number; consumers: number };
  changes: {
    category: string;
    reason: string;
    node: string;
    column: string | null;
    from: string | null;
    to: string | null;
    consumers: { nodeId: string; distance: number; breakingColumns: string[] }[];
  }[];
  datasets: { added: string[]; removed: string[] };
  jobs: { added: string[]; removed: string[] };
  mappingCoverage: { mapped: { preview: string; production: string }[]; unmapped: string[] };
}

const ORDERS = `dataset:${WAREHOUSE}:analytics.orders`;

describe.each(backends())('previews ($name)', (backend) => {
  let t: TestServer & { url: string };
  const post = (path: string, body: unknown) =>
    t.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const json = async <T>(path: string): Promise<T> => {
    const response = await t.request(path);
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as T;
  };

  beforeAll(async () => {
    t = await startServer(backend);
    const response = await post('/api/v1/lineage/batch', production);
    expect(response.status).toBe(200);
  });
  afterAll(() => t?.stop());

  it('creates a preview, refuses a second of the same name or job namespace, and lists it', async () => {
    const created = await post('/api/v1/previews', {
      name: 'pr-7',
      jobNamespace: 'etl-pr-7',
      baseNamespace: 'etl',
      pullRequest: 7,
      mappings: [{ from: { name: 'pr_7.*' }, to: { name: 'analytics.*' } }],
      ttl: '14d',
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const body = (await created.json()) as { name: string; expiresAt: string };
    expect(body.name).toBe('pr-7');
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(13 * 86_400_000);
    expect(
      (await post('/api/v1/previews', { name: 'pr-7', jobNamespace: 'other', baseNamespace: 'etl' })).status,
    ).toBe(409);
    expect(
      (await post('/api/v1/previews', { name: 'pr-8', jobNamespace: 'etl-pr-7', baseNamespace: 'etl' }))
        .status,
    ).toBe(409);
    expect(
      (await post('/api/v1/previews', { name: 'Bad Name', jobNamespace: 'x', baseNamespace: 'etl' })).status,
    ).toBe(400);
    const listed = await json<{ previews: { name: string }[] }>('/api/v1/previews');
    expect(listed.previews.map((preview) => preview.name)).toEqual(['pr-7']);
  });

  it("keeps the preview's events out of production and serves them with ?preview=", async () => {
    // The pull request drops `note`, renames `country` to `region`, retypes `id`, filters differently, and a
    // job found by its sourceCodeLocation (another namespace) is the preview's too.
    const events = [
      run({
        namespace: 'etl-pr-7',
        job: 'analytics.orders',
        inputs: ['raw.orders'],
        sql: "select id, amount, country as region from raw.orders where status in ('done', 'paid')",
        output: {
          name: 'pr_7.orders',
          columns: { id: 'bigint', amount: 'numeric', region: 'text' },
          lineage: {
            id: [['raw.orders', 'id']],
            amount: [['raw.orders', 'amount']],
            region: [['raw.orders', 'country']],
          },
        },
      }),
      run({
        namespace: 'scripts',
        job: 'pr_7.extra',
        inputs: ['pr_7.orders'],
        jobFacets: {
          sourceCodeLocation: facet('SourceCodeLocationJobFacet', {
            type: 'git',
            url: 'https://github.com/acme/pipelines/pull/7',
            branch: 'feature/x',
          }),
        },
        output: {
          name: 'pr_7.extra',
          columns: { amount: 'numeric' },
          lineage: { amount: [['pr_7.orders', 'amount']] },
        },
      }),
    ];
    const response = await post('/api/v1/lineage/batch', events);
    expect(response.status, await response.clone().text()).toBe(200);

    const namespaces = await json<{ namespaces: { name: string }[] }>('/api/v1/namespaces');
    expect(namespaces.namespaces.map((namespace) => namespace.name)).not.toContain('etl-pr-7');
    const search = await json<{ results: { name: string }[] }>('/api/v1/search?q=pr_7');
    expect(search.results).toEqual([]);
    expect((await t.request('/api/v1/namespaces/etl-pr-7/jobs/analytics.orders')).status).toBe(404);

    const previewJob = await json<{ name: string; outputs: { name: string }[] }>(
      '/api/v1/namespaces/etl-pr-7/jobs/analytics.orders?preview=pr-7',
    );
    expect(previewJob.outputs.map((output) => output.name)).toEqual(['pr_7.orders']);
    const previewNamespaces = await json<{ namespaces: { name: string }[] }>(
      '/api/v1/namespaces?preview=pr-7',
    );
    expect(previewNamespaces.namespaces.map((namespace) => namespace.name)).toEqual(
      expect.arrayContaining(['etl-pr-7', 'scripts']),
    );
    expect((await t.request('/api/v1/namespaces?preview=nope')).status).toBe(404);
    expect((await post('/api/v1/namespaces/x?preview=pr-7', {})).status).toBe(400);
  });

  it('diffs the preview against production: categories, reasons and the consumers each reaches', async () => {
    const diff = await json<Diff>('/api/v1/previews/pr-7/diff');
    const find = (reason: string, column?: string) =>
      diff.changes.find(
        (change) => change.reason === reason && (column === undefined || change.column === column),
      );

    const renamed = find('column-renamed', 'country');
    expect(renamed).toMatchObject({ category: 'breaking', node: ORDERS, from: 'country', to: 'region' });
    expect(renamed!.consumers.map((consumer) => consumer.nodeId)).toContain('job:dashboards:revenue');

    // `note` is read by nobody downstream: removing it breaks nothing.
    expect(find('column-removed', 'note')).toMatchObject({ category: 'non-breaking', consumers: [] });
    expect(find('column-retyped', 'id')).toMatchObject({
      category: 'non-breaking',
      from: 'int',
      to: 'bigint',
    });

    const rows = find('rows-changed');
    expect(rows).toMatchObject({ category: 'breaking', node: 'job:etl:analytics.orders' });
    expect(rows!.consumers.map((consumer) => consumer.nodeId)).toEqual(
      expect.arrayContaining([ORDERS, 'job:dashboards:revenue', `dataset:${WAREHOUSE}:reports.revenue`]),
    );

    expect(diff.datasets.added).toEqual([`dataset:${WAREHOUSE}:pr_7.extra`]);
    expect(diff.mappingCoverage.unmapped).toEqual([`dataset:${WAREHOUSE}:pr_7.extra`]);
    expect(diff.mappingCoverage.mapped).toContainEqual({
      preview: `dataset:${WAREHOUSE}:pr_7.orders`,
      production: ORDERS,
    });
    expect(diff.summary.breaking).toBe(
      diff.changes.filter((change) => change.category === 'breaking').length,
    );
    expect(diff.changes.map((change) => change.category)).toEqual(
      [...diff.changes.map((change) => change.category)].sort(
        (a, b) =>
          ['breaking', 'partial', 'non-breaking'].indexOf(a) -
          ['breaking', 'partial', 'non-breaking'].indexOf(b),
      ),
    );

    const markdown = await t.request('/api/v1/previews/pr-7/diff?format=markdown');
    expect(markdown.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await markdown.text();
    expect(text).toContain('| 🔴 breaking | 2 |');
    expect(text).toContain('`job:dashboards:revenue`');
  });

  it('deletes a preview with everything it held', async () => {
    const response = await t.request('/api/v1/previews/pr-7', { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect((await t.request('/api/v1/previews/pr-7')).status).toBe(404);
    expect((await t.request('/api/v1/namespaces?preview=pr-7')).status).toBe(404);
    // Created again, it starts empty.
    expect(
      (await post('/api/v1/previews', { name: 'pr-7', jobNamespace: 'etl-pr-7', baseNamespace: 'etl' }))
        .status,
    ).toBe(201);
    const namespaces = await json<{ namespaces: { name: string }[] }>('/api/v1/namespaces?preview=pr-7');
    expect(namespaces.namespaces.map((namespace) => namespace.name)).not.toContain('etl-pr-7');
  });

  it('the CLI creates a preview with --map, diffs it (--fail-on breaking exits 1) and deletes it', async () => {
    const url = ['--url', t.url];
    const created = await runCommand(previewCommand, [
      'create',
      'pr-9',
      '--base',
      'etl',
      '--job-namespace',
      'etl-pr-9',
      '--map',
      'pr_9.*=analytics.*',
      '--pr',
      '9',
      ...url,
    ]);
    expect(created, created.stderr).toMatchObject({ code: 0 });
    expect(created.stdout).toContain('pr-9: jobs of etl-pr-9 stand in for etl, pull request 9');
    expect((await runCommand(previewCommand, ['create', 'pr-10', '--map', 'nonsense', ...url])).code).toBe(2);

    // The pull request drops `amount`, which the dashboard reads.
    const response = await post(
      '/api/v1/lineage',
      run({
        namespace: 'etl-pr-9',
        job: 'analytics.orders',
        inputs: ['raw.orders'],
        sql: "select id, country, note from raw.orders where status = 'done'",
        output: {
          name: 'pr_9.orders',
          columns: { id: 'int', country: 'text', note: 'text' },
          lineage: {
            id: [['raw.orders', 'id']],
            country: [['raw.orders', 'country']],
            note: [['raw.orders', 'note']],
          },
        },
      }),
    );
    expect(response.status).toBe(201);

    const table = await runCommand(previewCommand, ['diff', 'pr-9', ...url]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /breaking\s+column-removed\s+postgres:\/\/warehouse:5432:analytics\.orders\s+amount\s+.*dashboards:revenue/,
    );
    expect(table.stdout).toMatch(/non-breaking\s+sql-changed/);
    const gated = await runCommand(previewCommand, [
      'diff',
      'pr-9',
      '--fail-on',
      'breaking',
      '--format',
      'markdown',
      ...url,
    ]);
    expect(gated.code).toBe(1);
    expect(gated.stderr).toContain('1 breaking change (--fail-on breaking)');
    expect(gated.stdout).toContain('### Lineage preview `pr-9` against production `etl`');
    expect(gated.stdout).toContain('| `job:dashboards:revenue` | 1 | — | `amount` |');
    const json = await runCommand(previewCommand, ['diff', 'pr-9', '--json', ...url]);
    expect((JSON.parse(json.stdout) as Diff).summary.breaking).toBe(1);

    const listed = await runCommand(previewCommand, ['list', ...url]);
    expect(listed.stdout).toMatch(/pr-9\s+etl-pr-9\s+etl\s+9/);
    expect((await runCommand(previewCommand, ['delete', 'pr-9', ...url])).code).toBe(0);
    const gone = await runCommand(previewCommand, ['show', 'pr-9', ...url]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
  });

  it('removes a preview once its time runs out, with its store', async () => {
    const created = await post('/api/v1/previews', {
      name: 'short-lived',
      jobNamespace: 'etl-short',
      baseNamespace: 'etl',
      ttl: '1s',
    });
    expect(created.status).toBe(201);
    await post('/api/v1/lineage', run({ namespace: 'etl-short', job: 'j', inputs: ['raw.orders'] }));
    expect((await t.request('/api/v1/namespaces/etl-short/jobs/j?preview=short-lived')).status).toBe(200);
    // Its store: a schema beside production's tables, or (PGlite) a folder of the data dir.
    const stored = async () =>
      (
        await t.server.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'hw_preview_short_lived'",
        )
      )[0]!.n + (existsSync(path.join(t.config.dataDir, 'previews', 'short-lived')) ? 1 : 0);
    expect(await stored()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await t.server.previews!.sweep();
    expect(await stored()).toBe(0);
    expect((await t.request('/api/v1/previews/short-lived')).status).toBe(404);
    expect((await t.request('/api/v1/namespaces/etl-short/jobs/j?preview=short-lived')).status).toBe(404);
    // Its events went nowhere else.
    expect((await t.request('/api/v1/namespaces/etl-short/jobs/j')).status).toBe(404);
  });

  it('tells a column derived otherwise, rows kept otherwise (dataset-level lineage), row-count drift and a failed run', async () => {
    const production2 = [
      run({
        namespace: 'etl2',
        job: 'warehouse2.a',
        inputs: ['raw.orders'],
        jobFacets: {
          sourceCode: facet('SourceCodeJobFacet', { language: 'python', sourceCode: 'df.filter(status)' }),
        },
        rows: 1000,
        whole: [['raw.orders', 'status', 'FILTER']],
        output: {
          name: 'warehouse2.a',
          columns: { x: 'numeric' },
          lineage: { x: [['raw.orders', 'amount']] },
        },
      }),
      run({
        namespace: 'etl2',
        job: 'warehouse2.b',
        inputs: ['raw.orders'],
        output: { name: 'warehouse2.b', columns: { y: 'int' }, lineage: { y: [['raw.orders', 'id']] } },
      }),
      run({
        namespace: 'dashboards2',
        job: 'report',
        inputs: ['warehouse2.a', 'warehouse2.b'],
        output: {
          name: 'reports.two',
          columns: { x: 'numeric', y: 'int' },
          lineage: { x: [['warehouse2.a', 'x']], y: [['warehouse2.b', 'y']] },
        },
      }),
    ];
    expect((await post('/api/v1/lineage/batch', production2)).status).toBe(200);
    expect(
      (
        await post('/api/v1/previews', {
          name: 'pr-11',
          jobNamespace: 'etl2-pr-11',
          baseNamespace: 'etl2',
          mappings: [{ from: { name: 'pr_11.*' }, to: { name: 'warehouse2.*' } }],
        })
      ).status,
    ).toBe(201);
    const preview = [
      // x now from `note`; grouped instead of filtered; twice the rows.
      run({
        namespace: 'etl2-pr-11',
        job: 'warehouse2.a',
        inputs: ['raw.orders'],
        jobFacets: {
          sourceCode: facet('SourceCodeJobFacet', { language: 'python', sourceCode: 'df.groupBy(country)' }),
        },
        rows: 2000,
        whole: [['raw.orders', 'country', 'GROUP_BY']],
        output: { name: 'pr_11.a', columns: { x: 'numeric' }, lineage: { x: [['raw.orders', 'note']] } },
      }),
      // b's run failed: its output is told by the failure, not column by column.
      run({
        namespace: 'etl2-pr-11',
        job: 'warehouse2.b',
        inputs: ['raw.orders'],
        state: 'FAIL',
        output: { name: 'pr_11.b', columns: {}, lineage: {} },
      }),
    ];
    expect((await post('/api/v1/lineage/batch', preview)).status).toBe(200);
    const diff = await json<Diff>('/api/v1/previews/pr-11/diff');
    const reasons = diff.changes.map((change) => [change.category, change.reason, change.column]);
    expect(reasons).toEqual(
      expect.arrayContaining([
        ['partial', 'column-redefined', 'x'],
        ['breaking', 'rows-changed', null],
        ['breaking', 'run-failed', null],
        ['non-breaking', 'row-count-drift', null],
        ['non-breaking', 'code-changed', null],
      ]),
    );
    const find = (reason: string) => diff.changes.find((change) => change.reason === reason)!;
    expect(find('row-count-drift')).toMatchObject({ from: '1000', to: '2000' });
    expect(find('run-failed')).toMatchObject({
      node: 'job:etl2:warehouse2.b',
      from: 'COMPLETED',
      to: 'FAILED',
    });
    expect(find('run-failed').consumers.map((consumer) => consumer.nodeId)).toContain(
      'job:dashboards2:report',
    );
    expect(find('column-redefined').consumers.map((consumer) => consumer.nodeId)).toContain(
      'job:dashboards2:report',
    );
    expect(find('rows-changed').node).toBe('job:etl2:warehouse2.a');
    // Nothing about b's columns: the failure says it.
    expect(diff.changes.filter((change) => change.node === `dataset:${WAREHOUSE}:warehouse2.b`)).toEqual([]);
  });
});
