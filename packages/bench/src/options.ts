import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

/** A store the benchmark runs against. */
export type StoreName = 'embedded' | 'postgres';

/** A measurement the benchmark can run. */
export type ScenarioName = 'single' | 'batch' | 'lineage' | 'analysis' | 'client' | 'ui';

/** The measurements that run once per store; client and ui run once, against an embedded-store server. */
export const STORE_SCENARIOS: readonly ScenarioName[] = ['single', 'batch', 'lineage', 'analysis'];

/** Everything a benchmark run needs to know, resolved once from flags, environment and defaults. */
export interface BenchOptions {
  /** Smaller sizes everywhere, for a smoke run. @default false */
  readonly quick: boolean;
  /** Stores to measure, in this order. @default ['embedded', 'postgres'] */
  readonly stores: readonly StoreName[];
  /** Measurements to run, always in the order single, batch, lineage, analysis, client, ui. @default all six */
  readonly scenarios: readonly ScenarioName[];
  /** Admin URL used to create and drop the benchmark database. */
  readonly databaseUrl: string;
  /** Concurrent single-event clients. @default 32 */
  readonly clients: number;
  /** Measured seconds of single-event ingest (after warm-up). @default 20 (quick: 4) */
  readonly singleSeconds: number;
  /** Most events sent in the measured single-event window. @default 200000 (quick: 20000) */
  readonly singleMaxEvents: number;
  /** Unmeasured seconds of single-event ingest first, so JIT, caches and pools are warm. @default 3 (quick: 1) */
  readonly warmupSeconds: number;
  /** Events per batch request. @default 1000 (quick: 500) */
  readonly batchSize: number;
  /** Concurrent batch senders. @default 4 (quick: 2) */
  readonly batchSenders: number;
  /** Measured seconds of batch ingest. @default 20 (quick: 4) */
  readonly batchSeconds: number;
  /** Most events sent in the measured batch window. @default 200000 (quick: 20000) */
  readonly batchMaxEvents: number;
  /** Schema fields per dataset in the realistic events. @default 20 */
  readonly fieldsPerDataset: number;
  /** Datasets plus jobs in the generated lineage graph. @default 100000 (quick: 10000) */
  readonly graphNodes: number;
  /** Job layers of the generated graph; a dataset in layer k has k jobs upstream of it. @default 50 (quick: 25) */
  readonly graphLayers: number;
  /** Depth of each lineage query. @default 20 */
  /** Depth of each lineage query, in jobs (Marquez's meaning). @default 20 */
  readonly depth: number;
  /** Measured lineage queries. @default 300 (quick: 60) */
  readonly queries: number;
  /** Concurrent lineage clients, and analysis clients. @default 4 */
  readonly queryClients: number;
  /** Datasets plus jobs in the analysis measurement's graph (its own, with facets). @default 100000 (quick: 5000) */
  readonly analysisNodes: number;
  /** Measured requests per analysis endpoint. @default 200 (quick: 40) */
  readonly analysisQueries: number;
  /** Most seconds of measured requests per analysis endpoint. @default 30 (quick: 10) */
  readonly analysisSeconds: number;
  /** Folder for server CPU profiles (`node --cpu-prof`); unset means no profiling. */
  readonly profileDir: string | undefined;
  /** Seed of every random choice, so two runs send the same workload shape. @default 1 */
  readonly seed: number;
  /** emit() calls of the OpenLineage client against a closed port (backend down). @default 20000 (quick: 2000) */
  readonly clientDownEmits: number;
  /** Events the async_http client sends to a real server for its throughput. @default 20000 (quick: 5000) */
  readonly clientEvents: number;
  /** Nodes of the generated graph the explorer lays out and renders. @default 2000 */
  readonly uiNodes: number;
  /** Page loads of the graph page, the first of them an unmeasured warm-up. @default 5 (quick: 3) */
  readonly uiRuns: number;
  /** Authentication on: the store gets a writer key before the server starts, and ingest sends it. @default false */
  readonly auth: boolean;
}

/** The PostgreSQL the harness uses when DATABASE_URL is unset. */
export const DEFAULT_DATABASE_URL = 'postgres://headwater:headwater@127.0.0.1:5432/headwater';

/**
 * A reader of a sub-benchmark's `--flag n` options (whole numbers above 0) from `argv`, each with its fallback.
 * @throws Error naming the flag when its value is not such a number.
 */
export function wholeNumberFlags(argv: readonly string[]): (flag: string, fallback: number) => number {
  return (flag, fallback) => {
    const index = argv.indexOf(flag);
    if (index < 0) return fallback;
    const parsed = Number(argv[index + 1]);
    if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`${flag}: a whole number above 0`);
    return parsed;
  };
}

/** `npm run bench -- --help`. */
export const usage = `npm run bench -- [options]

Measures single-event ingest, batch ingest, depth-20 lineage queries and the analysis endpoints (root cause,
impact, schema and run diffs, column paths, lineage as of a time, graph diff) against a Headwater server running
in a child process, on the embedded store and on PostgreSQL; then the OpenLineage client (emit() with the
backend down, async_http throughput) and the explorer's graph render in headless Chromium, once, against an
embedded-store server. Prints a table per store and per measurement, then one JSON line.

  --quick                   small sizes for a smoke run (also BENCH_QUICK=1)
  --only=single,batch,lineage,analysis,client,ui
                            run only these measurements (also BENCH_ONLY)
  --store=embedded,postgres run only these stores (also BENCH_STORE)
  --clients=32              concurrent single-event clients
  --seconds=20              measured seconds of single-event ingest
  --events=200000           at most this many single events
  --batch-size=1000         events per batch request
  --batch-senders=4         concurrent batch senders
  --batch-seconds=20        measured seconds of batch ingest
  --fields=20               schema fields per dataset in the ingest events
  --graph-nodes=100000      datasets + jobs in the lineage graph
  --graph-layers=50         job layers in the lineage graph
  --queries=300             measured lineage queries
  --query-clients=4         concurrent lineage (and analysis) clients
  --analysis-nodes=100000   datasets + jobs in the analysis graph (with facets and second runs)
  --analysis-queries=200    measured requests per analysis endpoint
  --analysis-seconds=30     at most this many measured seconds per analysis endpoint
  --profile[=DIR]           CPU-profile each server child into DIR (default <tmp>/headwater-bench-profiles)
  --seed=1                  seed of the generated workload
  --client-events=20000     events the async_http client sends (and emit() calls with the backend down)
  --ui-nodes=2000           nodes of the generated graph rendered in Chromium (/usr/bin/chromium)
  --ui-runs=5               page loads of the graph page, the first one a warm-up
  --auth                    authentication on: ingest sends an API key (also BENCH_AUTH=1); compare with a run
                            without it taken back to back

PostgreSQL: DATABASE_URL (default ${DEFAULT_DATABASE_URL}); the role must be allowed to CREATE DATABASE.
The harness creates a fresh database per run and drops it afterwards; it skips PostgreSQL if unreachable.

Measurements of their own (each with its flags): npm run bench -- alerts|growth|replicas|streams [flags]
  alerts     incident latency (FAIL -> webhook) and false alerts on a labelled month; alerts --help
  growth     memory, start-up and latency as the store grows to millions of events
  replicas   batch ingest with one and two replicas, and the follower's lag
  streams    Kafka ingest and the OpenLineage proxy`;

/** Thrown for a bad flag or variable; main prints the message and the usage. */
export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

/**
 * Resolves the options: flags first, then BENCH_* and DATABASE_URL variables, then defaults (which depend on
 * --quick). Returns undefined when --help was asked for.
 */
export function parseBenchOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions | undefined {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new BenchUsageError((error as Error).message, { cause: error });
  }
  const flags = parsed.values;
  if (flags.help === true) return undefined;
  const quick = flags.quick === true || env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true';
  const size = (flag: keyof typeof flags, full: number, small: number, min = 1): number => {
    const raw = flags[flag];
    if (raw === undefined) return quick ? small : full;
    const value = Number(raw);
    if (typeof raw !== 'string' || !Number.isFinite(value) || value < min) {
      throw new BenchUsageError(`--${flag} must be a number of at least ${min}; got ${JSON.stringify(raw)}.`);
    }
    return value;
  };
  const stores = listOf<StoreName>(
    'store',
    flags.store ?? env.BENCH_STORE,
    ['embedded', 'postgres'],
    ['embedded', 'postgres'],
  );
  const scenarios = listOf<ScenarioName>(
    'only',
    flags.only ?? env.BENCH_ONLY,
    ['single', 'batch', 'lineage', 'analysis', 'client', 'ui'],
    ['single', 'batch', 'lineage', 'analysis', 'client', 'ui'],
  );
  const profile = flags.profile;
  return Object.freeze({
    quick,
    stores,
    scenarios,
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    clients: Math.round(size('clients', 32, 32)),
    singleSeconds: size('seconds', 20, 4, 0.5),
    singleMaxEvents: Math.round(size('events', 200_000, 20_000)),
    warmupSeconds: quick ? 1 : 3,
    batchSize: Math.round(size('batch-size', 1000, 500)),
    batchSenders: Math.round(size('batch-senders', 4, 2)),
    batchSeconds: size('batch-seconds', 20, 4, 0.5),
    batchMaxEvents: quick ? 20_000 : 200_000,
    fieldsPerDataset: Math.round(size('fields', 20, 20)),
    graphNodes: Math.round(size('graph-nodes', 100_000, 10_000, 100)),
    graphLayers: Math.round(size('graph-layers', 50, 25, 2)),
    depth: 20,
    queries: Math.round(size('queries', 300, 60)),
    queryClients: Math.round(size('query-clients', 4, 4)),
    analysisNodes: Math.round(size('analysis-nodes', 100_000, 5_000, 100)),
    analysisQueries: Math.round(size('analysis-queries', 200, 40)),
    analysisSeconds: size('analysis-seconds', 30, 10, 0.5),
    // Profiles are large: by default they go to the temp dir, not into the checkout.
    profileDir:
      profile === undefined
        ? undefined
        : profile === ''
          ? path.join(os.tmpdir(), 'headwater-bench-profiles')
          : profile,
    seed: Math.round(size('seed', 1, 1, 0)),
    clientDownEmits: Math.round(size('client-events', 20_000, 2_000)),
    clientEvents: Math.round(size('client-events', 20_000, 5_000)),
    uiNodes: Math.round(size('ui-nodes', 2000, 2000, 2)),
    uiRuns: Math.round(size('ui-runs', 5, 3, 2)),
    auth: flags.auth === true || env.BENCH_AUTH === '1' || env.BENCH_AUTH === 'true',
  });
}

function parse(argv: readonly string[]) {
  // --profile may come bare; parseArgs has no optional values, so a bare one becomes --profile=.
  const args = argv.map((arg) => (arg === '--profile' ? '--profile=' : arg));
  return parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      help: { type: 'boolean', short: 'h' },
      quick: { type: 'boolean' },
      auth: { type: 'boolean' },
      only: { type: 'string' },
      store: { type: 'string' },
      clients: { type: 'string' },
      seconds: { type: 'string' },
      events: { type: 'string' },
      'batch-size': { type: 'string' },
      'batch-senders': { type: 'string' },
      'batch-seconds': { type: 'string' },
      fields: { type: 'string' },
      'graph-nodes': { type: 'string' },
      'graph-layers': { type: 'string' },
      queries: { type: 'string' },
      'query-clients': { type: 'string' },
      'analysis-nodes': { type: 'string' },
      'analysis-queries': { type: 'string' },
      'analysis-seconds': { type: 'string' },
      profile: { type: 'string' },
      seed: { type: 'string' },
      'client-events': { type: 'string' },
      'ui-nodes': { type: 'string' },
      'ui-runs': { type: 'string' },
    },
  });
}

function listOf<T extends string>(
  flag: string,
  raw: string | undefined,
  allowed: readonly T[],
  fallback: readonly T[],
): readonly T[] {
  if (raw === undefined || raw === '') return fallback;
  const picked = raw.split(',').map((item) => item.trim());
  for (const item of picked) {
    if (!(allowed as readonly string[]).includes(item)) {
      throw new BenchUsageError(
        `--${flag} takes ${allowed.join(', ')} (comma-separated); got ${JSON.stringify(item)}.`,
      );
    }
  }
  // Keep the canonical order, so --only=lineage,single still runs single first.
  return allowed.filter((item) => picked.includes(item));
}
