/**
 * Change review with a real dbt project: a git repository holds it (producers/dbt_preview), `dbt-ol build` on
 * main runs into production, and each scenario branch (a pull request) runs into a preview of its own. The diff
 * of each preview against production must give the change's category and reach the consumers it breaks,
 * including one outside dbt: a dashboard job sent by the TypeScript client reading two marts.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  columnLineageDatasetFacet,
  createClient,
  inputDataset,
  outputDataset,
  runEvent,
} from '@headwater/openlineage';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startServer, type TestServer } from '../helpers/backends.js';
import { runCommand } from '../helpers/cli.js';
import { previewCommand } from '../../src/cli/preview.js';
import { interopToolchain } from './toolchain.js';
import { POSTGRES_NAMESPACE } from './scenario.js';

const run = promisify(execFile);
const project = path.join(path.dirname(fileURLToPath(import.meta.url)), 'producers', 'dbt_preview');
const tool = interopToolchain();

interface Change {
  category: string;
  reason: string;
  node: string;
  column: string | null;
  from: string | null;
  to: string | null;
  consumers: { nodeId: string; distance: number }[];
}
interface Diff {
  summary: { breaking: number; partial: number; nonBreaking: number };
  changes: Change[];
  datasets: { added: string[]; removed: string[] };
  jobs: { added: string[]; removed: string[] };
  mappingCoverage: { unmapped: string[] };
}

/** A pull request: the files it writes (or deletes, with null), and what its diff must hold. */
interface Scenario {
  readonly branch: string;
  readonly files: Record<string, string | null>;
  readonly check: (diff: Diff, names: Names) => void;
}

interface Names {
  /** The production dataset nodeId of a model or seed. */
  dataset(model: string): string;
  /** The production job nodeId of a model's run. */
  job(model: string): string;
}

const DASHBOARD = 'job:dashboards:finance.revenue_dashboard';

const REVENUE = (columns: string) => `select c.country, ${columns}
from {{ ref('stg_orders') }} o
join {{ ref('stg_customers') }} c on o.customer_id = c.customer_id
group by c.country
`;
const SCHEMA = (revenue: string, sizes: string) => `version: 2
models:
  - name: customer_revenue
    columns:
${revenue}
${sizes}`;
const REVENUE_COLUMNS = (...columns: [string, string][]) =>
  columns.map(([name, type]) => `      - name: ${name}\n        data_type: ${type}`).join('\n');
const SIZES = (amountType: string) => `  - name: order_sizes
    columns:
      - name: order_id
        data_type: integer
      - name: amount
        data_type: ${amountType}
`;

const find = (diff: Diff, reason: string, column?: string) => {
  const change = diff.changes.find(
    (candidate) => candidate.reason === reason && (column === undefined || candidate.column === column),
  );
  expect(change, `${reason} ${column ?? ''} in ${JSON.stringify(diff.changes, null, 1)}`).toBeDefined();
  return change!;
};
const consumersOf = (change: Change) => change.consumers.map((consumer) => consumer.nodeId);

const SCENARIOS: readonly Scenario[] = [
  {
    branch: 'add-column',
    files: {
      'models/marts/customer_revenue.sql': REVENUE(
        'sum(o.amount) as revenue, count(o.order_id) as orders, avg(o.amount) as avg_order',
      ),
      'models/schema.yml': SCHEMA(
        REVENUE_COLUMNS(
          ['country', 'text'],
          ['revenue', 'numeric'],
          ['orders', 'bigint'],
          ['avg_order', 'numeric'],
        ),
        SIZES('numeric'),
      ),
    },
    check: (diff, names) => {
      expect(find(diff, 'column-added', 'avg_order')).toMatchObject({
        category: 'non-breaking',
        node: names.dataset('customer_revenue'),
      });
      // The SQL changed as the new column says: told, but reaching no one of its own.
      expect(find(diff, 'sql-changed')).toMatchObject({ category: 'non-breaking', consumers: [] });
      expect(diff.summary).toMatchObject({ breaking: 0, partial: 0 });
    },
  },
  {
    branch: 'drop-used-column',
    files: {
      'models/marts/customer_revenue.sql': REVENUE('count(o.order_id) as orders'),
      'models/schema.yml': SCHEMA(
        REVENUE_COLUMNS(['country', 'text'], ['orders', 'bigint']),
        SIZES('numeric'),
      ),
    },
    check: (diff, names) => {
      const removed = find(diff, 'column-removed', 'revenue');
      expect(removed).toMatchObject({ category: 'breaking', node: names.dataset('customer_revenue') });
      expect(consumersOf(removed)).toContain(DASHBOARD);
    },
  },
  {
    branch: 'drop-unused-column',
    files: {
      'models/marts/customer_revenue.sql': REVENUE('sum(o.amount) as revenue'),
      'models/schema.yml': SCHEMA(
        REVENUE_COLUMNS(['country', 'text'], ['revenue', 'numeric']),
        SIZES('numeric'),
      ),
    },
    check: (diff, names) => {
      expect(find(diff, 'column-removed', 'orders')).toMatchObject({
        category: 'non-breaking',
        node: names.dataset('customer_revenue'),
        consumers: [],
      });
      expect(diff.summary).toMatchObject({ breaking: 0, partial: 0 });
    },
  },
  {
    branch: 'rename-column',
    files: {
      'models/marts/customer_revenue.sql': REVENUE(
        'sum(o.amount) as total_revenue, count(o.order_id) as orders',
      ),
      'models/schema.yml': SCHEMA(
        REVENUE_COLUMNS(['country', 'text'], ['total_revenue', 'numeric'], ['orders', 'bigint']),
        SIZES('numeric'),
      ),
    },
    check: (diff) => {
      const renamed = find(diff, 'column-renamed', 'revenue');
      expect(renamed).toMatchObject({ category: 'breaking', from: 'revenue', to: 'total_revenue' });
      expect(consumersOf(renamed)).toContain(DASHBOARD);
      expect(diff.changes.some((change) => change.reason === 'column-added')).toBe(false);
    },
  },
  {
    branch: 'change-where',
    files: {
      'models/staging/stg_orders.sql': `select order_id, customer_id, amount
from {{ ref('raw_orders') }}
where status in ('completed', 'shipped')
`,
    },
    check: (diff, names) => {
      const rows = find(diff, 'rows-changed');
      expect(rows).toMatchObject({ category: 'breaking', node: names.job('stg_orders') });
      expect(consumersOf(rows)).toEqual(
        expect.arrayContaining([names.dataset('customer_revenue'), names.dataset('order_sizes'), DASHBOARD]),
      );
      // Only stg_orders' SQL changed: the models downstream have the same SQL.
      expect(diff.changes.filter((change) => change.reason === 'rows-changed')).toHaveLength(1);
    },
  },
  {
    branch: 'change-type',
    files: {
      'models/marts/order_sizes.sql': `select order_id, cast(amount as integer) as amount
from {{ ref('stg_orders') }}
`,
      'models/schema.yml': SCHEMA(
        REVENUE_COLUMNS(['country', 'text'], ['revenue', 'numeric'], ['orders', 'bigint']),
        SIZES('integer'),
      ),
    },
    check: (diff, names) => {
      const retyped = find(diff, 'column-retyped', 'amount');
      expect(retyped).toMatchObject({
        category: 'breaking',
        node: names.dataset('order_sizes'),
        from: 'numeric',
        to: 'integer',
      });
      expect(consumersOf(retyped)).toContain(DASHBOARD);
    },
  },
  {
    branch: 'add-model',
    files: {
      'models/marts/customer_orders.sql': `select customer_id, count(order_id) as orders
from {{ ref('stg_orders') }}
group by customer_id
`,
    },
    check: (diff, names) => {
      expect(find(diff, 'dataset-added')).toMatchObject({ category: 'non-breaking' });
      expect(diff.datasets.added).toEqual([
        names.dataset('customer_orders').replace('.analytics.', '.pr_add_model.'),
      ]);
      expect(diff.jobs.added).toHaveLength(1);
      expect(diff.summary.breaking).toBe(0);
    },
  },
  {
    branch: 'remove-model',
    files: {
      'models/marts/order_sizes.sql': null,
      'models/schema.yml': SCHEMA(
        REVENUE_COLUMNS(['country', 'text'], ['revenue', 'numeric'], ['orders', 'bigint']),
        '',
      ),
    },
    check: (diff, names) => {
      const removed = find(diff, 'dataset-removed');
      expect(removed).toMatchObject({ category: 'breaking', node: names.dataset('order_sizes') });
      expect(consumersOf(removed)).toContain(DASHBOARD);
      expect(diff.jobs.removed).toEqual([names.job('order_sizes')]);
    },
  },
];

const [backend] = backends();
describe.skipIf(tool === undefined)('previews of a real dbt project, one per pull request', () => {
  let server: TestServer & { url: string };
  let repo: string;
  let database: string;
  const git = (...args: string[]) =>
    run('git', ['-c', 'user.name=Headwater Test', '-c', 'user.email=test@example.com', ...args], {
      cwd: repo,
    });
  const admin = new URL(process.env.DATABASE_URL ?? 'postgres://localhost');
  /** Runs `dbt-ol build` on the checked-out branch into `schema`, its jobs in `namespace`. */
  const build = async (schema: string, namespace: string) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${tool!.bin}:${process.env.PATH ?? ''}`,
      DBT_SEND_ANONYMOUS_USAGE_STATS: 'false',
      OPENLINEAGE_URL: server.url,
      OPENLINEAGE_NAMESPACE: namespace,
      DBT_HOST: admin.hostname,
      DBT_PORT: admin.port || '5432',
      DBT_USER: decodeURIComponent(admin.username),
      DBT_PASSWORD: decodeURIComponent(admin.password),
      DBT_DATABASE: database,
      DBT_SCHEMA: schema,
    };
    delete env.OPENLINEAGE_CONFIG;
    delete env.OPENLINEAGE_DISABLED;
    const result = await run(
      path.join(tool!.bin, 'dbt-ol'),
      ['build', '--project-dir', repo, '--profiles-dir', repo],
      {
        cwd: repo,
        env,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    expect(result.stdout).toMatch(/Completed successfully|Done\. PASS=\d+ WARN=0 ERROR=0/);
  };
  const names: Names = {
    dataset: (model) => `dataset:${POSTGRES_NAMESPACE}:${database}.analytics.${model}`,
    job: (model) => `job:dbt-prod:${database}.analytics.headwater_preview.${model}.build.run`,
  };

  beforeAll(async () => {
    server = await startServer(backend!);
    database = `headwater_preview_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const client = new pg.Client({ connectionString: tool!.adminUrl });
    await client.connect();
    await client.query(`CREATE DATABASE ${database}`);
    await client.end();
    repo = await mkdtemp(path.join(os.tmpdir(), 'headwater-preview-repo-'));
    await cp(project, repo, { recursive: true });
    await writeFile(path.join(repo, '.gitignore'), 'target/\nlogs/\ndbt_packages/\n');
    await git('init', '-q', '-b', 'main');
    await git('add', '-A');
    await git('commit', '-q', '-m', 'the pipeline');
    await build('analytics', 'dbt-prod');
    // A consumer outside dbt: a dashboard job, sent by the TypeScript client, reading two marts.
    const dataset = (model: string) => ({
      namespace: POSTGRES_NAMESPACE,
      name: `${database}.analytics.${model}`,
    });
    const ol = createClient({
      sources: { env: {}, cwd: '/', homeDir: '/' },
      config: { transport: { type: 'http', url: server.url, timeout: 10 } },
    });
    const field = (model: string, name: string) => ({ ...dataset(model), field: name });
    await ol.emit(
      runEvent({
        eventType: 'COMPLETE',
        job: { namespace: 'dashboards', name: 'finance.revenue_dashboard' },
        inputs: [inputDataset(dataset('customer_revenue')), inputDataset(dataset('order_sizes'))],
        outputs: [
          outputDataset({
            namespace: 'bi://dashboards',
            name: 'finance/revenue',
            facets: {
              columnLineage: columnLineageDatasetFacet({
                fields: {
                  country: { inputFields: [field('customer_revenue', 'country')] },
                  revenue: { inputFields: [field('customer_revenue', 'revenue')] },
                  order_size: { inputFields: [field('order_sizes', 'amount')] },
                },
              }),
            },
          }),
        ],
      }),
    );
    await ol.close();
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (repo) await rm(repo, { recursive: true, force: true });
    if (database) {
      const client = new pg.Client({ connectionString: tool!.adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await client.end();
    }
  });

  it.each(SCENARIOS)(
    '$branch',
    async (scenario) => {
      await git('checkout', '-q', '-b', scenario.branch, 'main');
      for (const [file, content] of Object.entries(scenario.files)) {
        if (content === null) await git('rm', '-q', file);
        else await writeFile(path.join(repo, file), content);
      }
      await git('add', '-A');
      await git('commit', '-q', '-m', scenario.branch);
      const { stdout: sha } = await git('rev-parse', 'HEAD');
      const preview = `pr-${scenario.branch}`;
      const schema = `pr_${scenario.branch.replace(/-/g, '_')}`;
      const created = await runCommand(previewCommand, [
        'create',
        preview,
        '--base',
        'dbt-prod',
        '--job-namespace',
        `dbt-${preview}`,
        '--map',
        `${database}.${schema}.*=${database}.analytics.*`,
        '--sha',
        sha.trim(),
        '--url',
        server.url,
      ]);
      expect(created.code, created.stderr).toBe(0);
      await build(schema, `dbt-${preview}`);
      const { code, stdout, stderr } = await runCommand(previewCommand, [
        'diff',
        preview,
        '--json',
        '--url',
        server.url,
      ]);
      expect(code, stderr).toBe(0);
      const diff = JSON.parse(stdout) as Diff;
      scenario.check(diff, names);
      // Every preview dataset but the new ones has its production counterpart.
      expect(diff.mappingCoverage.unmapped).toEqual(diff.datasets.added);
      const gate = await runCommand(previewCommand, [
        'diff',
        preview,
        '--fail-on',
        'breaking',
        '--url',
        server.url,
      ]);
      expect(gate.code).toBe(diff.summary.breaking > 0 ? 1 : 0);
      expect((await runCommand(previewCommand, ['delete', preview, '--url', server.url])).code).toBe(0);
      await git('checkout', '-q', 'main');
    },
    120_000,
  );

  it("leaves production's graph as main built it", async () => {
    const response = await fetch(`${server.url}/api/v1/namespaces`);
    const { namespaces } = (await response.json()) as { namespaces: { name: string }[] };
    expect(namespaces.map((namespace) => namespace.name).filter((name) => name.startsWith('dbt-'))).toEqual([
      'dbt-prod',
    ]);
    const search = await fetch(`${server.url}/api/v1/search?q=pr_&limit=100`);
    expect(((await search.json()) as { totalCount: number }).totalCount).toBe(0);
  });
});
