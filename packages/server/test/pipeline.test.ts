import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestPipeline } from '../src/ingest/pipeline.js';
import { normalizeEvent } from '../src/ingest/normalize.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { ModelState } from '../src/store/model-state.js';
import { backends, freshDb } from './helpers/backends.js';

function event(job: string, dataset: string) {
  return normalizeEvent(
    {
      eventType: 'COMPLETE',
      eventTime: '2024-08-01T00:00:00Z',
      producer: 'https://example.com/pipeline-test',
      run: { runId: randomUUID() },
      job: { namespace: 'pipeline', name: job },
      outputs: [{ namespace: 'db', name: dataset }],
    },
    'run',
  );
}

describe.each(backends())('the ingest pipeline on the $name store', (backend) => {
  let db: Db;
  let cleanup: () => Promise<void>;
  /** Writes whose SQL parameters contain this text fail, as a store error would. */
  let poison: string | undefined;

  beforeAll(async () => {
    ({ db, cleanup } = await freshDb(backend));
    await migrate(db);
    // The pipeline writes only as the writer (see Db.lead).
    await db.lead(undefined);
  });
  afterAll(async () => {
    await cleanup?.();
  });

  // The real store, with a fault injected into the statements that carry a marked event.
  const faulty = (): Db => ({
    ...db,
    epoch: db.epoch,
    query: (sql, params) =>
      poison !== undefined && sql.startsWith('WITH') && JSON.stringify(params ?? []).includes(poison)
        ? Promise.reject(new Error('injected store failure'))
        : db.query(sql, params),
  });

  it('fails only the request whose write fails; the others, queued with and behind it, are stored', async () => {
    const state = new ModelState();
    await state.load(db);
    const pipeline = new IngestPipeline(faulty(), state, { maxBatchEvents: 50 });
    poison = 'poisoned_dataset';
    const requests = Array.from({ length: 120 }, (_, i) =>
      i === 30 ? [event('bad', 'poisoned_dataset')] : [event(`job${i % 7}`, `table${i % 5}`)],
    );
    const results = await Promise.allSettled(requests.map((events) => pipeline.submit(events)));
    poison = undefined;
    expect(results.filter((result) => result.status === 'rejected').length).toBe(1);
    expect(results[30]).toMatchObject({ status: 'rejected', reason: { message: 'injected store failure' } });
    const [count] = await db.query<{ events: number; runs: number }>(
      'SELECT (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM runs) AS runs',
    );
    expect(count).toEqual({ events: 119, runs: 119 });
    // The mirror was rebuilt from the store: the failed event's job and dataset are not in it, and ingest
    // goes on where it left off.
    expect([...pipeline.mirror.jobs.values()].map((job) => job.name)).not.toContain('bad');
    expect(await pipeline.submit([event('bad', 'poisoned_dataset')])).toEqual(['stored']);
    const [after] = await db.query<{ events: number }>('SELECT count(*)::int AS events FROM events');
    expect(after!.events).toBe(120);
    await pipeline.close();
  });
});
