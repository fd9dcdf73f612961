import { postBatch } from './batch-ingest.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import { createLayeredGraph, type LayeredGraph } from './layered-graph.js';
import { ErrorTally, runWorkers, type ErrorCount } from './load.js';
import { createRandom } from './random.js';
import type { ServerProcess } from './server-process.js';
import {
  measureCpu,
  monotonicUs,
  percentiles,
  type CpuUse,
  type Percentiles,
  type TimeWindow,
} from './stats.js';

/** Options of {@link runLineageQueries}. */
export interface LineageQueryOptions {
  /** Datasets plus jobs in the generated graph, approximately. */
  readonly graphNodes: number;
  /** Job layers of the generated graph. */
  readonly graphLayers: number;
  /** Depth of each query, in jobs. */
  readonly depth: number;
  /** Measured queries (after 20 unmeasured ones). */
  readonly queries: number;
  /** Concurrent closed-loop clients. */
  readonly clients: number;
  /** Seed of the graph and of the start nodes. */
  readonly seed: number;
}

/** How the generated graph was loaded. */
export interface GraphLoad {
  readonly datasets: number;
  readonly jobs: number;
  /** One COMPLETE event per job. */
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSec: number;
  readonly errors: ErrorCount;
  readonly window: TimeWindow;
}

/** What the lineage query measurement found. */
export type LineageQueryResult =
  | { readonly status: 'missing'; readonly note: string; readonly graph: GraphLoad }
  | {
      readonly status: 'measured';
      readonly graph: GraphLoad;
      readonly depth: number;
      readonly clients: number;
      readonly queries: number;
      readonly latencyMs: Percentiles;
      /** Mean size of an answer's JSON body. */
      readonly meanResponseBytes: number;
      /** Mean number of nodes (datasets and jobs) in each answer. */
      readonly meanNodes: number;
      /** The same, from a brute-force walk of the generated graph. */
      readonly meanReferenceNodes: number;
      /** Answers whose node count differs from the brute-force walk. */
      readonly mismatches: number;
      /** Share of answers in which the start node's upstream reaches `depth` job hops. */
      readonly shareAtFullDepth: number;
      readonly errors: ErrorCount;
      readonly cpu: CpuUse;
      readonly window: TimeWindow;
    };

const LOAD_BATCH_EVENTS = 1000;
const LOAD_SENDERS = 2;
const WARMUP_QUERIES = 20;

/**
 * Loads a generated layered graph (see layered-graph.ts) through the batch API, then times depth-`depth` upstream
 * lineage queries from random datasets at least `depth` layers deep, with `clients` concurrent clients. Answers
 * are checked against a brute-force walk of the generated graph, so a fast but wrong endpoint shows up.
 */
export async function runLineageQueries(
  server: ServerProcess,
  options: LineageQueryOptions,
): Promise<LineageQueryResult> {
  const graph = createLayeredGraph({
    nodes: options.graphNodes,
    layers: options.graphLayers,
    seed: options.seed,
  });
  const client = createHttpClient(server.url, { maxSockets: Math.max(LOAD_SENDERS, options.clients) });
  try {
    const load = await loadGraph(server, client, graph);
    const random = createRandom(options.seed + 1);
    const starts = graph.deepStarts(WARMUP_QUERIES + options.queries, options.depth, random);
    const probe = await client.get(queryPath(graph, starts[0]!, options.depth));
    // A missing route answers 404 without naming the dataset; an unknown node would be named in the message.
    if (probe.status === 404 && !probe.body.includes(graph.datasetName(starts[0]!))) {
      return {
        status: 'missing',
        note: 'lineage endpoint missing (GET /api/v1/lineage answers 404)',
        graph: load,
      };
    }

    const warmupTally = new ErrorTally(server);
    let cursor = 0;
    const warmup = starts.slice(0, WARMUP_QUERIES);
    await runWorkers(options.clients, async () => {
      while (cursor < warmup.length && !warmupTally.hopeless) {
        const id = warmup[cursor++]!;
        await client
          .get(queryPath(graph, id, options.depth))
          .catch((error: unknown) => warmupTally.failure(error));
      }
    });

    const measured = starts.slice(WARMUP_QUERIES);
    const tally = new ErrorTally(server, 20);
    const latencies: number[] = [];
    let nodes = 0;
    let responseBytes = 0;
    let referenceNodes = 0;
    let mismatches = 0;
    let atFullDepth = 0;
    cursor = 0;
    const stopCpu = measureCpu(server);
    const startUs = monotonicUs();
    await runWorkers(options.clients, async () => {
      while (cursor < measured.length && !tally.hopeless) {
        const id = measured[cursor++]!;
        const sentAt = performance.now();
        try {
          const response = await client.get(queryPath(graph, id, options.depth));
          const elapsed = performance.now() - sentAt;
          if (response.status !== 200) {
            tally.response(response.status, response.body);
            continue;
          }
          const answer = readAnswer(response.body, graph.datasetNodeId(id));
          if (!answer) {
            tally.response(response.status, `not a {graph:[...]} answer: ${response.body.slice(0, 200)}`);
            continue;
          }
          latencies.push(elapsed);
          responseBytes += Buffer.byteLength(response.body);
          const reference = graph.upstream(id, options.depth);
          nodes += answer.nodes;
          referenceNodes += reference.nodes;
          if (answer.nodes !== reference.nodes) mismatches++;
          if (answer.jobHops >= options.depth) atFullDepth++;
        } catch (error) {
          tally.failure(error);
        }
      }
    });
    const window = { startUs, endUs: monotonicUs() };
    const cpu = stopCpu();
    const answered = Math.max(1, latencies.length);
    return {
      status: 'measured',
      graph: load,
      depth: options.depth,
      clients: options.clients,
      queries: latencies.length,
      latencyMs: percentiles(latencies),
      meanResponseBytes: responseBytes / answered,
      meanNodes: nodes / answered,
      meanReferenceNodes: referenceNodes / answered,
      mismatches,
      shareAtFullDepth: atFullDepth / answered,
      errors: tally.result,
      cpu,
      window,
    };
  } finally {
    client.close();
  }
}

function queryPath(graph: LayeredGraph, id: number, depth: number): string {
  const nodeId = encodeURIComponent(graph.datasetNodeId(id));
  return `/api/v1/lineage?nodeId=${nodeId}&depth=${depth}&direction=upstream`;
}

function loadGraph(server: ServerProcess, client: HttpClient, graph: LayeredGraph): Promise<GraphLoad> {
  return loadBatches(server, client, [() => graph.batches(LOAD_BATCH_EVENTS)], graph, 'the lineage graph');
}

/**
 * Sends generated batches through /api/v1/lineage/batch, phase after phase (a phase starts once the previous one
 * is acknowledged), from LOAD_SENDERS senders pulling from one generator, so batches go out in order, two at a
 * time. Throws if any batch fails.
 */
export async function loadBatches(
  server: ServerProcess,
  client: HttpClient,
  phases: readonly (() => Iterator<{ body: string }>)[],
  graph: { readonly datasetCount: number; readonly jobCount: number },
  what: string,
): Promise<GraphLoad> {
  const tally = new ErrorTally(server, 5);
  let events = 0;
  const startUs = monotonicUs();
  const startedAt = performance.now();
  for (const phase of phases) {
    const batches = phase();
    await runWorkers(LOAD_SENDERS, async () => {
      for (let next = batches.next(); !next.done && !tally.hopeless; next = batches.next()) {
        const summary = await postBatch(client, next.value.body, tally);
        events += summary?.successful ?? 0;
      }
    });
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const window = { startUs, endUs: monotonicUs() };
  if (tally.result.count > 0) {
    throw new Error(`Loading ${what} failed: ${tally.result.first ?? 'unknown error'}`);
  }
  return {
    datasets: graph.datasetCount,
    jobs: graph.jobCount,
    events,
    seconds,
    eventsPerSec: events / seconds,
    errors: tally.result,
    window,
  };
}

interface Answer {
  readonly nodes: number;
  /** Most jobs on a shortest upstream path from the start node within the answer. */
  readonly jobHops: number;
}

/** Reads a Marquez-shaped `{graph:[{id,type,inEdges,outEdges}]}` answer. */
function readAnswer(text: string, startId: string): Answer | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const nodes = (parsed as { graph?: unknown } | null)?.graph;
  if (!Array.isArray(nodes)) return undefined;
  // Walk the answer's own edges upstream from the start node, to check the depth really reached.
  const origins = new Map<string, string[]>();
  const isJob = new Set<string>();
  for (const node of nodes as { id?: unknown; type?: unknown; inEdges?: unknown }[]) {
    if (typeof node.id !== 'string') continue;
    if (node.type === 'JOB') isJob.add(node.id);
    const edges = Array.isArray(node.inEdges) ? (node.inEdges as { origin?: unknown }[]) : [];
    origins.set(
      node.id,
      edges.flatMap((edge) => (typeof edge.origin === 'string' ? [edge.origin] : [])),
    );
  }
  const hops = new Map<string, number>([[startId, 0]]);
  let frontier = [startId];
  let jobHops = 0;
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const origin of origins.get(id) ?? []) {
        if (hops.has(origin)) continue;
        const depth = hops.get(id)! + (isJob.has(origin) ? 1 : 0);
        hops.set(origin, depth);
        jobHops = Math.max(jobHops, depth);
        next.push(origin);
      }
    }
    frontier = next;
  }
  return { nodes: nodes.length, jobHops };
}
