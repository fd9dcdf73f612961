/**
 * `npm run bench -- growth`: what a store full of history costs the server. Spark-like events (50,000 jobs and
 * 82,000 datasets per million events) go in through the batch API; at each checkpoint the server is restarted and
 * measured: resident memory once ready, time from spawn to a 200 from /readyz, then to column lineage loaded (it
 * loads after ready) and the memory then, the store's size on disk, and the
 * latency of lineage (depth 20), search and the events page. Memory and start-up should follow the current graph,
 * so from one checkpoint to the next they should stay flat while the store grows.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createHttpClient } from './http-client.js';
import { ErrorTally, runWorkers } from './load.js';
import { DEFAULT_DATABASE_URL } from './options.js';
import { createRunEventStream } from './run-events.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { percentiles } from './stats.js';
import { prepareEmbeddedStore, preparePostgresStore, type BenchStore } from './stores.js';

/** Options of the growth benchmark. */
/** A store the growth benchmark fills: the embedded store on each engine, or PostgreSQL at DATABASE_URL. */
export type GrowthStore = 'embedded' | 'pglite' | 'postgres';

export interface GrowthOptions {
  readonly stores: readonly GrowthStore[];
  /** Events stored at each measurement, ascending. @default [300000, 1000000, 3000000] */
  readonly checkpoints: readonly number[];
  readonly databaseUrl: string;
  /** Requests per latency measurement. @default 60 */
  readonly queries: number;
  /** Leave each store in place afterwards (its location is printed), to measure start-up again on it. */
  readonly keep: boolean;
  /**
   * A PostgreSQL database a kept run left (`--resume <url>`): ingest goes on from the events it holds (the
   * stream is replayed past them), for a run that was interrupted; a store already past every checkpoint is
   * measured once as it is. Only with `--stores postgres`.
   */
  readonly resumeUrl: string | undefined;
  /**
   * Checkpoints at which a copy of the embedded store's data dir is kept (`--copy-at 1000000`), taken while the
   * server is stopped, so that later starts can alternate between a smaller and a larger store on one commit.
   * Only for the embedded stores (a data dir); its path is printed.
   */
  readonly copyAt: readonly number[];
}

/** One checkpoint's figures. */
export interface GrowthPoint {
  readonly events: number;
  readonly ingestEventsPerSecond: number;
  readonly readyMs: number;
  readonly rssMiB: number;
  /** From spawn until /readyz says column lineage (loaded after ready) is in, and the RSS then. */
  readonly columnLineageMs: number;
  readonly columnLineageRssMiB: number;
  /**
   * Memory of the server with the processes it started (the embedded store's PostgreSQL), as proportional set
   * size: shared memory (PostgreSQL's buffers) counted once, not once per process that maps it.
   */
  readonly treePssMiB: number;
  readonly storeMiB: number;
  readonly latencyMs: Record<'lineage' | 'search' | 'events', { p50: number; p95: number }>;
}

const progress = (message: string) => process.stderr.write(`bench growth: ${message}\n`);

/**
 * Parses `growth [--stores a,b] [--checkpoints n,n,n] [--queries n] [--keep] [--resume <database url>]
 * [--copy-at n,n]`.
 */
export function parseGrowthOptions(argv: readonly string[], env: NodeJS.ProcessEnv): GrowthOptions {
  const value = (flag: string) => {
    const index = argv.indexOf(flag);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const stores = (value('--stores') ?? 'embedded,postgres').split(',');
  for (const store of stores) {
    if (store !== 'embedded' && store !== 'pglite' && store !== 'postgres')
      throw new Error(`--stores: unknown store ${store} (embedded, pglite or postgres)`);
  }
  const checkpoints = (value('--checkpoints') ?? '300000,1000000,3000000').split(',').map(Number);
  if (checkpoints.some((n, i) => !Number.isInteger(n) || n <= 0 || (i > 0 && n <= checkpoints[i - 1]!))) {
    throw new Error('--checkpoints: ascending whole numbers of events, e.g. 300000,1000000,3000000');
  }
  const copyAt = (value('--copy-at') ?? '').split(',').filter(Boolean).map(Number);
  if (copyAt.some((n) => !checkpoints.includes(n))) {
    throw new Error(`--copy-at: each value must be one of the checkpoints (${checkpoints.join(',')})`);
  }
  if (copyAt.length > 0 && stores.includes('postgres')) {
    throw new Error(
      '--copy-at: only for the embedded stores (it copies a data dir); drop postgres from --stores',
    );
  }
  return {
    stores: stores as GrowthStore[],
    checkpoints,
    databaseUrl: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    queries: Number(value('--queries') ?? 60),
    keep: argv.includes('--keep') || value('--resume') !== undefined,
    resumeUrl: value('--resume'),
    copyAt,
  };
}

/** Runs the growth benchmark on each store and returns its figures by store. */
export async function runGrowth(options: GrowthOptions): Promise<Record<string, GrowthPoint[]>> {
  const result: Record<string, GrowthPoint[]> = {};
  for (const name of options.stores) {
    const store =
      name === 'postgres' && options.resumeUrl !== undefined
        ? await existingPostgresStore(options.resumeUrl)
        : name === 'postgres'
          ? await preparePostgresStore(options.databaseUrl)
          : await prepareEmbeddedStore(name === 'pglite' ? 'pglite' : 'postgres');
    try {
      result[name] = await growStore(name, store, options);
    } finally {
      if (options.keep) progress(`${name}: kept, ${store.description}: serve ${store.serveArgs.join(' ')}`);
      else await store.cleanup();
    }
  }
  return result;
}

async function growStore(
  name: GrowthStore,
  store: BenchStore,
  options: GrowthOptions,
): Promise<GrowthPoint[]> {
  const perMillion = (n: number) => Math.max(1, Math.round(n));
  const stream = createRunEventStream({
    jobs: perMillion(50_000),
    datasets: perMillion(82_000),
    fieldsPerDataset: 12,
    seed: 7,
  });
  const points: GrowthPoint[] = [];
  let stored = store.databaseUrl === undefined ? 0 : await storedEvents(store.databaseUrl);
  // The stream is replayed past what the store holds only if there is more to ingest (replaying millions of
  // events takes minutes).
  if (stored > 0 && options.checkpoints.some((checkpoint) => checkpoint > stored)) {
    progress(`${name}: resuming after the ${stored} events the store holds`);
    for (let i = 0; i < stored; i++) stream.next();
  }
  let server = await startServerProcess({ serveArgs: store.serveArgs, startTimeoutMs: 600_000 });
  try {
    for (const target of options.checkpoints.filter((checkpoint) => checkpoint > stored)) {
      progress(`${name}: ingesting up to ${target} events`);
      const started = Date.now();
      const before = stored;
      stored = await ingestUntil(server, stream, stored, target);
      const ingestEventsPerSecond = ((stored - before) * 1000) / (Date.now() - started);
      progress(
        `${name}: ${stored} events (${Math.round(ingestEventsPerSecond)}/s, ${Math.round(stream.meanBytes)} B each); restarting`,
      );
      let point: GrowthPoint;
      ({ server, point } = await restartAndMeasure(
        name,
        store,
        options,
        server,
        stored,
        ingestEventsPerSecond,
      ));
      points.push(point);
    }
    // A kept store already past every checkpoint (`--resume`) is measured as it is, on the code of this run.
    if (points.length === 0) {
      let point: GrowthPoint;
      ({ server, point } = await restartAndMeasure(name, store, options, server, stored, NaN));
      points.push(point);
    }
  } finally {
    await server.stop(120_000);
  }
  return points;
}

async function ingestUntil(
  server: ServerProcess,
  stream: ReturnType<typeof createRunEventStream>,
  stored: number,
  target: number,
): Promise<number> {
  const client = createHttpClient(server.url, { maxSockets: 4, timeoutMs: 300_000 });
  const tally = new ErrorTally(server);
  let sent = stored;
  try {
    await runWorkers(4, async () => {
      while (sent < target) {
        const size = Math.min(1000, target - sent);
        sent += size;
        const events: string[] = [];
        for (let i = 0; i < size; i++) events.push(stream.next());
        const body = `[${events.join(',')}]`;
        // A store that is briefly unavailable (503) is waited for, as a producer's retry would.
        for (let attempt = 0; ; attempt++) {
          const response = await client.post('/api/v1/lineage/batch', body).catch(() => undefined);
          if (response?.status === 200) {
            const summary = JSON.parse(response.body) as { summary?: { failed?: number } };
            if ((summary.summary?.failed ?? 0) > 0)
              throw new Error(`a batch failed: ${response.body.slice(0, 500)}`);
            break;
          }
          if ((response !== undefined && response.status !== 503) || attempt >= 120) {
            tally.response(response?.status ?? 0, response?.body ?? 'no answer');
            throw new Error(`a batch failed: ${JSON.stringify(tally.result)}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    });
  } finally {
    client.close();
  }
  return sent;
}

/** A database a kept run left, used as it is and never dropped. */
async function existingPostgresStore(url: string): Promise<BenchStore> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'headwater-bench-pg-'));
  return {
    name: 'postgres',
    description: `an existing PostgreSQL database, resumed (${new URL(url).pathname.slice(1)})`,
    serveArgs: ['--database-url', url, '--data-dir', dataDir],
    databaseUrl: url,
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/** Restarts the server on `store` and takes a checkpoint's figures: start-up, memory, store size, latencies. */
async function restartAndMeasure(
  name: GrowthStore,
  store: BenchStore,
  options: GrowthOptions,
  running: ServerProcess,
  stored: number,
  ingestEventsPerSecond: number,
): Promise<{ server: ServerProcess; point: GrowthPoint }> {
  await running.stop(120_000);
  if (options.copyAt.includes(stored)) {
    const dir = dataDirOf(store);
    // `cp -a` keeps owner and mode: the engine refuses a data dir that is not 0700 and owned by its user.
    execFileSync('cp', ['-a', dir, `${dir}-at-${stored}`]);
    progress(`${name}: copied the data dir at ${stored} events to ${dir}-at-${stored}`);
  }
  const spawnedAt = Date.now();
  const server = await startServerProcess({ serveArgs: store.serveArgs, startTimeoutMs: 600_000 });
  await waitReady(server.url);
  const readyMs = Date.now() - spawnedAt;
  const rssMiB = rss(server.pid);
  await waitReady(server.url, (body) => body.includes('"columnLineage":"loaded"'));
  const columnLineageMs = Date.now() - spawnedAt;
  const columnLineageRssMiB = rss(server.pid);
  const treePssMiB = treePss(server.pid);
  const storeMiB = await storeSize(store);
  const latencyMs = await latencies(server.url, options.queries);
  const point: GrowthPoint = {
    events: stored,
    ingestEventsPerSecond,
    readyMs,
    rssMiB,
    columnLineageMs,
    columnLineageRssMiB,
    treePssMiB,
    storeMiB,
    latencyMs,
  };
  progress(`${name}: ${JSON.stringify(point)}`);
  return { server, point };
}

async function storedEvents(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A fresh database (a kept run's first start) has no tables until the server migrates it.
    const { rows: exists } = await client.query<{ present: boolean }>(
      "SELECT to_regclass('events') IS NOT NULL AS present",
    );
    if (!exists[0]!.present) return 0;
    const { rows } = await client.query<{ count: string }>('SELECT count(*) AS count FROM events');
    return Number(rows[0]!.count);
  } finally {
    await client.end();
  }
}

/** Polls /readyz until it answers 200 (and its body passes `also`). */
async function waitReady(url: string, also: (body: string) => boolean = () => true): Promise<void> {
  for (;;) {
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    if (response?.status === 200 && also(await response.text())) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The process and its descendants (Linux: from each process's children in /proc). */
function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const task of readdirSync(`/proc/${tree[i]}/task`, { withFileTypes: true })) {
      const children = readFileSync(`/proc/${tree[i]}/task/${task.name}/children`, 'utf8').trim();
      if (children) tree.push(...children.split(/\s+/).map(Number));
    }
  }
  return tree;
}

/** Proportional set size of a process and its descendants, in MiB (Linux). */
function treePss(pid: number): number {
  let kb = 0;
  for (const member of processTree(pid)) {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${member}/smaps_rollup`, 'utf8'));
    kb += match ? Number(match[1]) : 0;
  }
  return Math.round(kb / 1024);
}

function dataDirOf(store: BenchStore): string {
  return store.serveArgs[store.serveArgs.indexOf('--data-dir') + 1]!;
}

/** Resident memory of a process, in MiB (Linux). */
function rss(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}

async function storeSize(store: BenchStore): Promise<number> {
  if (store.databaseUrl === undefined) {
    const dir = dataDirOf(store);
    return Math.round(
      Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024 / 1024,
    );
  }
  const client = new pg.Client({ connectionString: store.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ size: string }>(
      'SELECT pg_database_size(current_database()) AS size',
    );
    return Math.round(Number(rows[0]!.size) / 1024 / 1024);
  } finally {
    await client.end();
  }
}

async function latencies(url: string, queries: number): Promise<GrowthPoint['latencyMs']> {
  const client = createHttpClient(url, { maxSockets: 1 });
  try {
    const datasets = JSON.parse(
      (await client.get('/api/v1/namespaces/postgres%3A%2F%2Fwarehouse.internal%3A5432/datasets?limit=200'))
        .body,
    ) as { datasets: { name: string }[] };
    const names = datasets.datasets.map((dataset) => dataset.name);
    if (names.length === 0) throw new Error('no datasets to ask about');
    const time = async (paths: (i: number) => string) => {
      const samples: number[] = [];
      for (let i = 0; i < queries; i++) {
        const started = performance.now();
        const response = await client.get(paths(i));
        if (response.status !== 200) throw new Error(`${paths(i)} answered ${response.status}`);
        samples.push(performance.now() - started);
      }
      const { p50, p95 } = percentiles(samples);
      return { p50: Number(p50.toFixed(1)), p95: Number(p95.toFixed(1)) };
    };
    const nodeId = (i: number) =>
      encodeURIComponent(`dataset:postgres://warehouse.internal:5432:${names[i % names.length]!}`);
    return {
      lineage: await time((i) => `/api/v1/lineage?nodeId=${nodeId(i)}&depth=20&direction=upstream`),
      search: await time(
        (i) =>
          `/api/v1/search?q=${encodeURIComponent(names[i % names.length]!.split('.').pop()!.slice(0, 5))}&limit=20`,
      ),
      events: await time(() => '/api/v1/events/lineage?limit=100'),
    };
  } finally {
    client.close();
  }
}

/** The figures as a Markdown table. */
export function formatGrowthTable(results: Record<string, GrowthPoint[]>): string {
  const lines = [
    '| store | events | ingest (events/s) | ready (s) | RSS (MiB) | column lineage in (s) | RSS then (MiB) | with children, PSS (MiB) | store (MiB) | lineage p50/p95 (ms) | search p50/p95 | events page p50/p95 |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [store, points] of Object.entries(results)) {
    for (const p of points) {
      const l = p.latencyMs;
      lines.push(
        `| ${store} | ${p.events.toLocaleString('en')} | ${Number.isNaN(p.ingestEventsPerSecond) ? '-' : Math.round(p.ingestEventsPerSecond).toLocaleString('en')} | ${(p.readyMs / 1000).toFixed(1)} | ${p.rssMiB} | ${(p.columnLineageMs / 1000).toFixed(1)} | ${p.columnLineageRssMiB} | ${p.treePssMiB} | ${p.storeMiB.toLocaleString('en')} | ${l.lineage.p50} / ${l.lineage.p95} | ${l.search.p50} / ${l.search.p95} | ${l.events.p50} / ${l.events.p95} |`,
      );
    }
  }
  return lines.join('\n');
}
