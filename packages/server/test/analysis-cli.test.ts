import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCommand } from '../src/cli/demo.js';
import { demoScenario } from '../src/cli/demo-scenario.js';
import { diffCommand } from '../src/cli/diff.js';
import type { CommandIo } from '../src/cli/http.js';
import { impactCommand } from '../src/cli/impact.js';
import { lineageCommand } from '../src/cli/lineage.js';
import { rootCauseCommand } from '../src/cli/root-cause.js';
import { schemaDiffCommand } from '../src/cli/schema-diff.js';
import { formatTable } from '../src/cli/table.js';
import { runId, schemaScenario } from './analysis-scenarios.js';
import { runCli, runCommand } from './helpers/cli.js';
import { backends, startServer } from './helpers/backends.js';

const WAREHOUSE = 'postgres://warehouse.acme.internal:5432';
const mart = `dataset:${WAREHOUSE}:analytics.marts.revenue_daily`;

const run = runCommand;

describe('formatTable', () => {
  it('pads every column but the last to its widest cell', () => {
    expect(
      formatTable(
        ['A', 'LONG'],
        [
          ['wide cell', 'x'],
          ['b', 'two\nlines'],
        ],
      ),
    ).toBe('A          LONG\nwide cell  x\nb          two lines\n');
  });
});

describe.each(backends())('the analysis commands on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startServer>>;
  const http = async (pathAndQuery: string, query: Record<string, string>) =>
    (await fetch(`${ctx.url}${pathAndQuery}?${new URLSearchParams(query).toString()}`)).json();

  beforeAll(async () => {
    ctx = await startServer(backend);
    const sink: CommandIo = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} };
    expect(await demoCommand(['--url', ctx.url], sink)).toBe(0);
    const response = await fetch(`${ctx.url}/api/v1/lineage/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(schemaScenario()),
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('root-cause prints the causes of the mart as a table, and --json is the HTTP answer', async () => {
    const { code, stdout, stderr } = await run(rootCauseCommand, [mart, '--url', ctx.url]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(`Root cause of ${mart} at 2025-03-14T06:00:48.000Z`);
    // The failed load first; the freshness assertion follows from it.
    const rows = lines.filter((line) => /^\d+ /.test(line));
    expect(rows[0]).toMatch(
      /^3\s+failedRun\s+acme-airflow:daily_etl\.load_orders\s+-\s+daily_etl\.load_orders: run \S+ FAILED at 2025-03-14T02:01:42\.000Z: duplicate key value violates unique constraint "orders_pkey"$/,
    );
    expect(rows[1]).toMatch(
      /^2\s+failedAssertion\s+postgres:\/\/warehouse\.acme\.internal:5432:analytics\.staging\.orders\s+acme-airflow:daily_etl\.load_orders\s+1 failing assertion on analytics\.staging\.orders: freshness\(_loaded_at\) expected <= 24h, got 25h 55m$/,
    );
    expect(rows).toHaveLength(2);
    const json = await run(rootCauseCommand, [mart, '--url', ctx.url, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await http('/api/v1/analysis/root-cause', { nodeId: mart }));
  });

  it('impact --fail-on breaking exits 1 on a breaking change and 0 otherwise', async () => {
    const breaking = await run(impactCommand, [
      'dataset:schema:s_src',
      '--fail-on',
      'breaking',
      '--url',
      ctx.url,
    ]);
    expect(breaking.code).toBe(1);
    expect(breaking.stderr).toBe(
      'headwater impact: a breaking change reaches downstream nodes (--fail-on breaking).\n',
    );
    expect(breaking.stdout).toContain('schema:s_src: +region -amount ~id (breaking)');
    expect(breaking.stdout).toMatch(/^2\s+breaking\s+dataset:schema:s_out\s+team:models\s+id, total$/m);
    expect(breaking.stdout).toContain(
      '4 downstream: 4 breaking, 0 direct, 0 indirect. Owners: team:models, team:viz.',
    );
    const fine = await run(impactCommand, [
      'dataset:schema:s_out',
      '--fail-on',
      'breaking',
      '--url',
      ctx.url,
    ]);
    expect({ code: fine.code, stderr: fine.stderr }).toEqual({ code: 0, stderr: '' });
    expect(fine.stdout).toMatch(/^1\s+direct\s+job:schema:viz\s+team:viz\s+n, total$/m);
    const any = await run(impactCommand, ['dataset:schema:s_out', '--fail-on', 'any', '--url', ctx.url]);
    expect(any.code).toBe(1);
    const demoChange = await run(impactCommand, [
      `dataset:${WAREHOUSE}:analytics.staging.orders`,
      '--fail-on',
      'breaking',
      '--url',
      ctx.url,
    ]);
    expect(demoChange.code).toBe(0);
    const json = await run(impactCommand, ['dataset:schema:s_src', '--json', '--url', ctx.url]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(
      await http('/api/v1/analysis/impact', { nodeId: 'dataset:schema:s_src' }),
    );
  });

  it('impact --fail-on breaking from the built CLI sets the exit code', async () => {
    const breaking = await runCli([
      'impact',
      'dataset:schema:s_src',
      '--fail-on',
      'breaking',
      '--url',
      ctx.url,
    ]);
    expect(breaking.code).toBe(1);
    const fine = await runCli(['impact', 'dataset:schema:s_out', '--fail-on', 'breaking', '--url', ctx.url]);
    expect(fine.code).toBe(0);
  });

  it('schema-diff prints the changes and who a breaking one reaches', async () => {
    const { code, stdout } = await run(schemaDiffCommand, ['dataset:schema:s_src', '--url', ctx.url]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^added\s+region\s+string$/m);
    expect(stdout).toMatch(/^removed\s+amount\s+int$/m);
    expect(stdout).toMatch(/^type changed\s+id\s+int -> bigint$/m);
    expect(stdout).toContain('Breaking: yes');
    expect(stdout).toMatch(/^2\s+schema:s_dash:total\s+-$/m);
    expect(stdout).toContain('Owners to tell: team:models, team:viz');
    const json = await run(schemaDiffCommand, ['dataset:schema:s_src', '--json', '--url', ctx.url]);
    expect(JSON.parse(json.stdout)).toEqual(
      await http('/api/v1/analysis/schema-diff', { dataset: 'dataset:schema:s_src' }),
    );
  });

  it('diff compares two runs', async () => {
    const { code, stdout } = await run(diffCommand, [runId(2, 2), runId(2, 5), '--url', ctx.url]);
    expect(code).toBe(0);
    expect(stdout).toContain(`B ${runId(2, 5)} schema:model FAILED`);
    expect(stdout).toContain('Duration: 60000ms -> 30000ms (-30000ms)');
    expect(stdout).toMatch(/^input\s+schema:s_src\s+\+region -amount ~id \(breaking\)\s+-$/m);
    expect(stdout).toMatch(/^output\s+schema:s_out\s+same version\s+100 -> \?$/m);
    const dbtRuns = demoScenario()
      .events.filter((e) => 'run' in e && e.job.name === 'dbt.revenue_daily' && e.eventType === 'START')
      .map((e) => ('run' in e ? e.run.runId : ''));
    const flipped = await run(diffCommand, [dbtRuns[3]!, dbtRuns[4]!, '--url', ctx.url]);
    expect(flipped.stdout).toMatch(
      /^postgres:\/\/warehouse\.acme\.internal:5432:analytics\.staging\.orders\s+freshness\s+_loaded_at\s+pass\s+FAIL$/m,
    );
    const json = await run(diffCommand, [runId(2, 2), runId(2, 5), '--json', '--url', ctx.url]);
    expect(JSON.parse(json.stdout)).toEqual(
      await http('/api/v1/analysis/run-diff', { from: runId(2, 2), to: runId(2, 5) }),
    );
  });

  it('diff NODE --from --to compares the lineage of a node at two times', async () => {
    const args = ['dataset:schema:s_out', '--from', '2024-05-01T12:00:00Z', '--to', '2024-05-02T12:00:00Z'];
    const { code, stdout } = await run(diffCommand, [...args, '--url', ctx.url]);
    expect(code).toBe(0);
    expect(stdout).toContain('A: 2024-05-01T12:00:00.000Z\nB: 2024-05-02T12:00:00.000Z\n');
    expect(stdout).toMatch(/^schema:s_src\s+\+region -amount ~id \(breaking\)\s+-$/m);
    expect(stdout).toMatch(/^schema:model\s+COMPLETED \S+\s+FAILED \S+/m);
    const json = await run(diffCommand, [...args, '--json', '--url', ctx.url]);
    expect(JSON.parse(json.stdout)).toEqual(
      await http('/api/v1/analysis/graph-diff', {
        nodeId: 'dataset:schema:s_out',
        from: '2024-05-01T12:00:00Z',
        to: '2024-05-02T12:00:00Z',
        direction: 'both',
        depth: '20',
      }),
    );
    const usage = await run(diffCommand, [
      runId(2, 2),
      runId(2, 5),
      '--from',
      '2024-05-01',
      '--url',
      ctx.url,
    ]);
    expect(usage.code).toBe(2);
    expect((await run(diffCommand, ['dataset:schema:s_out', '--url', ctx.url])).code).toBe(2);
  });

  it('lineage --as-of prints the lineage as it was then', async () => {
    const firstDay = '2025-03-10T03:00:00Z';
    const { code, stdout } = await run(lineageCommand, [mart, '--as-of', firstDay, '--url', ctx.url]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const later = await run(lineageCommand, [
      mart,
      '--as-of',
      '2025-03-10T05:00:00Z',
      '--direction',
      'upstream',
      '--json',
      '--url',
      ctx.url,
    ]);
    expect(JSON.parse(later.stdout)).toEqual(
      await http('/api/v1/lineage', {
        nodeId: mart,
        direction: 'upstream',
        depth: '20',
        asOf: '2025-03-10T05:00:00Z',
      }),
    );
    expect(JSON.stringify(JSON.parse(later.stdout))).not.toEqual(
      JSON.stringify(await http('/api/v1/lineage', { nodeId: mart, direction: 'upstream', depth: '20' })),
    );
  });

  it('lineage prints nodes by distance, and columns with their transformations', async () => {
    const { code, stdout } = await run(lineageCommand, [mart, '--direction', 'upstream', '--url', ctx.url]);
    expect(code).toBe(0);
    expect(stdout.split('\n').slice(2, -1)).toEqual([
      'DIRECTION  DIST  TYPE     NODE',
      'upstream   1     JOB      acme-dbt:dbt.revenue_daily',
      `upstream   2     DATASET  ${WAREHOUSE}:analytics.staging.customers`,
      `upstream   2     DATASET  ${WAREHOUSE}:analytics.staging.orders`,
      'upstream   3     JOB      acme-airflow:daily_etl.load_customers',
      'upstream   3     JOB      acme-airflow:daily_etl.load_orders',
      'upstream   4     DATASET  s3://acme-raw:customers',
      'upstream   4     DATASET  s3://acme-raw:orders',
    ]);
    const json = await run(lineageCommand, [mart, '--direction', 'upstream', '--json', '--url', ctx.url]);
    expect(JSON.parse(json.stdout)).toEqual(
      await http('/api/v1/lineage', { nodeId: mart, direction: 'upstream', depth: '20' }),
    );
    const column = 'datasetField:looker://acme:dashboards.revenue:gross_revenue';
    const columns = await run(lineageCommand, [column, '--url', ctx.url]);
    expect(columns.code).toBe(0);
    expect(columns.stdout).toMatch(
      /^2\s+postgres:\/\/warehouse\.acme\.internal:5432:analytics\.staging\.orders:amount\s+DIRECT\/IDENTITY > DIRECT\/AGGREGATION$/m,
    );
    const columnJson = await run(lineageCommand, [column, '--json', '--url', ctx.url]);
    expect(JSON.parse(columnJson.stdout)).toEqual(
      await http('/api/v1/analysis/column-paths', { nodeId: column, direction: 'upstream', depth: '20' }),
    );
  });

  it('exits 2 on usage errors and 1 with the server message when the server refuses', async () => {
    expect((await run(impactCommand, ['--url', ctx.url])).code).toBe(2);
    const badFlag = await run(impactCommand, [mart, '--fail-on', 'sometimes', '--url', ctx.url]);
    expect({ code: badFlag.code, stderr: badFlag.stderr }).toEqual({
      code: 2,
      stderr: 'headwater impact: --fail-on must be breaking or any; got "sometimes".\n',
    });
    const missing = await run(rootCauseCommand, ['dataset:nowhere:nothing', '--url', ctx.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^headwater root-cause: HTTP 404: No dataset named "nothing"/);
  });
});
