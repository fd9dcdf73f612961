/**
 * `npm run bench -- previews`: how soon a pull request's diff is ready once its pipeline has run.
 *
 * Production: a warehouse of `layers` × `width` models (1,000 datasets by default) built from `width` source
 * tables, each model a job reading two models of the layer before (joined on c0, filtered on c1) and writing
 * eight columns with column lineage and SQL, plus 50 dashboard jobs of another namespace reading the last layer.
 * Each round creates a preview and sends it the whole pipeline again, as CI runs a pull request's: the same
 * models built into the schema `pr_<round>`, one dropping a column read downstream, one renaming a column a
 * dashboard reads, one with another WHERE. The time measured runs from the 200 of the last preview batch to the
 * diff's answer (GET /api/v1/previews/NAME/diff), which must hold the three breaking changes. Goal: p95 ≤ 2 s.
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

/** Options of the previews benchmark. */
export interface PreviewsOptions {
  readonly stores: readonly StoreName[];
  readonly databaseUrl: string;
  /** Model layers. @default 10 */
  readonly layers: number;
  /** Models per layer. @default 100 (1,000 models) */
  readonly width: number;
  /** Previews timed per store. @default 20 (quick: 5) */
  readonly rounds: number;
}

export const previewsUsage = `npm run bench -- previews [options]

A pull request's diff: from the last preview event acknowledged to GET /api/v1/previews/NAME/diff answered,
on a production graph of LAYERS x WIDTH models (goal p95 <= 2 s at 1,000 datasets).

  --quick                  5 rounds (also BENCH_QUICK=1)
  --stores=postgres,embedded
  --layers=10 --width=100  the production pipeline's models
  --rounds=20              previews timed per store

PostgreSQL: DATABASE_URL (default ${DEFAULT_DATABASE_URL}); a fresh database per store, dropped afterwards.`;

/** Parses `previews [options]`; undefined when --help was asked for. */
export function parsePreviewsOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): PreviewsOptions | undefined {
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
        layers: { type: 'string' },
        width: { type: 'string' },
        rounds: { type: 'string' },
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
  const stores = ((values.stores as string | undefined) ?? 'postgres,embedded').split(',');
  for (const store of stores)
    if (store !== 'postgres' && store !== 'embedded') throw new BenchUsageError(`unknown store ${store}`);
  return {
    stores: stores as StoreName[],
    databaseUrl: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    layers: count('layers', 10),
    width: count('width', 100),
    rounds: count('rounds', quick ? 5 : 20),
  };
}

/** One store's figures. */
export interface PreviewsResult {
  readonly store: StoreName;
  readonly description: string;
  readonly datasets: number;
  readonly previewEvents: number;
  /** Last preview batch acknowledged -> diff answered, ms. */
  readonly diffReady: Percentiles;
  /** The preview's pipeline sent, first batch to last acknowledged, ms. */
  readonly previewIngest: Percentiles;
  readonly ok: boolean;
  readonly error?: string;
}

const PRODUCER = 'https://example.com/headwater/bench/previews';
const WAREHOUSE = 'postgres://warehouse:5432';
const COLUMNS = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'] as const;
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});

/** What a round's pull request changes. */
interface PullRequest {
  /** The model that drops c3 (read by the next layer's c3). */
  readonly drops: number;
  /** The last-layer model whose c1 (read by a dashboard) is renamed c1_total. */
  readonly renames: number;
  /** The model whose WHERE changes. */
  readonly filters: number;
}

/** The events of the pipeline built into `schema`, its jobs in `namespace`, changed by `pr` if given. */
function pipeline(
  layers: number,
  width: number,
  schema: string,
  namespace: string,
  pr: PullRequest | undefined,
  startMs: number,
): unknown[] {
  const events: unknown[] = [];
  const model = (layer: number, index: number) =>
    layer === 0 ? `raw.source_${index}` : `${schema}.model_${layer}_${index}`;
  let time = startMs;
  for (let layer = 1; layer <= layers; layer++) {
    for (let index = 0; index < width; index++) {
      const id = (layer - 1) * width + index;
      const near = model(layer - 1, index);
      const other = model(layer - 1, (index + 7) % width);
      const columns = COLUMNS.filter((column) => !(pr?.drops === id && column === 'c3'));
      const rename = (column: string) => (pr?.renames === id && column === 'c1' ? 'c1_total' : column);
      const fields: Record<string, unknown> = {};
      for (const column of columns)
        fields[rename(column)] = {
          inputFields: [
            {
              namespace: WAREHOUSE,
              name: column === 'c7' ? other : near,
              field: column,
              transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
            },
          ],
        };
      const where = pr?.filters === id ? 'a.c1 > 10' : 'a.c1 > 0';
      const select = columns
        .map(
          (column) =>
            `${column === 'c7' ? 'b' : 'a'}.${column}${rename(column) === column ? '' : ` as ${rename(column)}`}`,
        )
        .join(', ');
      events.push({
        eventType: 'COMPLETE',
        eventTime: new Date((time += 10)).toISOString(),
        producer: PRODUCER,
        schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
        run: { runId: randomUUID() },
        job: {
          namespace,
          name: `${schema}.model_${layer}_${index}`,
          facets: {
            sql: facet('SQLJobFacet', {
              query: `select ${select} from ${near} a join ${other} b on a.c0 = b.c0 where ${where}`,
            }),
          },
        },
        inputs: [
          { namespace: WAREHOUSE, name: near },
          { namespace: WAREHOUSE, name: other },
        ],
        outputs: [
          {
            namespace: WAREHOUSE,
            name: model(layer, index),
            facets: {
              schema: facet('SchemaDatasetFacet', {
                fields: columns.map((column) => ({ name: rename(column), type: 'numeric' })),
              }),
              columnLineage: facet('ColumnLineageDatasetFacet', { fields }),
            },
          },
        ],
      });
    }
  }
  return events;
}

/** The dashboards: 50 jobs, each reading c1 and c2 of a last-layer model. */
function dashboards(layers: number, width: number, startMs: number): unknown[] {
  return Array.from({ length: Math.min(50, width) }, (_, index) => {
    const input = `analytics.model_${layers}_${index}`;
    return {
      eventType: 'COMPLETE',
      eventTime: new Date(startMs + index).toISOString(),
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
      run: { runId: randomUUID() },
      job: { namespace: 'dashboards', name: `dashboard_${index}` },
      inputs: [{ namespace: WAREHOUSE, name: input }],
      outputs: [
        {
          namespace: 'bi://dashboards',
          name: `dashboard_${index}`,
          facets: {
            columnLineage: facet('ColumnLineageDatasetFacet', {
              fields: Object.fromEntries(
                ['c1', 'c2'].map((field) => [
                  field,
                  { inputFields: [{ namespace: WAREHOUSE, name: input, field, transformations: [] }] },
                ]),
              ),
            }),
          },
        },
      ],
    };
  });
}

async function send(client: HttpClient, events: readonly unknown[]): Promise<void> {
  for (let at = 0; at < events.length; at += 500) {
    const response = await client.post('/api/v1/lineage/batch', JSON.stringify(events.slice(at, at + 500)));
    if (response.status !== 200)
      throw new Error(`batch refused: HTTP ${response.status} ${response.body.slice(0, 300)}`);
    const summary = (JSON.parse(response.body) as { summary: { failed: number } }).summary;
    if (summary.failed > 0) throw new Error(`events refused: ${response.body.slice(0, 300)}`);
  }
}

async function runStore(store: BenchStore, options: PreviewsOptions): Promise<PreviewsResult> {
  let server: ServerProcess | undefined;
  const ready: number[] = [];
  const ingest: number[] = [];
  const { layers, width } = options;
  const base = Date.now() - 86_400_000;
  try {
    server = await startServerProcess({ serveArgs: store.serveArgs });
    const client = createHttpClient(server.url, { maxSockets: 2 });
    try {
      await send(client, pipeline(layers, width, 'analytics', 'analytics', undefined, base));
      await send(client, dashboards(layers, width, base + 3_600_000));
      for (let round = 0; round < options.rounds; round++) {
        const name = `pr-${round}`;
        const schema = `pr_${round}`;
        const created = await client.post(
          '/api/v1/previews',
          JSON.stringify({
            name,
            jobNamespace: `analytics-pr-${round}`,
            baseNamespace: 'analytics',
            mappings: [{ from: { name: `${schema}.*` }, to: { name: 'analytics.*' } }],
          }),
        );
        if (created.status !== 201)
          throw new Error(`preview refused: HTTP ${created.status} ${created.body}`);
        const pr: PullRequest = {
          drops: ((round * 37) % width) + width * 2,
          renames: (layers - 1) * width + (round % Math.min(50, width)),
          filters: ((round * 11) % width) + width,
        };
        const events = pipeline(
          layers,
          width,
          schema,
          `analytics-pr-${round}`,
          pr,
          base + 7_200_000 + round * 60_000,
        );
        const sent = performance.now();
        await send(client, events);
        const acknowledged = performance.now();
        const diff = await client.get(`/api/v1/previews/${name}/diff`);
        const answered = performance.now();
        if (diff.status !== 200)
          throw new Error(`diff failed: HTTP ${diff.status} ${diff.body.slice(0, 300)}`);
        const parsed = JSON.parse(diff.body) as {
          summary: { breaking: number };
          changes: { reason: string }[];
        };
        const reasons = new Set(parsed.changes.map((change) => change.reason));
        for (const reason of ['column-removed', 'column-renamed', 'rows-changed'])
          if (!reasons.has(reason))
            throw new Error(
              `round ${round}: the diff lacks ${reason}: ${parsed.changes.map((change) => JSON.stringify(change).slice(0, 200)).join('\n')}`,
            );
        ready.push(answered - acknowledged);
        ingest.push(acknowledged - sent);
        await deletePreview(server.url, name);
      }
    } finally {
      client.close();
    }
    return {
      store: store.name,
      description: store.description,
      datasets: layers * width + width,
      previewEvents: layers * width,
      diffReady: percentiles(ready),
      previewIngest: percentiles(ingest),
      ok: true,
    };
  } catch (error) {
    return {
      store: store.name,
      description: store.description,
      datasets: layers * width + width,
      previewEvents: layers * width,
      diffReady: percentiles(ready),
      previewIngest: percentiles(ingest),
      ok: false,
      error: `${(error as Error).message}${server ? `\n${server.stderrTail()}` : ''}`,
    };
  } finally {
    await server?.stop();
  }
}

async function deletePreview(url: string, name: string): Promise<void> {
  const response = await fetch(`${url}/api/v1/previews/${name}`, { method: 'DELETE' });
  if (response.status !== 200) throw new Error(`delete failed: HTTP ${response.status}`);
}

/** Runs the benchmark on each store. */
export async function runPreviews(options: PreviewsOptions): Promise<PreviewsResult[]> {
  const results: PreviewsResult[] = [];
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

/** The results as a table. */
export function formatPreviewsTable(results: readonly PreviewsResult[]): string {
  const lines = [
    'store      datasets  events  diff ready p50 / p95 / max       preview pipeline sent p50 / p95',
  ];
  for (const result of results) {
    const { diffReady, previewIngest } = result;
    lines.push(
      `${result.store.padEnd(9)}  ${String(result.datasets).padStart(8)}  ${String(result.previewEvents).padStart(6)}  ` +
        `${ms(diffReady.p50)} / ${ms(diffReady.p95)} / ${ms(diffReady.max)}`.padEnd(33) +
        `  ${ms(previewIngest.p50)} / ${ms(previewIngest.p95)}` +
        (result.ok ? '' : `\n  FAILED: ${result.error}`),
    );
  }
  return lines.join('\n');
}
