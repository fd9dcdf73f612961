import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.js';
import { backends, startApp } from './helpers/backends.js';

type Started = Awaited<ReturnType<typeof startApp>>;

function event(job: string, dataset: string): Record<string, unknown> {
  return {
    eventType: 'COMPLETE',
    eventTime: '2025-02-01T00:00:00Z',
    producer: 'https://example.com/read-model-test',
    run: { runId: randomUUID() },
    job: { namespace: 'read-model', name: job },
    inputs: [{ namespace: 'db', name: 'committed_source' }],
    outputs: [{ namespace: 'db', name: dataset }],
  };
}

/** A gate a test opens by hand. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe.each(backends())(
  'what readers see while the writer fails and recovers, on the $name store',
  (backend) => {
    let ctx: Started;
    let restore: () => void;

    beforeAll(async () => {
      ctx = await startApp(backend);
    });
    afterAll(async () => {
      restore?.();
      await ctx?.stop();
    });

    const post = async (body: unknown) =>
      (
        await ctx.request('/api/v1/lineage', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).status;
    const get = async (path: string) => (await ctx.request(`/api/v1${path}`)).status;

    it('never shows a batch in flight, never 404s committed data during recovery, and never reissues ids', async () => {
      expect(await post(event('committed_job', 'committed_target'))).toBe(201);
      const db = ctx.server.db as { -readonly [K in keyof Db]: Db[K] };
      const query = db.query.bind(db);
      const writeHeld = gate();
      const writeReached = gate();
      const reloadHeld = gate();
      const reloadReached = gate();
      let failed = false;
      db.query = async (sql: string, params?: readonly unknown[], name?: string) => {
        if (
          !failed &&
          sql.startsWith('WITH') &&
          JSON.stringify(params ?? []).includes('uncommitted_target')
        ) {
          writeReached.open();
          await writeHeld.wait;
          failed = true;
          throw new Error('injected write failure');
        }
        // The writer's rebuild of its mirror after the failure reads the namespaces first.
        if (failed && /^SELECT id, name, .*created_at.* FROM namespaces$/s.test(sql)) {
          reloadReached.open();
          await reloadHeld.wait;
        }
        return query(sql, params, name);
      };
      restore = () => (db.query = query);
      const idsBefore = { ...ctx.server.pipeline.mirror.next };

      const inFlight = post(event('uncommitted_job', 'uncommitted_target'));
      await writeReached.wait;
      // The writer's mirror has the batch; readers must not.
      expect([...ctx.server.pipeline.mirror.datasets.values()].map((row) => row.name)).toContain(
        'uncommitted_target',
      );
      expect(await get('/namespaces/db/datasets/uncommitted_target')).toBe(404);
      expect(await get('/namespaces/read-model/jobs/uncommitted_job')).toBe(404);
      expect(await get('/lineage?nodeId=dataset:db:uncommitted_target')).toBe(404);
      expect(await get('/search?q=uncommitted')).toBe(200);
      const search = (await (await ctx.request('/api/v1/search?q=uncommitted')).json()) as {
        totalCount: number;
      };
      expect(search.totalCount).toBe(0);
      writeHeld.open();

      // While the writer rebuilds its mirror, every committed dataset and job still answers.
      await reloadReached.wait;
      const during = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          get(
            i % 3 === 0
              ? '/namespaces/db/datasets/committed_target'
              : i % 3 === 1
                ? '/namespaces/read-model/jobs/committed_job'
                : '/lineage?nodeId=dataset:db:committed_target',
          ),
        ),
      );
      expect(during.filter((status) => status !== 200)).toEqual([]);
      reloadHeld.open();
      expect(await inFlight).toBe(500);
      restore();

      expect(await get('/namespaces/db/datasets/uncommitted_target')).toBe(404);
      expect(await get('/namespaces/db/datasets/committed_target')).toBe(200);
      // Ids the failed batch was given are not given again.
      expect(await post(event('next_job', 'next_target'))).toBe(201);
      const next = [...ctx.server.readModel.datasets.values()].find((row) => row.name === 'next_target')!;
      expect(next.id).toBeGreaterThan(idsBefore.dataset);
      const nextJob = [...ctx.server.readModel.jobs.values()].find((row) => row.name === 'next_job')!;
      expect(nextJob.id).toBeGreaterThan(idsBefore.job);
    });
  },
);
