/**
 * Runs that only ever sent START (Spark's internal RDD jobs, a producer that died) are flagged stale once no event
 * came for longer than --stale-run-after; the stored events and the run's state are not changed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import { apiOf } from './helpers/api.js';
import { backends, startServer } from './helpers/backends.js';
import { runEvent } from './read-scenario.js';

describe('--stale-run-after', () => {
  it('takes durations with units or seconds, from the flag or HEADWATER_STALE_RUN_AFTER, default 24h', () => {
    expect(resolveConfig({}, {}).staleRunAfterMs).toBe(86_400_000);
    expect(resolveConfig({ 'stale-run-after': '90m' }, {}).staleRunAfterMs).toBe(5_400_000);
    expect(resolveConfig({}, { HEADWATER_STALE_RUN_AFTER: '3600' }).staleRunAfterMs).toBe(3_600_000);
    expect(() => resolveConfig({ 'stale-run-after': 'soon' }, {})).toThrow(
      /--stale-run-after must be a duration of at least 1s, such as 90m/,
    );
    expect(() => resolveConfig({ 'stale-run-after': '0' }, {})).toThrow(/at least 1s/);
  });
});

describe.each(backends())('stale runs on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startServer>>;
  const api = apiOf(() => ctx.url);
  const old = randomUUID();
  const fresh = randomUUID();
  const done = randomUUID();
  const now = Date.now();

  beforeAll(async () => {
    ctx = await startServer(backend, { staleRunAfterMs: 3_600_000 });
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
