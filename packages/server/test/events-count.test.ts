import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countEvents } from '../src/store/queries/events.js';
import { backends, startApp } from './helpers/backends.js';

type Started = Awaited<ReturnType<typeof startApp>>;

const START = Date.UTC(2025, 4, 1, 0, 0, 0);
const SPAN_MS = 30 * 3_600_000;

describe.each(backends())('the events page total on the $name store', (backend) => {
  let ctx: Started;
  const times: number[] = [];

  beforeAll(async () => {
    ctx = await startApp(backend);
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 400; i++) {
      // Spread over 30 hours, some on exact hour boundaries.
      const at =
        i % 10 === 0
          ? START + (i % 30) * 3_600_000
          : START + Math.floor((((i * 7919) % 1000) / 1000) * SPAN_MS);
      times.push(at);
      events.push(
        i % 5 === 0
          ? {
              eventTime: new Date(at).toISOString(),
              producer: 'https://example.com/count',
              schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
              dataset: { namespace: 'db', name: `d${i}` },
            }
          : {
              eventType: 'COMPLETE',
              eventTime: new Date(at).toISOString(),
              producer: 'https://example.com/count',
              run: { runId: randomUUID() },
              job: { namespace: 'count', name: `j${i % 9}` },
            },
      );
    }
    const body = JSON.stringify(events);
    for (let i = 0; i < 2; i++) {
      // The second time, every event is a duplicate: the counts must not move.
      const response = await ctx.request('/api/v1/lineage/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(200);
    }
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('equals a count of the events in any range, ends included, by kind, duplicates counted once', async () => {
    const db = ctx.server.db;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -3_600_000, max: SPAN_MS + 3_600_000 }),
        fc.integer({ min: 0, max: SPAN_MS + 7_200_000 }),
        fc.constantFrom(['run', 'dataset', 'job'], ['run'], ['dataset']),
        async (offset, length, kinds) => {
          // Land on hour boundaries often: that is where an off-by-one would hide.
          const from = new Date(
            START + (offset % 4 === 0 ? Math.round(offset / 3_600_000) * 3_600_000 : offset),
          );
          const to = new Date(
            from.getTime() + (length % 3 === 0 ? Math.round(length / 3_600_000) * 3_600_000 : length),
          );
          const [expected] = await db.query<{ count: number }>(
            'SELECT count(*)::int AS count FROM events WHERE event_time >= $1 AND event_time <= $2 AND kind = ANY($3)',
            [from, to, kinds],
          );
          expect(await countEvents(db, from, to, kinds)).toBe(expected!.count);
        },
      ),
      { numRuns: 60 },
    );
    expect(await countEvents(db, new Date(0), new Date(Date.UTC(2100, 0, 1)))).toBe(400);
  });

  it('reports that total on GET /api/v1/events/lineage', async () => {
    const from = new Date(START + 5 * 3_600_000 + 1234).toISOString();
    const to = new Date(START + 17 * 3_600_000).toISOString();
    const page = (await (
      await ctx.request(`/api/v1/events/lineage?after=${from}&before=${to}&limit=1`)
    ).json()) as { totalCount: number };
    // The page lists RunEvents unless asked for other kinds (as Marquez), and counts what it lists.
    const expected = times.filter(
      (at, i) => i % 5 !== 0 && at >= Date.parse(from) && at <= Date.parse(to),
    ).length;
    expect(expected).toBeGreaterThan(50);
    expect(page.totalCount).toBe(expected);
  });
});
