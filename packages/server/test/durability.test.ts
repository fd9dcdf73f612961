import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { backends } from './helpers/backends.js';
import { spawnServer, type ChildServer } from './helpers/child-server.js';
import { waitFor } from './helpers/wait.js';

function event(i: number) {
  return {
    eventType: i % 2 === 0 ? 'START' : 'COMPLETE',
    eventTime: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    producer: 'https://example.com/durability-test',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: randomUUID() },
    job: { namespace: 'durability', name: `job${i % 37}` },
    inputs: [{ namespace: 'db', name: `table${i % 11}` }],
    outputs: [{ namespace: 'db', name: `table${(i % 11) + 1}` }],
  };
}

async function allRunIds(url: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 1000) {
    const response = await fetch(
      `${url}/api/v1/events/lineage?limit=1000&offset=${offset}&sortDirection=asc&kind=run&kind=dataset&kind=job`,
    );
    const body = (await response.json()) as { events: { run: { runId: string } }[] };
    for (const stored of body.events) ids.add(stored.run.runId);
    if (body.events.length < 1000) return ids;
  }
}

/**
 * Posts events from `clients` concurrent clients (every fifth request a batch of 20) to the server `target()` names
 * until `stop()`, keeping the run ids of every event answered 201 or 200.
 */
function load(target: () => ChildServer, clients = 16) {
  const acknowledged: string[] = [];
  let next = 0;
  let stopped = false;
  let signalled = false;
  let inFlight = 0;
  let inFlightAtSignal = 0;
  let acknowledgedAfterSignal = 0;
  const client = async () => {
    while (!stopped) {
      const batch = next % 5 === 0;
      const events = batch ? Array.from({ length: 20 }, () => event(next++)) : [event(next++)];
      const sentBeforeSignal = !signalled;
      inFlight++;
      try {
        const response = await fetch(`${target().url}/api/v1/lineage${batch ? '/batch' : ''}`, {
          method: 'POST',
          body: JSON.stringify(batch ? events : events[0]),
          headers: { 'content-type': 'application/json' },
        });
        await response.arrayBuffer();
        if (response.status === 201 || response.status === 200) {
          acknowledged.push(...events.map((e) => e.run.runId));
          if (signalled && sentBeforeSignal) acknowledgedAfterSignal++;
        }
      } catch {
        // The connection died with the server: not acknowledged, so nothing is owed.
      } finally {
        inFlight--;
      }
    }
  };
  const running = Array.from({ length: clients }, client);
  return {
    acknowledged,
    /** The next event's index, for events sent after the load. */
    next: () => next,
    /** Sends `signal` to the server with the load under way, noting the requests in flight then. */
    signal(signal: NodeJS.Signals) {
      signalled = true;
      inFlightAtSignal = inFlight;
      target().process.kill(signal);
    },
    /** Requests sent before the signal and in flight when it was sent; those of them acknowledged after it. */
    inFlight: () => ({ atSignal: inFlightAtSignal, acknowledgedAfter: acknowledgedAfterSignal }),
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** Waits until the load has had more than `count` events acknowledged. */
const acknowledgedPast = (generator: ReturnType<typeof load>, count: number) =>
  waitFor(`more than ${count} events acknowledged`, () => generator.acknowledged.length > count, {
    timeoutMs: 60_000,
  });

describe.each(backends())('durability on the $name store', (backend) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('loses nothing it acknowledged when killed with SIGKILL under load', async () => {
    const { config, cleanup } = await backend.fresh();
    cleanups.push(cleanup);
    const args = [
      '--data-dir',
      config.dataDir,
      ...(config.databaseUrl ? ['--database-url', config.databaseUrl] : []),
    ];
    let server: ChildServer = await spawnServer(args);
    const generator = load(() => server);
    // Killed once enough is acknowledged to make the check mean something (however loaded the machine is).
    await acknowledgedPast(generator, 100);
    generator.signal('SIGKILL');
    await server.exited;
    await generator.stop();
    const { acknowledged } = generator;
    expect(acknowledged.length).toBeGreaterThan(100);

    // PostgreSQL releases the dead server's writer lock when it notices the closed connection.
    for (let attempt = 0; ; attempt++) {
      try {
        server = await spawnServer(args);
        break;
      } catch (error) {
        if (attempt > 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    const stored = await allRunIds(server.url);
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
    // The restarted server takes new events on top of what survived. On PostgreSQL it may start as a follower
    // while the dead server's session still holds the writer lock: it answers 503 (retriable) until it takes
    // the lock over, about a second later.
    const post = () =>
      fetch(`${server.url}/api/v1/lineage`, {
        method: 'POST',
        body: JSON.stringify(event(generator.next())),
        headers: { 'content-type': 'application/json' },
      });
    let after = await post();
    for (let attempt = 0; after.status === 503 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await post();
    }
    expect(after.status).toBe(201);
    server.process.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }, 180_000);

  it('commits what is in flight on SIGTERM and exits cleanly', async () => {
    const { config, cleanup } = await backend.fresh();
    cleanups.push(cleanup);
    const args = [
      '--data-dir',
      config.dataDir,
      ...(config.databaseUrl ? ['--database-url', config.databaseUrl] : []),
    ];
    const server = await spawnServer(args);
    const generator = load(() => server);
    // Signalled under load, once enough is acknowledged that a loss would show.
    await acknowledgedPast(generator, 100);
    generator.signal('SIGTERM');
    expect(await server.exited).toBe(0);
    await generator.stop();
    const { acknowledged } = generator;
    expect(acknowledged.length).toBeGreaterThan(100);
    // Requests were in flight at the signal, and the server answered some of them before it exited: what it had
    // received it finished rather than dropped.
    expect(generator.inFlight().atSignal).toBeGreaterThan(0);
    expect(generator.inFlight().acknowledgedAfter).toBeGreaterThan(0);

    const restarted = await spawnServer(args);
    try {
      const stored = await allRunIds(restarted.url);
      expect(stored.size).toBeGreaterThanOrEqual(acknowledged.length);
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      restarted.process.kill('SIGTERM');
      await restarted.exited;
    }
  }, 180_000);
});
