/**
 * `npm run bench -- journey`: the data journey over a store of a million events.
 *
 * The store: a chain of 7 datasets of 50 columns (d0 -> j1 -> d1 -> ... -> j6 -> d6, column lineage c_k from c_k)
 * whose 6 jobs run every hour for `days` days (a START naming the input, a COMPLETE the output; the column lineage
 * and schemas in the first run's events, as a producer that sends them once), and around it a warehouse of
 * `noiseJobs` other jobs, each reading and writing tables of its own every hour, until the store holds `events`
 * events. Timed, one client at a time: the journey of d0 downstream over 6 hops within the last 30 days (each hop
 * with hundreds of runs of evidence), and the journey of one of d0's 50 columns over the same 6 hops. Goal: p95 ≤
 * 500 ms.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createHttpClient, type HttpClient } from './http-client.js';
import { BenchUsageError, DEFAULT_DATABASE_URL, type StoreName } from './options.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { percentiles, type Percentiles } from './stats.js';
import {
  StoreUnavailableError,
  prepareEmbeddedStore,
  preparePostgresStore,
  type BenchStore,
} from './stores.js';

export interface JourneyOptions {
  readonly stores: readonly StoreName[];
  readonly databaseUrl: string;
  /** Events in the store. @default 1000000 (quick: 100000) */
  readonly events: number;
  /** Days of hourly runs. @default 120 */
  readonly days: number;
  /** Journeys timed per kind. @default 50 (quick: 10) */
  readonly queries: number;
}

export const journeyUsage = `npm run bench -- journey [options]

The data journey (GET /api/v1/compliance/journey) of a dataset and of a column over 6 hops of 50-column datasets,
within 30 days, on a store of EVENTS events (goal p95 <= 500 ms).

  --quick                  100,000 events, 10 queries (also BENCH_QUICK=1)
  --stores=postgres,embedded  (default postgres)
  --events=1000000
  --days=120               days of hourly runs (quick: 40); the store must hold them all
  --queries=50             journeys timed per kind

PostgreSQL: DATABASE_URL (default ${DEFAULT_DATABASE_URL}); a fresh database, dropped afterwards.`;

export function parseJourneyOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): JourneyOptions | undefined {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        quick: { type: 'boolean' },
        stores: { type: 'string' },
        events: { type: 'string' },
        days: { type: 'string' },
        queries: { type: 'string' },
      },
    }).values;
  } catch (error) {
    throw new BenchUsageError((error as Error).message);
  }
  if (values.help) return undefined;
  const quick = values.quick === true || env.BENCH_QUICK === '1';
  const count = (name: string, fallback: number) => {
    const text = values[name] as string | undefined;
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1)
      throw new BenchUsageError(`--${name} takes a positive integer`);
    return value;
  };
  const stores = ((values.stores as string | undefined) ?? 'postgres').split(',');
  for (const store of stores)
    if (store !== 'postgres' && store !== 'embedded') throw new BenchUsageError(`unknown store ${store}`);
  return {
    stores: stores as StoreName[],
    databaseUrl: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    events: count('events', quick ? 100_000 : 1_000_000),
    days: count('days', quick ? 40 : 120),
    queries: count('queries', quick ? 10 : 50),
  };
}

export interface JourneyResult {
  readonly store: StoreName;
  readonly description: string;
  readonly events: number;
  readonly loadSeconds: number;
  readonly dataset: Percentiles;
  readonly column: Percentiles;
  /** Hops and runs of evidence of the dataset journey (a check that it walked all 6). */
  readonly hops: number;
  readonly runsPerHop: number;
  readonly ok: boolean;
  readonly error?: string;
}

const PRODUCER = 'https://example.com/headwater/bench/journey';
const NS = 'postgres://warehouse:5432';
const COLUMNS = Array.from({ length: 50 }, (_, index) => `c${index}`);
const HOUR = 3_600_000;
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});

/** One run: a START naming its input, a COMPLETE its output (with facets when `facets`). */
function runEvents(
  job: string,
  input: string,
  output: string,
  at: number,
  facets: boolean,
): [unknown, unknown] {
  const runId = randomUUID();
  const base = {
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId },
    job: { namespace: 'warehouse', name: job },
  };
  const outputFacets = facets
    ? {
        schema: facet('SchemaDatasetFacet', { fields: COLUMNS.map((name) => ({ name, type: 'numeric' })) }),
        columnLineage: facet('ColumnLineageDatasetFacet', {
          fields: Object.fromEntries(
            COLUMNS.map((name) => [
              name,
              {
                inputFields: [
                  {
                    namespace: NS,
                    name: input,
                    field: name,
                    transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
                  },
                ],
              },
            ]),
          ),
        }),
      }
    : undefined;
  return [
    {
      ...base,
      eventType: 'START',
      eventTime: new Date(at).toISOString(),
      inputs: [{ namespace: NS, name: input }],
    },
    {
      ...base,
      eventType: 'COMPLETE',
      eventTime: new Date(at + 60_000).toISOString(),
      outputs: [{ namespace: NS, name: output, ...(outputFacets ? { facets: outputFacets } : {}) }],
    },
  ];
}

/** The store's events in time order, as JSON arrays of `size`. */
function* batches(options: JourneyOptions, startMs: number, size: number): Generator<string> {
  const hours = options.days * 24;
  const chainPerHour = 6 * 2;
  const noisePerHour = Math.max(0, Math.ceil((options.events - hours * chainPerHour) / hours));
  const noiseJobs = Math.ceil(noisePerHour / 2);
  let batch: unknown[] = [];
  for (let hour = 0; hour < hours; hour++) {
    const at = startMs + hour * HOUR;
    for (let hop = 1; hop <= 6; hop++)
      batch.push(...runEvents(`chain.j${hop}`, `chain.d${hop - 1}`, `chain.d${hop}`, at, hour === 0));
    for (let job = 0; job < noiseJobs; job++)
      batch.push(
        ...runEvents(
          `noise.j${job}`,
          `noise.in${job % 400}`,
          `noise.out${job}`,
          at + (job % 50) * 1000,
          false,
        ),
      );
    if (batch.length >= size) {
      yield JSON.stringify(batch);
      batch = [];
    }
  }
  if (batch.length > 0) yield JSON.stringify(batch);
}

async function load(client: HttpClient, options: JourneyOptions, startMs: number): Promise<number> {
  let stored = 0;
  const queue = batches(options, startMs, 1000);
  const sender = async () => {
    for (let next = queue.next(); !next.done; next = queue.next()) {
      const response = await client.post('/api/v1/lineage/batch', next.value);
      if (response.status !== 200)
        throw new Error(`batch refused: HTTP ${response.status} ${response.body.slice(0, 300)}`);
      const summary = (JSON.parse(response.body) as { summary: { successful: number; failed: number } })
        .summary;
      if (summary.failed > 0) throw new Error(`events refused: ${response.body.slice(0, 300)}`);
      stored += summary.successful;
    }
  };
  await Promise.all([sender(), sender(), sender(), sender()]);
  return stored;
}

async function runStore(store: BenchStore, options: JourneyOptions): Promise<JourneyResult> {
  let server: ServerProcess | undefined;
  const startMs = Date.UTC(2026, 0, 1);
  const to = new Date(startMs + options.days * 24 * HOUR).toISOString();
  const from = new Date(startMs + (options.days - 30) * 24 * HOUR).toISOString();
  const empty = { p50: NaN, p95: NaN, p99: NaN, max: NaN };
  let events = 0;
  let loadSeconds = 0;
  try {
    server = await startServerProcess({ serveArgs: store.serveArgs });
    const client = createHttpClient(server.url, { maxSockets: 4, timeoutMs: 600_000 });
    try {
      const started = performance.now();
      events = await load(client, options, startMs);
      loadSeconds = (performance.now() - started) / 1000;
      const time = async (nodeId: string) => {
        const samples: number[] = [];
        let last: { hops: { runs: { count: number } }[] } | undefined;
        for (let query = 0; query < options.queries + 2; query++) {
          const path = `/api/v1/compliance/journey?nodeId=${encodeURIComponent(nodeId)}&from=${from}&to=${to}&depth=6`;
          const begun = performance.now();
          const response = await client.get(path);
          const elapsed = performance.now() - begun;
          if (response.status !== 200)
            throw new Error(`journey failed: HTTP ${response.status} ${response.body.slice(0, 300)}`);
          last = JSON.parse(response.body) as typeof last;
          // Two unmeasured, to warm the server's caches and the store's buffers.
          if (query >= 2) samples.push(elapsed);
        }
        return { latency: percentiles(samples), answer: last! };
      };
      const dataset = await time(`dataset:${NS}:chain.d0`);
      const column = await time(`datasetField:${NS}:chain.d0:c17`);
      const hops = dataset.answer.hops.length;
      if (hops !== 6 || column.answer.hops.length !== 6)
        throw new Error(`expected 6 hops, got ${hops} (dataset) and ${column.answer.hops.length} (column)`);
      return {
        store: store.name,
        description: store.description,
        events,
        loadSeconds,
        dataset: dataset.latency,
        column: column.latency,
        hops,
        runsPerHop: dataset.answer.hops[0]!.runs.count,
        ok: true,
      };
    } finally {
      client.close();
    }
  } catch (error) {
    return {
      store: store.name,
      description: store.description,
      events,
      loadSeconds,
      dataset: empty,
      column: empty,
      hops: 0,
      runsPerHop: 0,
      ok: false,
      error: `${(error as Error).message}${server ? `\n${server.stderrTail()}` : ''}`,
    };
  } finally {
    await server?.stop();
  }
}

export async function runJourney(options: JourneyOptions): Promise<JourneyResult[]> {
  const results: JourneyResult[] = [];
  for (const name of options.stores) {
    let store: BenchStore;
    try {
      store =
        name === 'postgres' ? await preparePostgresStore(options.databaseUrl) : await prepareEmbeddedStore();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      process.stderr.write(`bench: skipping ${name}: ${error.message}\n`);
      continue;
    }
    try {
      results.push(await runStore(store, options));
    } finally {
      await store.cleanup();
    }
  }
  return results;
}

const ms = (value: number) => (Number.isNaN(value) ? '-' : `${Math.round(value)} ms`);

export function formatJourneyTable(results: readonly JourneyResult[]): string {
  const lines = [
    'store      events     load    dataset p50 / p95        column p50 / p95         runs per hop',
  ];
  for (const result of results)
    lines.push(
      `${result.store.padEnd(9)}  ${String(result.events).padStart(9)}  ${`${Math.round(result.loadSeconds)} s`.padStart(6)}  ` +
        `${`${ms(result.dataset.p50)} / ${ms(result.dataset.p95)}`.padEnd(23)}  ` +
        `${`${ms(result.column.p50)} / ${ms(result.column.p95)}`.padEnd(23)}  ${result.runsPerHop}` +
        (result.ok ? '' : `\n  FAILED: ${result.error}`),
    );
  return lines.join('\n');
}
