import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chooseEmbeddedEngine, openEmbeddedDb } from '../src/store/db.js';
import { findPostgresBinaries, processRuns } from '../src/store/embedded-postgres.js';
import { spawnServer, type ChildServer } from './helpers/child-server.js';
import { waitFor } from './helpers/wait.js';
import {
  privatePostgresUnavailable,
  startPrivatePostgres,
  type PrivatePostgres,
} from './helpers/private-postgres.js';

const run = promisify(execFile);

// These tests stop, kill and fill the store under a real server process. They need root (a private PostgreSQL
// runs as the postgres user; a small tmpfs is mounted for the full disk): always so in CI, which must run them.
const unavailable = privatePostgresUnavailable();
if (unavailable && process.env.CI === 'true')
  throw new Error(`CI must run the availability tests: ${unavailable}`);
if (unavailable) console.warn(`Skipping the availability tests: ${unavailable}.`);

// The embedded store's own PostgreSQL needs only the binaries npm installs (an optional dependency).
const noBinaries =
  (await findPostgresBinaries()) === undefined
    ? `no PostgreSQL binaries from npm for ${process.platform}-${process.arch}`
    : undefined;
if (noBinaries && process.env.CI === 'true')
  throw new Error(`CI must run the embedded PostgreSQL tests: ${noBinaries}`);
if (noBinaries) console.warn(`Skipping the embedded PostgreSQL tests: ${noBinaries}.`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function runEvent(runId: string, index: number): Record<string, unknown> {
  return {
    eventType: 'COMPLETE',
    eventTime: new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString(),
    producer: 'https://example.com/availability-test',
    run: { runId },
    job: { namespace: 'availability', name: `job${index % 13}` },
    inputs: [{ namespace: 'db', name: `source${index % 7}` }],
    outputs: [{ namespace: 'db', name: `target${index % 11}` }],
  };
}

/** What a load generator saw. */
interface LoadResult {
  /** runIds answered 201 (or reported successful in a batch reply). */
  readonly acknowledged: Set<string>;
  /** Status code -> count. */
  readonly statuses: Map<number, number>;
  /** Retry-After headers seen on 503s. */
  readonly retryAfter: string[];
  /** Messages of the 503s. */
  readonly messages: string[];
}

/** Posts single events from `clients` concurrent clients until `stop()` is called. */
function load(url: string, clients = 4): { acknowledged: () => number; stop: () => Promise<LoadResult> } {
  const result: LoadResult = { acknowledged: new Set(), statuses: new Map(), retryAfter: [], messages: [] };
  let running = true;
  let index = 0;
  const client = async () => {
    while (running) {
      const runId = randomUUID();
      try {
        const response = await fetch(`${url}/api/v1/lineage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(runEvent(runId, index++)),
          signal: AbortSignal.timeout(30_000),
        });
        const body = await response.text();
        result.statuses.set(response.status, (result.statuses.get(response.status) ?? 0) + 1);
        if (response.status === 201) result.acknowledged.add(runId);
        if (response.status === 503) {
          result.retryAfter.push(response.headers.get('retry-after') ?? '');
          if (result.messages.length < 5) result.messages.push(body);
          await sleep(100);
        }
      } catch {
        result.statuses.set(0, (result.statuses.get(0) ?? 0) + 1);
        await sleep(100);
      }
    }
  };
  const all = Array.from({ length: clients }, client);
  return {
    acknowledged: () => result.acknowledged.size,
    stop: async () => {
      running = false;
      await Promise.all(all);
      return result;
    },
  };
}

/** Waits until the load has had more than `count` events acknowledged (more since `after`, when given). */
async function acknowledgedPast(
  generator: { acknowledged: () => number },
  count: number,
  after = 0,
): Promise<void> {
  await waitFor(`more than ${count} events acknowledged`, () => generator.acknowledged() > after + count, {
    timeoutMs: 60_000,
  });
}

const status = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(5000) })).status;

/** Posts one event and returns the status. */
async function postOne(url: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/lineage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(runEvent(randomUUID(), 0)),
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  return response.status;
}

async function storedRunIds(url: string, runIds: Iterable<string>): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ uuid: string }>(
      'SELECT uuid::text AS uuid FROM runs WHERE uuid = ANY($1::uuid[])',
      [[...runIds]],
    );
    return new Set(rows.map((row) => row.uuid));
  } finally {
    await client.end();
  }
}

describe.skipIf(unavailable !== undefined)('a server whose PostgreSQL goes away', () => {
  let postgres: PrivatePostgres;
  let server: ChildServer;
  let output = '';

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    server = await spawnServer(['--database-url', postgres.url, '--log-level', 'warn']);
    server.process.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.process.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });
  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    await postgres?.destroy();
  });

  it('answers 503 with Retry-After while PostgreSQL is stopped -m immediate, and resumes by itself losing nothing acknowledged', async () => {
    const generator = load(server.url);
    await acknowledgedPast(generator, 50);
    await postgres.stop('immediate');
    // While it is down: ingest is refused as retriable, readiness says so, liveness does not.
    await waitFor('a 503 from ingest', async () => (await postOne(server.url)) === 503, {
      timeoutMs: 30_000,
    });
    expect(await status(`${server.url}/readyz`)).toBe(503);
    expect(await status(`${server.url}/healthcheck`)).toBe(503);
    expect(await status(`${server.url}/healthz`)).toBe(200);
    // Time passes on purpose, past the verifier's re-read of "no key yet": what it last read holds while the store
    // that keeps keys is away, so what is answered from memory still is.
    await sleep(2000);
    expect(await status(`${server.url}/metrics`)).toBe(200);
    await postgres.start();
    await waitFor('ingest to resume', async () => (await postOne(server.url)) === 201, { timeoutMs: 30_000 });
    // The load goes on after the outage, and is acknowledged again.
    await acknowledgedPast(generator, 20, generator.acknowledged());
    const result = await generator.stop();

    expect(await status(`${server.url}/readyz`)).toBe(200);
    expect({ code: server.process.exitCode, signal: server.process.signalCode }).toEqual({
      code: null,
      signal: null,
    });
    // Only 201 and 503 were answered: a lost store is never a 500.
    expect([...result.statuses.keys()].sort()).toEqual([201, 503]);
    expect(result.retryAfter.length).toBeGreaterThan(0);
    for (const value of result.retryAfter) expect(Number(value)).toBeGreaterThanOrEqual(1);
    expect(result.messages[0]).toContain('STORE_UNAVAILABLE');
    expect(result.acknowledged.size).toBeGreaterThan(50);
    const stored = await storedRunIds(postgres.url, result.acknowledged);
    expect([...result.acknowledged].filter((runId) => !stored.has(runId))).toEqual([]);
    expect(output).toMatch(/the store is unavailable/);
    expect(output).toMatch(/the store is available again/);
  }, 180_000);

  it('survives the termination of the connection that holds the writer lock, and takes the lock again', async () => {
    const generator = load(server.url, 2);
    await acknowledgedPast(generator, 10);
    const holders = async () =>
      (
        await postgres.psql(
          "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = 1213682770 AND granted",
        )
      ).trim();
    const before = await holders();
    expect(before).toMatch(/^\d+$/);
    await postgres.psql(`SELECT pg_terminate_backend(${before})`);
    await waitFor(
      'the lock to be taken again',
      async () => {
        const now = await holders();
        return /^\d+$/.test(now) && now !== before;
      },
      { timeoutMs: 30_000 },
    );
    await waitFor('ingest to go on', async () => (await postOne(server.url)) === 201, { timeoutMs: 30_000 });
    const result = await generator.stop();
    expect(await status(`${server.url}/readyz`)).toBe(200);
    expect(result.statuses.get(500)).toBeUndefined();
    const stored = await storedRunIds(postgres.url, result.acknowledged);
    expect([...result.acknowledged].filter((runId) => !stored.has(runId))).toEqual([]);
  });
});

describe.skipIf(unavailable !== undefined).each(['postgres', 'pglite'] as const)(
  'the embedded store (%s) on a full disk',
  (engine) => {
    let mount: string;
    let server: ChildServer | undefined;
    let output = '';

    beforeAll(async () => {
      mount = await mkdtemp(path.join(os.tmpdir(), 'headwater-full-'));
      await run('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', mount]);
    });
    afterAll(async () => {
      if (server) {
        server.process.kill('SIGKILL');
        await server.exited;
      }
      await run('umount', [mount]).catch(() => undefined);
      await rm(mount, { recursive: true, force: true });
    });

    it('answers a clear 503, logs it, and resumes by itself once space is freed, nothing acknowledged lost', async () => {
      const dataDir = path.join(mount, 'store');
      await mkdir(dataDir);
      // The template is made by the default engine, PostgreSQL; PGlite starts from an empty data dir.
      if (engine === 'postgres') await cp(inject('embeddedTemplateDir'), dataDir, { recursive: true });
      server = await spawnServer(['--data-dir', dataDir, '--log-level', 'warn', '--embedded-engine', engine]);
      server.process.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      server.process.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const generator = load(server.url, 2);
      await acknowledgedPast(generator, 5);
      const seen: number[] = [];
      // Leave 20 MiB, under the 32 MiB the store keeps free: enough for a write already in flight to finish (a new
      // 16 MiB WAL segment included), not enough to be taken for a usable disk.
      const { stdout } = await run('df', ['--output=avail', '-B1', mount]);
      const free = Number(stdout.trim().split('\n').pop());
      const filler = path.join(mount, 'filler');
      await run('fallocate', ['-l', String(free - 20 * 1024 * 1024), filler]);
      await waitFor(
        'a 503 for the full disk',
        async () => {
          const answer = await postOne(server!.url).catch(() => 0);
          seen.push(answer);
          return answer === 503;
        },
        { timeoutMs: 60_000 },
      ).catch((error: Error) => {
        throw new Error(
          `${error.message}; answers seen: ${seen.slice(-20).join(', ')}; log: ${output.slice(-2000)}`,
        );
      });
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(JSON.stringify(await ready.json())).toMatch(/space/i);
      await rm(filler);
      await waitFor('ingest to resume', async () => (await postOne(server!.url)) === 201, {
        timeoutMs: 30_000,
      });
      const result = await generator.stop();
      expect(result.messages.join('\n')).toMatch(/STORE_UNAVAILABLE.*(space|disk)/i);
      expect(result.statuses.get(500)).toBeUndefined();
      expect(output).toMatch(/the store is unavailable \(.*(space|MiB free)/i);

      server.process.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      server = undefined;
      const db = await openEmbeddedDb(dataDir, { engine });
      try {
        const rows = await db.query<{ uuid: string }>(
          'SELECT uuid::text AS uuid FROM runs WHERE uuid = ANY($1::uuid[])',
          [[...result.acknowledged]],
        );
        expect(result.acknowledged.size).toBeGreaterThan(5);
        expect(rows.length).toBe(result.acknowledged.size);
      } finally {
        await db.close();
      }
    }, 180_000);
  },
);

describe.skipIf(noBinaries !== undefined)("the embedded store's own PostgreSQL", () => {
  let dataDir: string;
  let server: ChildServer | undefined;
  let output = '';
  const postmasterPid = async () =>
    Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const socketUrl = () =>
    `postgresql://headwater@/postgres?host=${encodeURIComponent(path.join(dataDir, 'postgres'))}`;
  const start = async () => {
    server = await spawnServer(['--data-dir', dataDir, '--log-level', 'warn']);
    server.process.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.process.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return server;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'headwater-own-pg-'));
    await cp(inject('embeddedTemplateDir'), dataDir, { recursive: true });
  });
  afterAll(async () => {
    if (server) {
      server.process.kill('SIGTERM');
      await server.exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is the default engine, and restarts when killed under load: 503 meanwhile, nothing acknowledged lost', async () => {
    const { url } = await start();
    const ready = (await (await fetch(`${url}/readyz`)).json()) as {
      store: { kind: string; engine: string };
    };
    expect(ready.store).toMatchObject({ kind: 'embedded', engine: expect.stringMatching(/^postgres \d+$/) });
    const generator = load(url);
    await acknowledgedPast(generator, 20);
    const killed = await postmasterPid();
    process.kill(killed, 'SIGKILL');
    await waitFor('a 503 from ingest', async () => (await postOne(url)) === 503, { timeoutMs: 10_000 });
    await waitFor('ingest to resume', async () => (await postOne(url)) === 201, { timeoutMs: 60_000 });
    await acknowledgedPast(generator, 10, generator.acknowledged());
    const result = await generator.stop();
    expect(result.statuses.get(500)).toBeUndefined();
    expect(result.retryAfter.length).toBeGreaterThan(0);
    expect(await postmasterPid()).not.toBe(killed);
    expect(output).toMatch(/embedded PostgreSQL exited \(SIGKILL\)/);
    const stored = await storedRunIds(socketUrl(), result.acknowledged);
    expect(result.acknowledged.size).toBeGreaterThan(20);
    expect([...result.acknowledged].filter((runId) => !stored.has(runId))).toEqual([]);
  }, 180_000);

  it('shuts down the PostgreSQL a killed server left running, then serves everything it acknowledged', async () => {
    const { url } = server!;
    const generator = load(url, 2);
    await acknowledgedPast(generator, 5);
    server!.process.kill('SIGKILL');
    await server!.exited;
    server = undefined;
    const result = await generator.stop();
    const orphan = await postmasterPid();
    // Its own process group: the server's death did not take it along.
    expect(processRuns(orphan)).toBe(true);
    await start();
    expect(processRuns(orphan)).toBe(false);
    expect(await postmasterPid()).not.toBe(orphan);
    const stored = await storedRunIds(socketUrl(), result.acknowledged);
    expect(result.acknowledged.size).toBeGreaterThan(5);
    expect([...result.acknowledged].filter((runId) => !stored.has(runId))).toEqual([]);
    // A graceful stop stops PostgreSQL with it.
    const running = await postmasterPid();
    server!.process.kill('SIGTERM');
    expect(await server!.exited).toBe(0);
    server = undefined;
    expect(processRuns(running)).toBe(false);
  }, 180_000);
});

describe('the embedded engine chosen for a data dir', () => {
  const dirs: string[] = [];
  const fresh = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-engine-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(noBinaries !== undefined)(
    'keeps PGlite for a data dir that PGlite made, PostgreSQL for a new one',
    async () => {
      const old = await fresh();
      const made = await openEmbeddedDb(old, { engine: 'pglite' });
      await made.close();
      expect((await chooseEmbeddedEngine(old)).engine).toBe('pglite');
      expect((await chooseEmbeddedEngine(await fresh())).engine).toBe('postgres');
    },
    60_000,
  );

  it.skipIf(process.getuid?.() !== 0 || noBinaries !== undefined)(
    'falls back to PGlite, saying why, where the user PostgreSQL runs as cannot reach the data dir',
    async () => {
      // mkdtemp makes a folder only root may enter; the data dir is inside it.
      const dataDir = path.join(await fresh(), 'store');
      const warnings: string[] = [];
      const log = { warn: (message: string) => warnings.push(message), info: () => undefined };
      expect((await chooseEmbeddedEngine(dataDir, 'auto', log)).engine).toBe('pglite');
      expect(warnings.join('\n')).toMatch(/uses PGlite.*cannot enter/);
      await expect(chooseEmbeddedEngine(dataDir, 'postgres', log)).rejects.toThrow(/cannot enter/);
    },
  );
});
