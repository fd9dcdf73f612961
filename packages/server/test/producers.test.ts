/**
 * Real producers as they really behave: the event sequences the Spark listener, dbt-ol and Airflow send, and
 * what the API and root cause must make of them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contradictoryStates } from '../src/model/run-state.js';
import { migrate } from '../src/store/migrate.js';
import { backends, startApp } from './helpers/backends.js';
import { MINUTE, PRODUCER, T0, runEvent } from './read-scenario.js';

const facet = (name: string, body: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json`,
  ...body,
});

describe.each(backends())('producer behaviour on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const get = async <T>(path: string): Promise<T> => {
    const response = await ctx.request(`${path}`);
    expect({ path, status: response.status }).toEqual({ path, status: 200 });
    return (await response.json()) as T;
  };
  const post = async (event: unknown) => {
    const response = await ctx.request('/api/v1/lineage', {
      method: 'POST',
      body: JSON.stringify(event),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(201);
  };
  interface Cause {
    kind: string;
    nodeId: string;
    errorMessage: string | null;
    run: { id: string; state: string; contradictoryStates: string[] } | null;
  }

  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  describe('a Spark execution that failed: FAIL, then COMPLETE milliseconds later', () => {
    const runId = randomUUID();
    const output = { namespace: 'file', name: '/warehouse/out.parquet', facets: {} };
    beforeAll(async () => {
      const base = { runId, job: 'spark_app.execute_insert', namespace: 'spark' };
      await post(runEvent({ ...base, eventType: 'START', time: T0, outputs: [output] }));
      await post(
        runEvent({
          ...base,
          eventType: 'FAIL',
          time: T0 + MINUTE,
          outputs: [output],
          runFacets: {
            'spark.exception': facet('SparkExceptionRunFacet', {
              message: 'Job aborted due to stage failure: division by zero',
              stackTrace: 'org.apache.spark.SparkException: Job aborted\n\tat ...',
            }),
          },
        }),
      );
      await post(runEvent({ ...base, eventType: 'COMPLETE', time: T0 + MINUTE + 5, outputs: [output] }));
    });

    it('the run stays FAILED, ended at the failure, and says its events contradicted each other', async () => {
      const run = await get<{ state: string; endedAt: string; contradictoryStates?: string[] }>(
        `/api/v1/jobs/runs/${runId}`,
      );
      expect({ state: run.state, endedAt: run.endedAt, contradictory: run.contradictoryStates }).toEqual({
        state: 'FAILED',
        endedAt: new Date(T0 + MINUTE).toISOString(),
        contradictory: ['FAILED', 'COMPLETED'],
      });
      const job = await get<{ latestRun: { state: string } }>(
        '/api/v1/namespaces/spark/jobs/spark_app.execute_insert',
      );
      expect(job.latestRun.state).toBe('FAILED');
    });

    it('a store made before terminal states were kept gets them from its stored events (migration 011)', async () => {
      const { db } = ctx.server;
      await db.query('ALTER TABLE runs DROP COLUMN terminals_seen');
      await db.query("DELETE FROM schema_migrations WHERE name = '011_terminals_seen.sql'");
      expect(await migrate(db)).toEqual(['011_terminals_seen.sql']);
      const [row] = await db.query<{ bits: number }>(
        'SELECT terminals_seen AS bits FROM runs WHERE uuid = $1::uuid',
        [runId],
      );
      expect(contradictoryStates(Number(row!.bits))).toEqual(['FAILED', 'COMPLETED']);
    });

    it('root cause of the output reports the failed run', async () => {
      const answer = await get<{ causes: Cause[] }>(
        `/api/v1/analysis/root-cause?nodeId=${encodeURIComponent('dataset:file:/warehouse/out.parquet')}`,
      );
      expect(answer.causes.filter((c) => c.kind === 'failedRun').map((c) => c.run)).toEqual([
        expect.objectContaining({ id: runId, state: 'FAILED', contradictoryStates: ['FAILED', 'COMPLETED'] }),
      ]);
      // The error is in Spark's own facet, spark.exception, not errorMessage.
      const [failed] = answer.causes.filter((c) => c.kind === 'failedRun');
      expect(failed!.errorMessage).toBe('Job aborted due to stage failure: division by zero');
    });
  });

  it('root cause takes a job: a task that failed before writing its output', async () => {
    const node = encodeURIComponent('job:spark:spark_app.execute_insert');
    const answer = await get<{ target: string; causes: Cause[] }>(
      `/api/v1/analysis/root-cause?nodeId=${node}`,
    );
    expect(answer.target).toBe('job:spark:spark_app.execute_insert');
    expect(answer.causes.map((c) => [c.kind, c.nodeId, c.errorMessage])).toEqual([
      [
        'failedRun',
        'job:spark:spark_app.execute_insert',
        'Job aborted due to stage failure: division by zero',
      ],
    ]);
  });

  describe('a pipeline node that never started: ABORT only, after an earlier completed run', () => {
    const completed = randomUUID();
    const aborted = randomUUID();
    const node = (eventType: string, time: number, runId: string, parent: string) =>
      runEvent({
        eventType,
        time,
        runId,
        job: 'shop.summarise',
        namespace: 'kedro',
        runFacets: {
          parent: facet('ParentRunFacet', {
            run: { runId: parent },
            job: { namespace: 'kedro', name: 'shop' },
          }),
        },
        outputs: [{ namespace: 'kedro', name: 'summary', facets: {} }],
      });
    beforeAll(async () => {
      await post(node('START', T0, completed, randomUUID()));
      await post(node('COMPLETE', T0 + MINUTE, completed, randomUUID()));
      // The next day's run failed upstream of this node, which was aborted without starting.
      await post(node('ABORT', T0 + 24 * 60 * MINUTE, aborted, randomUUID()));
    });

    it('is the newest run: first in the list, latestRun, and the job counts as aborted', async () => {
      const runs = await get<{ runs: { id: string; state: string }[] }>(
        '/api/v1/namespaces/kedro/jobs/shop.summarise/runs',
      );
      expect(runs.runs.map((run) => [run.id, run.state])).toEqual([
        [aborted, 'ABORTED'],
        [completed, 'COMPLETED'],
      ]);
      const job = await get<{ latestRun: { id: string }; latestRuns: { id: string }[] }>(
        '/api/v1/namespaces/kedro/jobs/shop.summarise',
      );
      expect([job.latestRun.id, ...job.latestRuns.map((run) => run.id)]).toEqual([
        aborted,
        aborted,
        completed,
      ]);
      const listed = await get<{ jobs: { name: string }[] }>(
        '/api/v1/namespaces/kedro/jobs?lastRunStates=ABORTED',
      );
      expect(listed.jobs.map((j) => j.name)).toEqual(['shop.summarise']);
      const lineage = await get<{ graph: { id: string; data: { latestRun: { id: string } | null } }[] }>(
        `/api/v1/lineage?nodeId=${encodeURIComponent('job:kedro:shop.summarise')}&depth=0`,
      );
      expect(lineage.graph.find((n) => n.id === 'job:kedro:shop.summarise')?.data.latestRun?.id).toBe(
        aborted,
      );
    });

    it('is the newest run as of a time after the abort; the completed one is, before it', async () => {
      const asOf = (ms: number) =>
        get<{ latestRun: { id: string } | null }>(
          `/api/v1/namespaces/kedro/jobs/shop.summarise?asOf=${new Date(ms).toISOString()}`,
        );
      expect((await asOf(T0 + 25 * 60 * MINUTE)).latestRun?.id).toBe(aborted);
      expect((await asOf(T0 + 2 * MINUTE)).latestRun?.id).toBe(completed);
    });
  });

  describe("a run known only from a child's parent facet", () => {
    const completed = randomUUID();
    const placeholder = randomUUID();
    beforeAll(async () => {
      // The DAG's real run reported only COMPLETE (no START); later a task names another run of the DAG as its
      // parent, which never sends an event of its own.
      await post(
        runEvent({ eventType: 'COMPLETE', time: T0, runId: completed, job: 'dag', namespace: 'af' }),
      );
      await post(
        runEvent({
          eventType: 'START',
          time: T0 + 10 * MINUTE,
          runId: randomUUID(),
          job: 'dag.task',
          namespace: 'af',
          runFacets: {
            parent: facet('ParentRunFacet', {
              run: { runId: placeholder },
              job: { namespace: 'af', name: 'dag' },
            }),
          },
        }),
      );
    });

    it('never becomes the latestRun over a run that really ran', async () => {
      const job = await get<{ latestRun: { id: string; state: string } }>('/api/v1/namespaces/af/jobs/dag');
      expect({ id: job.latestRun.id, state: job.latestRun.state }).toEqual({
        id: completed,
        state: 'COMPLETED',
      });
      const runs = await get<{ runs: { id: string; state: string }[] }>(
        '/api/v1/namespaces/af/jobs/dag/runs',
      );
      expect(runs.runs.map((run) => run.id)).toEqual([completed, placeholder]);
    });
  });
});
