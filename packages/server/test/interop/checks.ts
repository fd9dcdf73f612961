/**
 * What must land when the real producers run: shared by the live suite (the producers themselves) and the replay
 * of the events they recorded (fixtures), so both assert the same things.
 */
import { describe, expect, it } from 'vitest';
import type { Send } from '../helpers/api.js';
import { NAMESPACES, POSTGRES_NAMESPACE, type ScenarioNames } from './scenario.js';

export interface CheckContext {
  /** Sends requests to the server under test. */
  readonly request: Send;
  readonly names: ScenarioNames;
}

interface Run {
  id: string;
  state: string;
  contradictoryStates?: string[];
  error?: {
    message: string;
    stackTrace: string | null;
    programmingLanguage: string | null;
    facet: string;
  } | null;
  inputDatasetVersions: { datasetVersionId: { name: string }; facets: Record<string, unknown> }[];
  facets: Record<string, unknown>;
}
interface Job {
  latestRun: Run | null;
}
interface Assertion {
  assertion: string;
  column?: string | null;
  success?: boolean;
  name?: string;
  actual?: string | null;
}
interface Cause {
  kind: string;
  nodeId: string;
  errorMessage: string | null;
  run: { state: string } | null;
  assertions: Assertion[];
}
interface GraphNode {
  id: string;
  inEdges: { origin: string; destination: string }[];
}

const SPARK_APP = 'headwater_interop';
const DBT_PROJECT = 'headwater_interop';

/** Registers the checks; `context` is read when they run (after the suite's beforeAll). */
export function producerChecks(context: () => CheckContext): void {
  const get = async <T>(path: string): Promise<T> => {
    const response = await context().request(path);
    const text = await response.text();
    expect({ path, status: response.status }, text.slice(0, 500)).toEqual({ path, status: 200 });
    return JSON.parse(text) as T;
  };
  const q = encodeURIComponent;
  const job = (namespace: string, name: string) =>
    get<Job>(`/api/v1/namespaces/${q(namespace)}/jobs/${q(name)}`);
  const stateOf = async (namespace: string, name: string) => (await job(namespace, name)).latestRun?.state;
  const file = (relative: string) => `${context().names.work}/${relative}`;
  const table = (schemaAndTable: string) => `${context().names.database}.${schemaAndTable}`;
  const fileNode = (relative: string) => `dataset:file:${file(relative)}`;
  const tableNode = (schemaAndTable: string) => `dataset:${POSTGRES_NAMESPACE}:${table(schemaAndTable)}`;
  const rootCause = async (nodeId: string) =>
    (await get<{ causes: Cause[] }>(`/api/v1/analysis/root-cause?nodeId=${q(nodeId)}`)).causes;
  /** Every column upstream of one column, as `namespace:dataset:field` (lineage orientation). */
  const upstreamColumns = async (datasetNode: string, field: string) => {
    const id = `datasetField:${datasetNode.slice('dataset:'.length)}:${field}`;
    const { graph } = await get<{ graph: GraphNode[] }>(
      `/api/v1/column-lineage?nodeId=${q(id)}&depth=20&edges=lineage`,
    );
    return graph.map((node) => node.id).filter((node) => node !== id);
  };
  const upstreamNodes = async (nodeId: string) => {
    const { graph } = await get<{ graph: GraphNode[] }>(
      `/api/v1/lineage?nodeId=${q(nodeId)}&direction=upstream&depth=20`,
    );
    return graph.map((node) => node.id);
  };
  const field = (datasetNode: string, name: string) => `datasetField:${datasetNode.slice(8)}:${name}`;
  const assertionsOf = (run: Run | null | undefined) =>
    (run?.inputDatasetVersions ?? []).flatMap(
      (input) =>
        (input.facets.dataQualityAssertions as { assertions?: Assertion[] } | undefined)?.assertions ?? [],
    );

  it('every dataset and job the producers made answers 200 on its page, its runs and its lineage', async () => {
    const { namespaces } = await get<{ namespaces: { name: string }[] }>('/api/v1/namespaces?limit=1000');
    const paths: string[] = [];
    for (const { name: namespace } of namespaces) {
      const base = `/api/v1/namespaces/${q(namespace)}`;
      const [{ datasets }, { jobs }] = await Promise.all([
        get<{ datasets: { name: string }[] }>(`${base}/datasets?limit=1000`),
        get<{ jobs: { name: string }[] }>(`${base}/jobs?limit=1000`),
      ]);
      for (const { name } of datasets) {
        const node = q(`dataset:${namespace}:${name}`);
        paths.push(`${base}/datasets/${q(name)}`, `/api/v1/lineage?nodeId=${node}&depth=5`);
        paths.push(`/api/v1/column-lineage?nodeId=${node}&depth=5`);
      }
      for (const { name } of jobs) {
        paths.push(`${base}/jobs/${q(name)}`, `${base}/jobs/${q(name)}/runs?limit=1000`);
      }
    }
    const failures: { path: string; status: number }[] = [];
    for (const path of paths) {
      const { status } = await context().request(path);
      if (status !== 200) failures.push({ path, status });
    }
    expect(failures).toEqual([]);
    expect(paths.length).toBeGreaterThan(100);
  });

  describe('the Spark listener (pyspark, local mode)', () => {
    const sparkJob = (suffix: string) => `${SPARK_APP}.${suffix}`;
    const failing = sparkJob('execute_insert_into_hadoop_fs_relation_command.lake_ratios');

    it('sent COMPLETE after FAIL for the failed write; the run API and root cause show FAILED with the spark.exception error', async () => {
      const { events } = await get<{ events: { eventType: string; job: { name: string } }[] }>(
        `/api/v1/events/lineage?sortDirection=asc&limit=10000`,
      );
      const sequence = events.filter((e) => e.job.name === failing).map((e) => e.eventType);
      expect(sequence.slice(-2)).toEqual(['FAIL', 'COMPLETE']);
      const run = (await job(NAMESPACES.spark, failing)).latestRun;
      expect(run?.state).toBe('FAILED');
      expect(run?.error).toMatchObject({ facet: 'spark.exception', programmingLanguage: 'Java' });
      expect(run?.error?.message).toContain('Job aborted due to stage failure');
      expect(run?.error?.stackTrace).toContain('DIVIDE_BY_ZERO');
      const causes = await rootCause(fileNode('lake/ratios'));
      const failed = causes.find((c) => c.kind === 'failedRun');
      expect(failed?.nodeId).toBe(`job:${NAMESPACES.spark}:${failing}`);
      expect(failed?.run?.state).toBe('FAILED');
      expect(failed?.errorMessage).toContain('DIVIDE_BY_ZERO');
    });

    it('the join + aggregate and the CTAS completed, and their lineage is connected', async () => {
      expect(await stateOf(NAMESPACES.spark, sparkJob('adaptive_spark_plan.lake_revenue_by_country'))).toBe(
        'COMPLETED',
      );
      expect(
        await stateOf(
          NAMESPACES.spark,
          sparkJob('execute_create_data_source_table_as_select_command.default_big_countries'),
        ),
      ).toBe('COMPLETED');
      const upstream = await upstreamNodes(fileNode('warehouse/big_countries'));
      expect(upstream).toEqual(
        expect.arrayContaining([
          fileNode('lake/revenue_by_country'),
          fileNode('lake/orders'),
          fileNode('lake/customers'),
          `job:${NAMESPACES.spark}:${sparkJob('adaptive_spark_plan.lake_revenue_by_country')}`,
        ]),
      );
    });

    it('column lineage runs from the parquet inputs through the aggregate into the CTAS table', async () => {
      expect(await upstreamColumns(fileNode('warehouse/big_countries'), 'revenue')).toEqual(
        expect.arrayContaining([
          field(fileNode('lake/revenue_by_country'), 'revenue'),
          field(fileNode('lake/orders'), 'amount'),
        ]),
      );
      // The join keys influence the whole output (the facet's dataset-level inputs): inputs of every column.
      expect(await upstreamColumns(fileNode('lake/revenue_by_country'), 'country')).toEqual([
        field(fileNode('lake/customers'), 'country'),
        field(fileNode('lake/customers'), 'customer_id'),
        field(fileNode('lake/orders'), 'customer_id'),
      ]);
    });

    it('dataset-level column lineage: dropping the join key breaks the aggregate job', async () => {
      const impact = await get<{ nodes: { nodeId: string; level: string }[] }>(
        `/api/v1/analysis/impact?nodeId=${q(field(fileNode('lake/customers'), 'customer_id'))}&change=removed`,
      );
      const aggregate = `job:${NAMESPACES.spark}:${sparkJob('adaptive_spark_plan.lake_revenue_by_country')}`;
      expect(impact.nodes.find((n) => n.nodeId === aggregate)?.level).toBe('breaking');
    });

    it('the RDD jobs that only sent START are RUNNING and flagged stale after --stale-run-after', async () => {
      const runs = await get<{ runs: { state: string; stale?: boolean }[] }>(
        `/api/v1/namespaces/${q(NAMESPACES.spark)}/jobs/${q(sparkJob('map_partitions_parallel_collection'))}/runs`,
      );
      expect(runs.runs.length).toBeGreaterThan(0);
      expect(runs.runs.map((run) => [run.state, run.stale])).toEqual(runs.runs.map(() => ['RUNNING', true]));
      // A run that ended is never stale, however old.
      const ended = await job(NAMESPACES.spark, sparkJob('adaptive_spark_plan.lake_revenue_by_country'));
      expect(ended.latestRun).not.toHaveProperty('stale');
    });
    it('the COMPLETE after FAIL is recorded: the run stays FAILED and names both states', async () => {
      const failed = await job(NAMESPACES.spark, failing);
      expect(failed.latestRun).toMatchObject({
        state: 'FAILED',
        contradictoryStates: ['FAILED', 'COMPLETED'],
      });
    });
  });

  describe('the openlineage-python client (http transport)', () => {
    it('delivers plainly and gzip-compressed: both loads completed, with the same lineage', async () => {
      for (const namespace of [NAMESPACES.python, NAMESPACES.pythonGzip]) {
        expect(await stateOf(namespace, 'load_customers')).toBe('COMPLETED');
      }
      const upstream = await upstreamNodes(tableNode('raw.customers'));
      expect(upstream).toEqual(
        expect.arrayContaining([
          `job:${NAMESPACES.python}:load_customers`,
          `job:${NAMESPACES.pythonGzip}:load_customers`,
          fileNode('lake/customers'),
          `job:${NAMESPACES.spark}:${SPARK_APP}.execute_insert_into_hadoop_fs_relation_command.lake_customers`,
        ]),
      );
    });

    it('a failed run shows FAILED with its errorMessage, in the run and in root cause', async () => {
      const failed = await job(NAMESPACES.python, 'export_customers');
      expect(failed.latestRun?.state).toBe('FAILED');
      expect(failed.latestRun?.error).toMatchObject({
        facet: 'errorMessage',
        message: 'export target refused the connection',
        programmingLanguage: 'python',
      });
      expect(failed.latestRun?.facets).toHaveProperty(
        'errorMessage.message',
        'export target refused the connection',
      );
      const [cause] = await rootCause(`job:${NAMESPACES.python}:export_customers`);
      expect(cause).toMatchObject({
        kind: 'failedRun',
        errorMessage: 'export target refused the connection',
      });
    });

    it('the schema, the column lineage and the input assertion land', async () => {
      const dataset = await get<{
        fields: { name: string }[];
        columnLineage: {
          name: string;
          inputFields: { namespace: string; dataset: string; field: string }[];
        }[];
      }>(`/api/v1/namespaces/${q(POSTGRES_NAMESPACE)}/datasets/${q(table('raw.customers'))}`);
      expect(dataset.fields.map((f) => f.name)).toEqual(['customer_id', 'country']);
      expect(dataset.columnLineage.find((c) => c.name === 'country')?.inputFields).toEqual([
        { namespace: 'file', dataset: file('lake/customers'), field: 'country' },
      ]);
      const load = await job(NAMESPACES.python, 'load_customers');
      expect(assertionsOf(load.latestRun)).toEqual([
        expect.objectContaining({
          assertion: 'not_null',
          column: 'customer_id',
          success: true,
          name: 'customer_id_present',
        }),
      ]);
    });
    it('the run serves the dataQualityMetrics and outputStatistics it reported for raw.customers', async () => {
      const load = await job(NAMESPACES.python, 'load_customers');
      const quality = await get<{
        datasets: {
          dataset: { name: string };
          output: { rowCount: number | null } | null;
          metrics: {
            rowCount: number | null;
            columns: { column: string; distinctCount: number | null }[];
          } | null;
        }[];
      }>(`/api/v1/jobs/runs/${load.latestRun!.id}/quality`);
      const customers = quality.datasets.find((d) => d.dataset.name === table('raw.customers'));
      expect(customers?.output).toMatchObject({ rowCount: 3 });
      expect(customers?.metrics?.rowCount).toBe(3);
      expect(customers?.metrics?.columns).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ column: 'country', distinctCount: 2 }),
          expect.objectContaining({ column: 'customer_id', distinctCount: 3 }),
        ]),
      );
    });
  });

  describe('dbt-ol with dbt-postgres', () => {
    const artifactJob = (node: string) => `${table('analytics')}.${DBT_PROJECT}.${node}`;

    it('artifact mode: models completed, the failing test run shows FAILED, the passing ones COMPLETED', async () => {
      for (const model of ['stg_orders', 'stg_customers', 'customer_revenue'])
        expect(await stateOf(NAMESPACES.dbtArtifacts, artifactJob(`${model}.build.run`))).toBe('COMPLETED');
      expect(await stateOf(NAMESPACES.dbtArtifacts, artifactJob('stg_orders.build.test'))).toBe('COMPLETED');
      expect(await stateOf(NAMESPACES.dbtArtifacts, artifactJob('customer_revenue.build.test'))).toBe(
        'FAILED',
      );
      expect(await stateOf(NAMESPACES.dbtArtifacts, `dbt-run-${DBT_PROJECT}`)).toBe('FAILED');
    });

    it('artifact mode: the test run carries every assertion, passing and failing, as sent', async () => {
      const run = (await job(NAMESPACES.dbtArtifacts, artifactJob('customer_revenue.build.test'))).latestRun;
      expect(
        assertionsOf(run).map(({ assertion, column, success, name }) => ({
          assertion,
          column,
          success,
          name,
        })),
      ).toEqual([
        {
          assertion: 'accepted_values',
          column: 'country',
          success: false,
          name: 'accepted_values_customer_revenue_country__NL',
        },
        {
          assertion: 'accepted_values',
          column: 'country',
          success: true,
          name: 'accepted_values_customer_revenue_country__NL__DE',
        },
        {
          assertion: 'not_null',
          column: 'revenue',
          success: true,
          name: 'not_null_customer_revenue_revenue',
        },
      ]);
    });

    it('structured-logs mode: one run per test, the failing one FAILED with its error', async () => {
      const { jobs } = await get<{ jobs: { name: string; latestRun: Run | null }[] }>(
        `/api/v1/namespaces/${NAMESPACES.dbtLogs}/jobs?limit=1000`,
      );
      const stateOfNode = (node: string) =>
        jobs.find((j) => j.name.startsWith(`${node}.`) || j.name === node);
      expect(stateOfNode(`seed.${DBT_PROJECT}.raw_orders`)?.latestRun?.state).toBe('COMPLETED');
      expect(stateOfNode(`model.${DBT_PROJECT}.customer_revenue`)?.latestRun?.state).toBe('COMPLETED');
      const failing = stateOfNode(`test.${DBT_PROJECT}.accepted_values_customer_revenue_country__NL`);
      expect(failing?.latestRun?.state).toBe('FAILED');
      expect(failing?.latestRun?.facets).toHaveProperty('errorMessage');
      expect(
        stateOfNode(`test.${DBT_PROJECT}.accepted_values_customer_revenue_country__NL__DE`)?.latestRun?.state,
      ).toBe('COMPLETED');
    });

    it('lineage runs seed -> staging -> mart, and back across producers to the Spark write', async () => {
      const upstream = await upstreamNodes(tableNode('analytics.customer_revenue'));
      expect(upstream).toEqual(
        expect.arrayContaining([
          tableNode('analytics.stg_orders'),
          tableNode('analytics.stg_customers'),
          tableNode('analytics.raw_orders'),
          `job:${NAMESPACES.dbtLogs}:seed.${DBT_PROJECT}.raw_orders`,
          tableNode('raw.customers'),
          `job:${NAMESPACES.python}:load_customers`,
          fileNode('lake/customers'),
          `job:${NAMESPACES.spark}:${SPARK_APP}.execute_insert_into_hadoop_fs_relation_command.lake_customers`,
        ]),
      );
    });

    it('column lineage runs from the mart back to the seed and, across producers, to the Spark parquet', async () => {
      expect(await upstreamColumns(tableNode('analytics.customer_revenue'), 'revenue')).toEqual(
        expect.arrayContaining([
          field(tableNode('analytics.stg_orders'), 'amount'),
          field(tableNode('analytics.raw_orders'), 'amount'),
        ]),
      );
      expect(await upstreamColumns(tableNode('analytics.customer_revenue'), 'country')).toEqual(
        expect.arrayContaining([
          field(tableNode('analytics.stg_customers'), 'country'),
          field(tableNode('raw.customers'), 'country'),
          field(fileNode('lake/customers'), 'country'),
        ]),
      );
    });

    it('root cause of the mart reports the failing accepted_values test, though passing tests ran later', async () => {
      const causes = await rootCause(tableNode('analytics.customer_revenue'));
      const failed = causes.find((c) => c.kind === 'failedAssertion');
      expect(failed?.assertions).toEqual([
        expect.objectContaining({ assertion: 'accepted_values', column: 'country', actual: '1' }),
      ]);
    });

    it('the mart shows the latest result of each distinct assertion, by name', async () => {
      const quality = await get<{ assertions: { name: string | null; latest: { success: boolean } }[] }>(
        `/api/v1/namespaces/${q(POSTGRES_NAMESPACE)}/datasets/${q(table('analytics.customer_revenue'))}/quality`,
      );
      expect(Object.fromEntries(quality.assertions.map((a) => [a.name, a.latest.success]))).toEqual({
        accepted_values_customer_revenue_country__NL: false,
        accepted_values_customer_revenue_country__NL__DE: true,
        not_null_customer_revenue_revenue: true,
      });
    });

    it('root cause calls nothing stale that its writing job wrote just now', async () => {
      for (const node of [tableNode('analytics.customer_revenue'), tableNode('raw.customers')]) {
        const causes = await rootCause(node);
        expect(causes.filter((c) => c.kind === 'stale')).toEqual([]);
      }
    });
  });
}
