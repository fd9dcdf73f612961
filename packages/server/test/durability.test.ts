import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { backends } from './helpers/backends.js';
import { spawnServer, type ChildServer } from './helpers/child-server.js';

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
    const acknowledged: string[] = [];
    let next = 0;
    let killed = false;
    const client = async () => {
      while (!killed) {
        const batch = next % 5 === 0;
        const events = batch ? Array.from({ length: 20 }, () => event(next++)) : [event(next++)];
        try {
          const response = await fetch(`${server.url}/api/v1/lineage${batch ? '/batch' : ''}`, {
            method: 'POST',
            body: JSON.stringify(batch ? events : events[0]),
            headers: { 'content-type': 'application/json' },
          });
          if (response.status === 201 || response.status === 200)
            acknowledged.push(...events.map((e) => e.run.runId));
        } catch {
          // The connection died with the server: not acknowledged, so nothing is owed.
        }
      }
    };
    const clients = Array.from({ length: 16 }, client);
    // Killed once enough is acknowledged to make the check mean something (however loaded the machine is).
    for (let waited = 0; acknowledged.length <= 100 && waited < 60_000; waited += 100)
      await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.process.kill('SIGKILL');
    await server.exited;
    killed = true;
    await Promise.all(clients);
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
        body: JSON.stringify(event(next)),
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
    const events = Array.from({ length: 200 }, (_, i) => event(i));
    const responses = events.map((e) =>
      fetch(`${server.url}/api/v1/lineage`, {
        method: 'POST',
        body: JSON.stringify(e),
        headers: { 'content-type': 'application/json' },
      }).then(
        (response) => (response.status === 201 ? e.run.runId : undefined),
        () => undefined,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    server.process.kill('SIGTERM');
    const acknowledged = (await Promise.all(responses)).filter((id) => id !== undefined);
    expect(await server.exited).toBe(0);
    const restarted = await spawnServer(args);
    const stored = await allRunIds(restarted.url);
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    restarted.process.kill('SIGTERM');
    await restarted.exited;
  });
});
