/**
 * Staleness per writing job: a table written hourly by one job and in bursts (retries, one write per partition)
 * by another must not be called stale seconds after a write, and when it is stale, the cause says whose cadence
 * it was held to.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from './helpers/api.js';
import { backends, startApp } from './helpers/backends.js';
import { MINUTE, T0, at, runEvent } from './read-scenario.js';

const HOUR = 60 * MINUTE;
const NS = 'warehouse';
const TABLE = 'analytics.events';

interface Cause {
  kind: string;
  message: string;
  staleness: {
    lastWriteAt: string;
    medianIntervalMs: number;
    job: string;
    floorMs: number;
    writers: { job: string; medianIntervalMs: number; writes: number }[];
  } | null;
}

describe.each(backends())('staleness on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const api = apiOf(() => ctx.request);
  let lastWrite = 0;
  const write = async (job: string, time: number) => {
    const runId = randomUUID();
    const outputs = [{ namespace: NS, name: TABLE, facets: {} }];
    await api.post(
      runEvent({ eventType: 'START', time: time - 1000, runId, job, namespace: NS, outputs }),
      runEvent({ eventType: 'COMPLETE', time, runId, job, namespace: NS, outputs }),
    );
    lastWrite = Math.max(lastWrite, time);
  };
  const causesAt = async (time: number) =>
    (
      await api.get<{ causes: Cause[] }>(
        `/api/v1/analysis/root-cause?nodeId=${encodeURIComponent(`dataset:${NS}:${TABLE}`)}&at=${at(time)}`,
      )
    ).causes.filter((c) => c.kind === 'stale');

  beforeAll(async () => {
    ctx = await startApp(backend);
    for (let hour = 0; hour < 6; hour++) await write('hourly_load', T0 + hour * HOUR);
    // Bursts: three writes seconds apart, every two hours.
    for (let burst = 0; burst < 3; burst++) {
      for (let i = 0; i < 3; i++) await write('backfill', T0 + 30 * MINUTE + burst * 2 * HOUR + i * 5000);
    }
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('is not stale seconds after a write', async () => {
    expect(await causesAt(lastWrite + 10_000)).toEqual([]);
    expect(await causesAt(lastWrite + 80 * MINUTE)).toEqual([]);
  });

  it('is stale past 1.5 x the cadence of its most frequent writer, and says so per writer', async () => {
    const [stale] = await causesAt(lastWrite + 2 * HOUR);
    expect(stale?.staleness).toMatchObject({
      lastWriteAt: at(lastWrite),
      medianIntervalMs: HOUR,
      job: `job:${NS}:hourly_load`,
      floorMs: 15 * MINUTE,
      writers: [
        { job: `job:${NS}:hourly_load`, medianIntervalMs: HOUR, writes: 6 },
        { job: `job:${NS}:backfill`, medianIntervalMs: 2 * HOUR, writes: 9 },
      ],
    });
    expect(stale!.message).toContain('hourly_load usually writes it every 1h');
  });
});
