import { createClient, runEvent, track, uuidv7 } from '@headwater/openlineage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startServer } from './helpers/backends.js';

// The TypeScript client against a real Headwater server: what it sends is what the server stores.
describe.each(backends())('@headwater/openlineage against the server on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startServer>>;
  const isolated = { env: {}, cwd: '/', homeDir: '/' };

  beforeAll(async () => {
    ctx = await startServer(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('delivers tracked runs (with a nested run) over HTTP, and the server derives their state', async () => {
    const errors: string[] = [];
    const client = createClient({
      sources: isolated,
      config: { transport: { type: 'http', url: ctx.url, timeout: 10 } },
      onError: (error) => errors.push(error.message),
    });
    const result = await track(
      {
        client,
        job: { namespace: 'interop', name: 'outer' },
        inputs: [{ namespace: 'db', name: 'source' }],
        outputs: [{ namespace: 'db', name: 'target' }],
      },
      async () => {
        // A timer, not only a microtask: the run context must survive a turn of the event loop.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return track({ client, job: { namespace: 'interop', name: 'outer.inner' } }, () => 42);
      },
    );
    expect(result).toBe(42);
    // A sync function stays sync: its error comes back unchanged, after a FAIL event is emitted.
    expect(() =>
      track({ client, job: { namespace: 'interop', name: 'failing' } }, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(await client.close(20_000)).toBe(true);
    expect(errors).toEqual([]);

    const rows = await ctx.server.db.query<{ name: string; state: string; parent: string | null }>(
      `SELECT j.name, r.state, p.name AS parent FROM runs r JOIN jobs j ON j.id = r.job_id
       LEFT JOIN jobs p ON p.id = j.parent_job_id JOIN namespaces n ON n.id = j.namespace_id
       WHERE n.name = 'interop' ORDER BY j.name`,
    );
    expect(rows).toEqual([
      { name: 'failing', state: 'FAILED', parent: null },
      { name: 'outer', state: 'COMPLETED', parent: null },
      { name: 'outer.inner', state: 'COMPLETED', parent: 'outer' },
    ]);
  });

  it('delivers through the async batching transport and the batch endpoint', async () => {
    const errors: string[] = [];
    const client = createClient({
      sources: isolated,
      config: { transport: { type: 'async_http', url: ctx.url, batch: true, batch_size: 10 } },
      onError: (error) => errors.push(error.message),
    });
    const runIds = Array.from({ length: 25 }, () => uuidv7());
    for (const runId of runIds) {
      for (const eventType of ['START', 'COMPLETE'] as const) {
        await client.emit(
          runEvent({ eventType, run: { runId }, job: { namespace: 'interop', name: 'batched' } }),
        );
      }
    }
    expect(await client.close(20_000)).toBe(true);
    expect(errors).toEqual([]);
    const [count] = await ctx.server.db.query<{ completed: number }>(
      `SELECT count(*)::int AS completed FROM runs WHERE uuid = ANY($1::uuid[]) AND state = 'COMPLETED'`,
      [runIds],
    );
    expect(count!.completed).toBe(25);
  });
});
