/**
 * What the run API tells beyond Marquez: runs that only ever sent START (Spark's internal RDD jobs, a producer
 * that died) are flagged stale once no event came for longer than --stale-run-after (the stored events and the
 * run's state are not changed); a failed run's error is read from the facets producers really send.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/server-config.js';
import { apiOf } from './helpers/api.js';
import { backends, startApp } from './helpers/backends.js';
import { runEvent } from './read-scenario.js';

describe('--stale-run-after', () => {
  it('takes durations with units or seconds, from the flag or HEADWATER_STALE_RUN_AFTER, default 24h', () => {
    expect(resolveConfig({}, {}).staleRunAfterMs).toBe(86_400_000);
    expect(resolveConfig({ 'stale-run-after': '90m' }, {}).staleRunAfterMs).toBe(5_400_000);
    expect(resolveConfig({}, { HEADWATER_STALE_RUN_AFTER: '3600' }).staleRunAfterMs).toBe(3_600_000);
    // The alerts configuration's durations and the flags' are read by one parser.
    expect(resolveConfig({ 'stale-run-after': '1h30m' }, {}).staleRunAfterMs).toBe(5_400_000);
    expect(() => resolveConfig({ 'stale-run-after': 'soon' }, {})).toThrow(
      /--stale-run-after must be a duration of at least 1s, such as 90m/,
    );
    expect(() => resolveConfig({ 'stale-run-after': '0' }, {})).toThrow(/at least 1s/);
  });
});

describe.each(backends())('stale runs on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const api = apiOf(() => ctx.request);
  const old = randomUUID();
  const fresh = randomUUID();
  const done = randomUUID();
  const failed = randomUUID();
  const now = Date.now();

  beforeAll(async () => {
    ctx = await startApp(backend, { staleRunAfterMs: 3_600_000 });
    await api.post(
      runEvent({
        eventType: 'START',
        time: now - 2 * 3_600_000,
        runId: old,
        job: 'spark.rdd_job',
        namespace: 'spark',
      }),
      runEvent({
        eventType: 'START',
        time: now - 60_000,
        runId: fresh,
        job: 'spark.rdd_job',
        namespace: 'spark',
      }),
      runEvent({
        eventType: 'START',
        time: now - 3 * 3_600_000,
        runId: done,
        job: 'spark.app',
        namespace: 'spark',
      }),
      runEvent({
        eventType: 'COMPLETE',
        time: now - 3 * 3_600_000 + 1000,
        runId: done,
        job: 'spark.app',
        namespace: 'spark',
      }),
    );
  });
  it("reads a failed run's error from Spark's spark.exception facet, as root cause does", async () => {
    await api.post(
      runEvent({
        eventType: 'FAIL',
        time: now - 1000,
        runId: failed,
        job: 'spark.app',
        namespace: 'spark',
        runFacets: {
          'spark.exception': {
            _producer: 'https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark',
            _schemaURL: 'https://openlineage.io/spark-exception.json',
            message: 'Job aborted due to stage failure',
            stackTrace: 'org.apache.spark.SparkException: Job aborted\n\tat ...',
          },
        },
      }),
    );
    const run = await api.get<{ state: string; error?: Record<string, unknown> }>(
      `/api/v1/jobs/runs/${failed}`,
    );
    expect(run.error).toEqual({
      message: 'Job aborted due to stage failure',
      stackTrace: 'org.apache.spark.SparkException: Job aborted\n\tat ...',
      programmingLanguage: 'Java',
      facet: 'spark.exception',
    });
    expect((await api.get<{ error?: unknown }>(`/api/v1/jobs/runs/${done}`)).error).toBeNull();
  });

  afterAll(async () => {
    await ctx?.stop();
  });

  it('flags a RUNNING run with no event for longer than the limit, and only that one', async () => {
    const run = (id: string) => api.get<{ state: string; stale?: boolean }>(`/api/v1/jobs/runs/${id}`);
    expect(await run(old)).toMatchObject({ state: 'RUNNING', stale: true });
    expect((await run(fresh)).stale).toBeUndefined();
    expect((await run(done)).stale).toBeUndefined();
    const list = await api.get<{ runs: { id: string; stale?: boolean }[] }>(
      '/api/v1/namespaces/spark/jobs/spark.rdd_job/runs',
    );
    expect(list.runs.map((r) => [r.id, r.stale ?? false])).toEqual([
      [fresh, false],
      [old, true],
    ]);
  });
});
