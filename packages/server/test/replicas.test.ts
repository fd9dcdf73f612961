import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../src/store/migrate.js';
import { openPostgresDb } from '../src/store/db.js';
import { recordExclusiveWrite } from '../src/store/writer.js';
import { backends, type Backend } from './helpers/backends.js';
import { spawnServer, type ChildServer } from './helpers/child-server.js';
import { waitFor } from './helpers/wait.js';

// Replicas share one PostgreSQL; backends() fails in CI without one and warns locally.
const postgres: Backend | undefined = backends().find((backend) => backend.name === 'postgres');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

interface Ready {
  readonly role: 'writer' | 'follower';
  readonly replication: { epoch?: number; writerUrl?: string; appliedCommit: number; latestCommit: number };
}

async function ready(url: string): Promise<Ready> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
  return (await response.json()) as Ready;
}

/** A COMPLETE event whose output dataset is named after its run, so each acknowledged event is findable. */
function runEvent(runId: string, index: number): Record<string, unknown> {
  return {
    eventType: 'COMPLETE',
    eventTime: new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString(),
    producer: 'https://example.com/replicas-test',
    run: { runId },
    job: { namespace: 'replicas', name: `job${index % 5}` },
    inputs: [{ namespace: 'db', name: `source${index % 3}` }],
    outputs: [{ namespace: 'db', name: `out-${runId}` }],
  };
}

/** Posts single events round-robin to `urls` from `clients` concurrent clients until stopped. */
function load(urls: readonly string[], clients = 6) {
  const acknowledged = new Set<string>();
  const statuses = new Map<number, number>();
  let running = true;
  let index = 0;
  const client = async () => {
    while (running) {
      const i = index++;
      const url = urls[i % urls.length]!;
      const runId = randomUUID();
      let status: number;
      try {
        const response = await fetch(`${url}/api/v1/lineage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(runEvent(runId, i)),
          signal: AbortSignal.timeout(30_000),
        });
        status = response.status;
        await response.arrayBuffer();
      } catch {
        status = -1; // the replica is gone (SIGKILLed) or did not answer in time: not acknowledged
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 201) acknowledged.add(runId);
      else await sleep(50);
    }
  };
  const running_ = Array.from({ length: clients }, client);
  return {
    /** How many events were acknowledged so far. */
    count: () => acknowledged.size,
    async stop() {
      running = false;
      await Promise.all(running_);
      return { acknowledged, statuses };
    },
  };
}

async function storedRunIds(databaseUrl: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM runs');
    return new Set(rows.map((row) => row.uuid));
  } finally {
    await client.end();
  }
}

async function feedEpochs(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ epoch: string }>('SELECT epoch FROM commit_feed ORDER BY seq');
    return rows.map((row) => Number(row.epoch));
  } finally {
    await client.end();
  }
}

/** Whether the replica at `url` serves the lineage of the dataset each run wrote (from its in-memory graph). */
async function servesAll(url: string, runIds: Iterable<string>): Promise<boolean> {
  for (const runId of runIds) {
    const nodeId = encodeURIComponent(`dataset:db:out-${runId}`);
    const response = await fetch(`${url}/api/v1/lineage?nodeId=${nodeId}&depth=1`);
    await response.arrayBuffer();
    if (response.status !== 200) return false;
  }
  return true;
}

describe.skipIf(postgres === undefined)('replicas on one PostgreSQL', () => {
  let databaseUrl: string;
  let cleanup: () => Promise<void>;
  const servers: ChildServer[] = [];

  const start = async () => {
    const server = await spawnServer(['--database-url', databaseUrl, '--log-level', 'warn']);
    servers.push(server);
    return server;
  };

  beforeEach(async () => {
    const fresh = await postgres!.fresh();
    databaseUrl = fresh.config.databaseUrl!;
    cleanup = fresh.cleanup;
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.process.kill('SIGCONT');
      server.process.kill('SIGKILL');
      await server.exited;
    }
    await cleanup();
  });

  it('a follower that missed commits pruned from the feed reloads its state in place and is ready again', async () => {
    const a = await start();
    const b = await start();
    const post = async (runId: string, index: number) => {
      const response = await fetch(`${a.url}/api/v1/lineage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(runEvent(runId, index)),
      });
      expect(response.status).toBe(201);
    };
    const before = randomUUID();
    await post(before, 1);
    await until('the follower to show the first commit', async () =>
      (await servesAll(b.url, [before])) ? true : undefined,
    );
    // The follower is cut off while commits go on and the writer prunes them from the feed (as it does after
    // 15 minutes): the follower will find entries it never read gone.
    b.process.kill('SIGSTOP');
    const missed = [randomUUID(), randomUUID(), randomUUID()];
    for (const [i, runId] of missed.entries()) await post(runId, 2 + i);
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      await admin.query('DELETE FROM commit_feed WHERE seq < (SELECT max(seq) FROM commit_feed)');
    } finally {
      await admin.end();
    }
    b.process.kill('SIGCONT');
    await until('the follower to reload and serve what it missed', async () =>
      (await servesAll(b.url, missed)) ? true : undefined,
    );
    await until('the follower to be ready again', async () =>
      (await fetch(`${b.url}/readyz`)).status === 200 ? true : undefined,
    );
    expect(await servesAll(b.url, [before])).toBe(true);
    // And it follows the feed again from there.
    const after = randomUUID();
    await post(after, 9);
    await until('the follower to show a commit after the reload', async () =>
      (await servesAll(b.url, [after])) ? true : undefined,
    );
  });

  it('a journey has the same SHA-256 on the writer and on a follower', async () => {
    const a = await start();
    const b = await start();
    const runIds = [randomUUID(), randomUUID(), randomUUID()];
    for (const [index, runId] of runIds.entries()) {
      const response = await fetch(`${a.url}/api/v1/lineage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...runEvent(runId, index * 5),
          inputs: [{ namespace: 'db', name: 'source0' }],
        }),
      });
      expect(response.status).toBe(201);
    }
    await until('the follower to show the commits', async () =>
      (await servesAll(b.url, runIds)) ? true : undefined,
    );
    const path = `/api/v1/compliance/journey?nodeId=dataset:db:source0&from=2024-12-01T00:00:00Z&to=2025-02-01T00:00:00Z`;
    const [writer, follower] = await Promise.all(
      [a.url, b.url].map(
        async (url) => (await (await fetch(`${url}${path}`)).json()) as { hops: unknown[]; sha256: string },
      ),
    );
    expect(writer!.hops).toHaveLength(3);
    expect(follower!.sha256).toBe(writer!.sha256);
  });

  it('previews live on the writer: a follower forwards their creation, events, reads and diff to it', async () => {
    const a = await start();
    const b = await start();
    expect((await ready(a.url)).role).toBe('writer');
    expect((await ready(b.url)).role).toBe('follower');
    const json = { 'content-type': 'application/json' };
    const created = await fetch(`${b.url}/api/v1/previews`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'pr-1', jobNamespace: 'db-pr-1', baseNamespace: 'db' }),
    });
    expect(created.status).toBe(201);
    const runId = randomUUID();
    const event = { ...runEvent(runId, 1), job: { namespace: 'db-pr-1', name: 'job-1' } };
    const posted = await fetch(`${b.url}/api/v1/lineage`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify(event),
    });
    expect(posted.status).toBe(201);
    for (const url of [a.url, b.url]) {
      const job = await fetch(`${url}/api/v1/namespaces/db-pr-1/jobs/job-1?preview=pr-1`);
      expect(job.status, `${url}: ${await job.clone().text()}`).toBe(200);
      expect(((await job.json()) as { latestRun: { id: string } }).latestRun.id).toBe(runId);
      expect((await fetch(`${url}/api/v1/namespaces/db-pr-1/jobs/job-1`)).status, url).toBe(404);
      expect((await fetch(`${url}/api/v1/previews/pr-1/diff`)).status, url).toBe(200);
    }
  });

  it('elects one writer; followers serve reads of its commits and forward writes to it', async () => {
    const a = await start();
    const b = await start();
    expect((await ready(a.url)).role).toBe('writer');
    const follower = await ready(b.url);
    expect(follower.role).toBe('follower');
    expect(follower.replication.writerUrl).toBe(a.url);

    // Written through the follower, committed by the writer, visible on both.
    const runId = randomUUID();
    const posted = await fetch(`${b.url}/api/v1/lineage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(runEvent(runId, 1)),
    });
    expect(posted.status).toBe(201);
    expect(await servesAll(a.url, [runId])).toBe(true);
    await until('the follower to show the commit', async () =>
      (await servesAll(b.url, [runId])) ? true : undefined,
    );

    // A write that is not ingest (a tag) reaches the follower's read side too: it reloads the names it holds.
    const deleted = await fetch(
      `${b.url}/api/v1/namespaces/db/datasets/${encodeURIComponent(`out-${runId}`)}`,
      {
        method: 'DELETE',
      },
    );
    expect(deleted.status).toBe(200);
    await until('the follower to hide the deleted dataset', async () => {
      const response = await fetch(
        `${b.url}/api/v1/namespaces/db/datasets/${encodeURIComponent(`out-${runId}`)}`,
      );
      await response.arrayBuffer();
      return response.status === 404 ? true : undefined;
    });

    // A bad event is refused by the writer with its 4xx, passed back unchanged.
    const post = (url: string) =>
      fetch(`${url}/api/v1/lineage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ eventType: 'COMPLETE' }),
      });
    const [viaFollower, direct] = [await post(b.url), await post(a.url)];
    expect(viaFollower.status).toBeGreaterThanOrEqual(400);
    expect(viaFollower.status).toBeLessThan(500);
    expect(viaFollower.status).toBe(direct.status);
    expect(await viaFollower.json()).toEqual(await direct.json());
  }, 120_000);

  it('with keys, a follower passes credentials on and the writer decides; the follower checks Origin itself', async () => {
    await start();
    const b = await start();
    await until('b to follow a', async () => ((await ready(b.url)).role === 'follower' ? true : undefined));
    const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    // The first key, made through the follower from loopback (no key exists yet): the writer stores it.
    const created = await post(b.url, '/api/v1/keys', { name: 'ops', role: 'admin', namespaces: ['*'] });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const bearer = { authorization: `Bearer ${key}` };

    const runId = randomUUID();
    expect((await post(b.url, '/api/v1/lineage', runEvent(runId, 1))).status).toBe(401);
    const withKey = await post(b.url, '/api/v1/lineage', runEvent(runId, 1), bearer);
    expect(withKey.status).toBe(201);
    // The answer carries the follower's request id, which the writer logged the write under.
    expect(withKey.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    // A page served by the follower may write through it (its own origin), a foreign page may not.
    const tag = (origin: string) =>
      fetch(`${b.url}/api/v1/tags/replicated`, { method: 'PUT', headers: { ...bearer, origin } });
    expect((await tag(b.url)).status).toBe(200);
    expect((await tag('http://evil.example')).status).toBe(403);
  }, 120_000);

  it('three replicas under load, the writer SIGKILLed: a follower takes over, nothing acknowledged is lost, every replica converges', async () => {
    const replicas = [await start(), await start(), await start()];
    const roles = await Promise.all(replicas.map(async (replica) => (await ready(replica.url)).role));
    expect(roles.filter((role) => role === 'writer')).toHaveLength(1);
    const writer = replicas[roles.indexOf('writer')]!;
    const generator = load(replicas.map((replica) => replica.url));
    await waitFor('more than 50 events acknowledged', () => generator.count() > 50, { timeoutMs: 60_000 });
    writer.process.kill('SIGKILL');
    const killedAt = Date.now();
    const survivors = replicas.filter((replica) => replica !== writer);
    const newWriter = await until('a follower to take over', async () => {
      for (const replica of survivors) if ((await ready(replica.url)).role === 'writer') return replica;
      return undefined;
    });
    const takeover = Date.now() - killedAt;
    expect(takeover).toBeLessThan(10_000);
    // The load goes on under the new writer, and is acknowledged.
    const atTakeover = generator.count();
    await waitFor(
      'more than 20 events acknowledged after the takeover',
      () => generator.count() > atTakeover + 20,
      {
        timeoutMs: 60_000,
      },
    );
    const { acknowledged, statuses } = await generator.stop();

    // Every acknowledged event is in the store; nothing was answered 500.
    expect(acknowledged.size).toBeGreaterThan(50);
    expect(statuses.get(500)).toBeUndefined();
    const stored = await storedRunIds(databaseUrl);
    expect([...acknowledged].filter((runId) => !stored.has(runId))).toEqual([]);
    // The new writer numbers its commits after the old one's: the feed's epochs never go back.
    const epochs = await feedEpochs(databaseUrl);
    expect(epochs).toEqual([...epochs].sort((x, y) => x - y));
    expect(new Set(epochs).size).toBeGreaterThanOrEqual(2);
    // Both survivors serve every acknowledged event from memory, whichever replica took it.
    for (const replica of survivors) {
      await until(`${replica.url} to converge`, async () =>
        (await servesAll(replica.url, acknowledged)) ? true : undefined,
      );
    }
    const other = survivors.find((replica) => replica !== newWriter)!;
    expect((await ready(other.url)).replication.writerUrl).toBe(newWriter.url);
  }, 180_000);

  it('fences a writer that was paused while another took over: its late writes are refused, not stored', async () => {
    const a = await start();
    const b = await start();
    expect((await ready(a.url)).role).toBe('writer');
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      // Pause the writer, then end its lock session as a network partition or a DBA would (only this test's
      // database: other files' servers hold the same lock key in theirs).
      a.process.kill('SIGSTOP');
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 1213682770 AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      await until('the follower to take over', async () =>
        (await ready(b.url)).role === 'writer' ? true : undefined,
      );
      // Requests reach the paused writer; once it runs again they must not be written with its old epoch. Time
      // passes on purpose before it runs again: a stopped process cannot say when they have arrived.
      const late = Array.from({ length: 5 }, (_, i) => {
        const runId = randomUUID();
        return fetch(`${a.url}/api/v1/lineage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(runEvent(runId, i)),
          signal: AbortSignal.timeout(30_000),
        }).then(async (response) => ({ runId, status: response.status, body: await response.text() }));
      });
      await sleep(500);
      a.process.kill('SIGCONT');
      const answers = await Promise.all(late);
      for (const answer of answers) expect([201, 503]).toContain(answer.status);
      // Whatever was acknowledged was written by the new writer (forwarded), never under the old epoch after it.
      const epochs = await feedEpochs(databaseUrl);
      expect(epochs).toEqual([...epochs].sort((x, y) => x - y));
      const stored = await storedRunIds(databaseUrl);
      for (const answer of answers.filter((one) => one.status === 201))
        expect(stored.has(answer.runId)).toBe(true);
      // The old writer now follows.
      await until('the old writer to follow', async () =>
        (await ready(a.url)).role === 'follower' ? true : undefined,
      );
    } finally {
      await admin.end();
    }
  }, 120_000);

  it('the store refuses a write made with an epoch another writer has ended, and a takeover waits for a write under way', async () => {
    const first = await openPostgresDb(databaseUrl);
    const second = await openPostgresDb(databaseUrl);
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      await migrate(first);
      const oldEpoch = (await first.lead(undefined))!;
      expect(oldEpoch).toBeGreaterThan(0);
      expect(await second.lead(undefined)).toBeUndefined();
      await recordExclusiveWrite(first, oldEpoch);
      // A write under way holds the lease: the takeover below waits for it to commit.
      let committedAt = 0;
      let written = false;
      const underWay = first.transaction(async (tx) => {
        await recordExclusiveWrite(tx, oldEpoch);
        written = true;
        // Time passes on purpose: the write stays under way while the takeover below is tried.
        await sleep(800);
        committedAt = Date.now();
      });
      await waitFor('the write to be under way', () => written);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 1213682770 AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      const newEpoch = await until('the second to take the lock', () => second.lead(undefined));
      const tookOverAt = Date.now();
      await underWay;
      expect(newEpoch).toBeGreaterThan(oldEpoch);
      expect(tookOverAt).toBeGreaterThanOrEqual(committedAt);
      // The old epoch is over: the store refuses its writes (fencing), whatever the old writer believes.
      await expect(recordExclusiveWrite(first, oldEpoch)).rejects.toMatchObject({ code: 'HW409' });
      // Numbered right after the last committed entry: the refused write left no gap.
      expect(await recordExclusiveWrite(second, newEpoch)).toBe(3);
    } finally {
      await admin.end();
      await first.close();
      await second.close();
    }
  }, 60_000);
});
