import { createAnalysisGraph, type AnalysisGraph, type Field } from './analysis-graph.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import { loadBatches, type GraphLoad } from './lineage-query.js';
import { ErrorTally, runWorkers, type ErrorCount } from './load.js';
import { createRandom, type Random } from './random.js';
import type { ServerProcess } from './server-process.js';
import {
  measureCpu,
  monotonicUs,
  percentiles,
  type CpuUse,
  type Percentiles,
  type TimeWindow,
} from './stats.js';

/** Options of {@link runAnalysisQueries}. */
export interface AnalysisOptions {
  /** Datasets plus jobs in the generated graph, approximately. */
  readonly graphNodes: number;
  /** Job layers of the generated graph. */
  readonly graphLayers: number;
  /** Depth of the depth-bounded questions (column paths, lineage as of a time, graph diff), in jobs. */
  readonly depth: number;
  /** Measured requests per endpoint (after a few unmeasured ones). */
  readonly queries: number;
  /** An endpoint's measured requests also stop after this many seconds. */
  readonly seconds: number;
  /** Concurrent closed-loop clients. */
  readonly clients: number;
  /** Seed of the graph, of the injected facts and of the start nodes. */
  readonly seed: number;
}

/** One endpoint's measurement. */
export type AnalysisEndpointResult =
  | {
      readonly status: 'unavailable';
      readonly key: string;
      readonly label: string;
      /** Why: the probe's HTTP status and message, or what showed the feature is missing. */
      readonly note: string;
    }
  | {
      readonly status: 'measured';
      readonly key: string;
      readonly label: string;
      /** What `meanSize` counts, e.g. "nodes". */
      readonly unit: string;
      readonly queries: number;
      /** Set when the time limit ended the measured requests before `queries` were sent. */
      readonly stoppedAfterSeconds: number | undefined;
      readonly latencyMs: Percentiles;
      /** Mean size of an answer's JSON body. */
      readonly meanResponseBytes: number;
      /** Mean of what each answer holds, in `unit`. */
      readonly meanSize: number;
      /** The same from the generated graph, where the harness can know it exactly. */
      readonly meanReference: number | undefined;
      /** Answers (status 200) that failed the check against the generated graph. */
      readonly failedChecks: number;
      readonly firstFailedCheck: string | undefined;
      readonly errors: ErrorCount;
      readonly cpu: CpuUse;
      readonly window: TimeWindow;
    };

/** What the analysis measurement found. */
export interface AnalysisResult {
  readonly graph: GraphLoad;
  /** Second runs (phase 2) among the loaded events. */
  readonly secondRunEvents: number;
  /** The time of the as-of questions: between the first runs and the second ones. */
  readonly asOf: string;
  readonly clients: number;
  readonly endpoints: readonly AnalysisEndpointResult[];
}

const LOAD_BATCH_EVENTS = 1000;
const LOAD_SENDERS = 2;
const WARMUP_REQUESTS = 5;
/** Layers "near the top" that impact starts from: the first written ones, so the downstream set is large. */
const TOP_LAYERS = [1, 3] as const;

/** A request and how to check its answer against the generated graph. */
interface Probe {
  readonly path: string;
  /** The answer's size (in the endpoint's unit), the reference size if known, and what is wrong, if anything. */
  check(answer: unknown): Check;
  /** For an endpoint being added, why a 200 answer still shows the feature is missing on this build. */
  missing?(answer: unknown): string | undefined;
}

interface Check {
  readonly size: number;
  readonly reference?: number;
  readonly problem?: string;
}

interface Endpoint {
  readonly key: string;
  readonly label: string;
  readonly unit: string;
  /** Being added on another branch: a 400 or 404 means "not on this build", not a failure. @default false */
  readonly optional?: boolean;
  readonly probes: readonly Probe[];
}

/**
 * Loads a generated layered graph with facts to find (failed runs, failing assertions, owners, schema changes,
 * rewired jobs: see analysis-graph.ts) through the batch API, then times each analysis endpoint in turn: a few
 * unmeasured requests, then `queries` requests (or `seconds`) from `clients` closed-loop clients, from start nodes
 * picked with a seeded random. Every answer is checked against the generated graph: timing empty or wrong answers
 * would say nothing.
 */
export async function runAnalysisQueries(
  server: ServerProcess,
  options: AnalysisOptions,
): Promise<AnalysisResult> {
  const graph = createAnalysisGraph({
    nodes: options.graphNodes,
    layers: options.graphLayers,
    seed: options.seed,
  });
  const client = createHttpClient(server.url, { maxSockets: Math.max(LOAD_SENDERS, options.clients) });
  try {
    const load = await loadAnalysisGraph(server, client, graph);
    const endpoints = buildEndpoints(graph, options, createRandom(options.seed + 2));
    const results: AnalysisEndpointResult[] = [];
    for (const endpoint of endpoints) {
      if (server.exited !== undefined) break;
      results.push(await measureEndpoint(server, client, endpoint, options));
    }
    return {
      graph: load,
      secondRunEvents: graph.phaseEvents[1],
      asOf: new Date(graph.asOfMs).toISOString(),
      clients: options.clients,
      endpoints: results,
    };
  } finally {
    client.close();
  }
}

function loadAnalysisGraph(
  server: ServerProcess,
  client: HttpClient,
  graph: AnalysisGraph,
): Promise<GraphLoad> {
  // The second runs go once the first ones are committed: they retire edges and add versions the first made.
  return loadBatches(
    server,
    client,
    [1, 2].map((phase) => () => graph.batches(phase as 1 | 2, LOAD_BATCH_EVENTS)),
    graph,
    'the analysis graph',
  );
}

async function measureEndpoint(
  server: ServerProcess,
  client: HttpClient,
  endpoint: Endpoint,
  options: AnalysisOptions,
): Promise<AnalysisEndpointResult> {
  const { key, label } = endpoint;
  const warmup = endpoint.probes.slice(0, WARMUP_REQUESTS);
  const measured = endpoint.probes.slice(WARMUP_REQUESTS);
  const first = warmup[0];
  if (first === undefined) {
    throw new Error(`The generated graph has no start node for ${label}; use a larger --analysis-nodes.`);
  }
  const warmupTally = new ErrorTally(server);
  // The first warm-up request tells whether an endpoint being added exists on this build.
  const probe = await client.get(first.path).catch((error: unknown) => warmupTally.failure(error));
  if (probe && endpoint.optional === true) {
    if (probe.status === 400 || probe.status === 404) {
      return { status: 'unavailable', key, label, note: `HTTP ${probe.status}: ${oneLine(probe.body, 160)}` };
    }
    const note = probe.status === 200 ? first.missing?.(parse(probe.body)) : undefined;
    if (note !== undefined) return { status: 'unavailable', key, label, note };
  }

  let cursor = 1;
  await runWorkers(options.clients, async () => {
    while (cursor < warmup.length && !warmupTally.hopeless) {
      const next = warmup[cursor++]!;
      await client.get(next.path).catch((error: unknown) => warmupTally.failure(error));
    }
  });

  const tally = new ErrorTally(server, 20);
  const latencies: number[] = [];
  let responseBytes = 0;
  let size = 0;
  let reference = 0;
  let referenced = 0;
  let failedChecks = 0;
  let firstFailedCheck: string | undefined;
  cursor = 0;
  const stopCpu = measureCpu(server);
  const startUs = monotonicUs();
  const startedAt = performance.now();
  const deadline = startedAt + options.seconds * 1000;
  let timedOut = false;
  await runWorkers(options.clients, async () => {
    while (cursor < measured.length && !tally.hopeless) {
      if (performance.now() >= deadline) {
        timedOut = true;
        break;
      }
      const next = measured[cursor++]!;
      const sentAt = performance.now();
      try {
        const response = await client.get(next.path);
        const elapsed = performance.now() - sentAt;
        if (response.status !== 200) {
          tally.response(response.status, response.body);
          continue;
        }
        latencies.push(elapsed);
        responseBytes += Buffer.byteLength(response.body);
        const check = next.check(parse(response.body));
        size += check.size;
        if (check.reference !== undefined) {
          reference += check.reference;
          referenced++;
        }
        if (check.problem !== undefined) {
          failedChecks++;
          firstFailedCheck ??= check.problem;
        }
      } catch (error) {
        tally.failure(error);
      }
    }
  });
  const seconds = (performance.now() - startedAt) / 1000;
  const window = { startUs, endUs: monotonicUs() };
  const cpu = stopCpu();
  const answered = Math.max(1, latencies.length);
  return {
    status: 'measured',
    key,
    label,
    unit: endpoint.unit,
    queries: latencies.length,
    stoppedAfterSeconds: timedOut ? seconds : undefined,
    latencyMs: percentiles(latencies),
    meanResponseBytes: responseBytes / answered,
    meanSize: size / answered,
    meanReference: referenced > 0 ? reference / referenced : undefined,
    failedChecks,
    firstFailedCheck,
    errors: tally.result,
    cpu,
    window,
  };
}

/** The answers' JSON; undefined when a body is not JSON (the check then reports it). */
function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const oneLine = (text: string, max: number) => text.replace(/\s+/g, ' ').slice(0, max);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const arrayAt = (value: unknown, key: string): unknown[] | undefined => {
  const found = isObject(value) ? value[key] : undefined;
  return Array.isArray(found) ? found : undefined;
};
const stringsAt = (items: readonly unknown[], key: string): string[] =>
  items.flatMap((item) => (isObject(item) && typeof item[key] === 'string' ? [item[key]] : []));
const notAnswer = (what: string, answer: unknown): Check => ({
  size: 0,
  problem: `not ${what}: ${oneLine(JSON.stringify(answer) ?? 'not JSON', 160)}`,
});
const sameSet = (a: readonly string[], b: ReadonlySet<string>) =>
  new Set(a).size === b.size && a.every((item) => b.has(item));
const enc = encodeURIComponent;

/** Repeats `items` in random order until there are `count`: fewer candidates than requests is fine. */
function cycle<T>(items: readonly T[], count: number, random: Random): T[] {
  if (items.length === 0) return [];
  const shuffled = [...items];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return Array.from({ length: count }, (_, index) => shuffled[index % shuffled.length]!);
}

/** Datasets in layers [from, to] that pass `accept`, at random; gives up on `accept` after many tries. */
function pickWhere(
  graph: AnalysisGraph,
  count: number,
  layers: readonly [number, number],
  random: Random,
  accept: (dataset: number) => boolean,
): number[] {
  const picked: number[] = [];
  for (let tries = 0; picked.length < count && tries < 50; tries++) {
    for (const dataset of graph.pickDatasets(count, layers[0], layers[1], random)) {
      if (picked.length < count && accept(dataset)) picked.push(dataset);
    }
  }
  return picked;
}

/** The endpoints, each with warm-up plus measured requests from seeded random start nodes. */
function buildEndpoints(graph: AnalysisGraph, options: AnalysisOptions, random: Random): Endpoint[] {
  const count = WARMUP_REQUESTS + options.queries;
  const { structure } = graph;
  const layers = structure.layers;
  // "Deep": at least `depth` jobs upstream, as in the lineage measurement (the lower half of a shallower graph).
  const deep: [number, number] = [layers >= options.depth ? options.depth : Math.ceil(layers / 2), layers];
  const top: [number, number] = [TOP_LAYERS[0], Math.min(TOP_LAYERS[1], layers)];
  const asOf = new Date(graph.asOfMs).toISOString();
  const end = new Date(graph.endMs).toISOString();
  const datasetId = (id: number) => structure.datasetNodeId(id);
  const depth = options.depth;

  const rootCause = pickWhere(graph, count, deep, random, (id) =>
    graph.upstreamAll(id).jobs.some((job) => graph.failed(job)),
  ).map((id): Probe => {
    const upstream = graph.upstreamAll(id);
    const failedRuns = new Set(
      upstream.jobs.filter((job) => graph.failed(job)).map((job) => graph.jobNodeId(job)),
    );
    const failing = new Set(upstream.datasets.filter((d) => graph.failingAssertions(d)).map(datasetId));
    return {
      path: `/api/v1/analysis/root-cause?nodeId=${enc(datasetId(id))}`,
      check(answer) {
        const causes = arrayAt(answer, 'causes');
        const checked = isObject(answer) ? answer.checked : undefined;
        if (!causes || !isObject(checked)) return notAnswer('a root-cause answer', answer);
        const of = (kind: string) =>
          stringsAt(
            causes.filter((cause) => isObject(cause) && cause.kind === kind),
            'nodeId',
          );
        const runs = of('failedRun');
        const assertions = of('failedAssertion');
        const reference = failedRuns.size + failing.size;
        const size = runs.length + assertions.length;
        const problems: string[] = [];
        if (!sameSet(runs, failedRuns)) {
          problems.push(`failed runs: ${runs.length} reported, ${failedRuns.size} injected upstream`);
        }
        if (!sameSet(assertions, failing)) {
          problems.push(
            `failing assertions: ${assertions.length} reported, ${failing.size} injected upstream`,
          );
        }
        if (checked.datasets !== upstream.datasets.length || checked.jobs !== upstream.jobs.length) {
          problems.push(
            `checked ${String(checked.datasets)} datasets + ${String(checked.jobs)} jobs, upstream holds ` +
              `${upstream.datasets.length} + ${upstream.jobs.length}`,
          );
        }
        return problems.length === 0
          ? { size, reference }
          : { size, reference, problem: `root cause of ${datasetId(id)}: ${problems.join('; ')}` };
      },
    };
  });

  const ownersOf = (datasets: readonly number[], jobs: readonly number[]) =>
    new Set(
      [
        ...datasets.map((d) => graph.ownerOf('dataset', d)),
        ...jobs.map((job) => graph.ownerOf('job', job)),
      ].filter((owner) => owner !== undefined),
    );
  // Near the top, datasets nothing reads are rare but exist: an impact of nothing would time an empty answer.
  const impact = pickWhere(graph, count, top, random, (id) => graph.downstreamAll(id).jobs.length > 0).map(
    (id): Probe => {
      const downstream = graph.downstreamAll(id);
      const nodes = downstream.datasets.length + downstream.jobs.length;
      const owners = ownersOf(downstream.datasets, downstream.jobs);
      return {
        path: `/api/v1/analysis/impact?nodeId=${enc(datasetId(id))}`,
        check(answer) {
          const reached = arrayAt(answer, 'nodes');
          const rollup = arrayAt(answer, 'owners');
          if (!reached || !rollup) return notAnswer('an impact answer', answer);
          const named = stringsAt(rollup, 'name');
          const problems: string[] = [];
          if (reached.length !== nodes) problems.push(`${reached.length} nodes, ${nodes} downstream`);
          if (!sameSet(named, owners))
            problems.push(`${named.length} owners, ${owners.size} own a downstream node`);
          return {
            size: reached.length,
            reference: nodes,
            ...(problems.length > 0 ? { problem: `impact of ${datasetId(id)}: ${problems.join('; ')}` } : {}),
          };
        },
      };
    },
  );

  // A column summed from both inputs: removing it breaks everything downstream that reads it.
  const wideField: Field = 'amount';
  const impactColumn = pickWhere(
    graph,
    count,
    top,
    random,
    (id) => graph.columnWalk(id, wideField, 'downstream').columns > 0,
  ).map((id): Probe => {
    const reach = graph.columnWalk(id, wideField, 'downstream');
    const nodeId = graph.fieldNodeId(id, wideField);
    return {
      path: `/api/v1/analysis/impact?nodeId=${enc(nodeId)}&change=removed`,
      check(answer) {
        const reached = arrayAt(answer, 'nodes');
        if (!reached || !isObject(answer)) return notAnswer('an impact answer', answer);
        const datasets = reached.filter((node) => isObject(node) && node.kind === 'dataset').length;
        const problems: string[] = [];
        if (datasets !== reach.datasets.size) {
          problems.push(`${datasets} datasets, ${reach.datasets.size} hold a downstream column`);
        }
        if (reach.columns > 0 && answer.breaking !== true) problems.push('not breaking');
        return {
          size: datasets,
          reference: reach.datasets.size,
          ...(problems.length > 0 ? { problem: `impact of ${nodeId}: ${problems.join('; ')}` } : {}),
        };
      },
    };
  });

  const schemaChanged = graph.rerunJobs('schemaChange').map((job) => job + structure.width);
  const schemaDiff = cycle(schemaChanged, count, random).map((id): Probe => {
    // `id` changed type and `updated_at` was removed; both columns come from the near input alone.
    const reach = 2 * graph.columnWalk(id, 'id', 'downstream').columns;
    return {
      path: `/api/v1/analysis/schema-diff?dataset=${enc(datasetId(id))}`,
      check(answer) {
        const reached = arrayAt(answer, 'reach');
        const removed = stringsAt(arrayAt(answer, 'removed') ?? [], 'name');
        const typeChanged = stringsAt(arrayAt(answer, 'typeChanged') ?? [], 'name');
        const added = stringsAt(arrayAt(answer, 'added') ?? [], 'name');
        if (!reached) return notAnswer('a schema-diff answer', answer);
        const problems: string[] = [];
        if (removed.join() !== 'updated_at' || typeChanged.join() !== 'id' || added.join() !== 'note') {
          problems.push(
            `removed [${removed.join()}], type changed [${typeChanged.join()}], added [${added.join()}]; ` +
              'expected [updated_at], [id], [note]',
          );
        }
        if (reached.length !== reach) problems.push(`reach ${reached.length} columns, ${reach} downstream`);
        return {
          size: reached.length,
          reference: reach,
          ...(problems.length > 0
            ? { problem: `schema diff of ${datasetId(id)}: ${problems.join('; ')}` }
            : {}),
        };
      },
    };
  });

  const runDiff = cycle(graph.rerunJobs(), count, random).map((job): Probe => {
    const runs = graph.runIds(job)!;
    const kind = graph.rerunKind(job)!;
    const [near, other] = structure.inputsOf(job);
    const rewiredTo = graph.inputsNow(job)[1];
    return {
      path: `/api/v1/analysis/run-diff?from=${runs.first}&to=${runs.second}`,
      check(answer) {
        if (!isObject(answer) || !isObject(answer.from) || !isObject(answer.to) || !isObject(answer.edges)) {
          return notAnswer('a run-diff answer', answer);
        }
        const outputs = arrayAt(answer, 'outputs') ?? [];
        const inputs = arrayAt(answer, 'inputs') ?? [];
        const added = arrayAt(answer.edges, 'added') ?? [];
        const removed = arrayAt(answer.edges, 'removed') ?? [];
        const changed = [...inputs, ...outputs].filter(
          (entry) => isObject(entry) && entry.status !== 'unchanged',
        ).length;
        const size = changed + (answer.from.state !== answer.to.state ? 1 : 0);
        let problem: string | undefined;
        if (answer.sameJob !== true) problem = 'sameJob is not true';
        else if (kind === 'failed' && answer.to.state !== 'FAILED') {
          problem = `the second run is ${String(answer.to.state)}, not FAILED`;
        } else if (kind === 'schemaChange') {
          const output = outputs[0];
          if (
            outputs.length !== 1 ||
            !isObject(output) ||
            output.status !== 'versionChanged' ||
            !isObject(output.schemaChange) ||
            output.schemaChange.breaking !== true
          ) {
            problem = 'the output is not reported as a breaking version change';
          }
        } else if (kind === 'rewired') {
          const names = (list: unknown[]) => stringsAt(list, 'dataset').join();
          if (names(added) !== datasetId(rewiredTo) || names(removed) !== datasetId(other)) {
            problem =
              `edges added [${names(added)}], removed [${names(removed)}]; expected ` +
              `[${datasetId(rewiredTo)}], [${datasetId(other)}] (near input ${datasetId(near)} kept)`;
          }
        }
        return problem === undefined
          ? { size }
          : { size, problem: `run diff of ${graph.jobNodeId(job)} (${kind}): ${problem}` };
      },
    };
  });

  const columnPaths = graph.pickDatasets(count, deep[0], deep[1], random).map((id): Probe => {
    const reach = graph.columnWalk(id, wideField, 'upstream', depth).columns;
    const nodeId = graph.fieldNodeId(id, wideField);
    return {
      path: `/api/v1/analysis/column-paths?nodeId=${enc(nodeId)}&direction=upstream&depth=${depth}`,
      check(answer) {
        const columns = arrayAt(answer, 'columns');
        if (!columns) return notAnswer('a column-paths answer', answer);
        const problems: string[] = [];
        if (columns.length !== reach) problems.push(`${columns.length} columns, ${reach} upstream`);
        if (reach === 0) problems.push('nothing upstream (a harness bug)');
        return {
          size: columns.length,
          reference: reach,
          ...(problems.length > 0 ? { problem: `column paths of ${nodeId}: ${problems.join('; ')}` } : {}),
        };
      },
    };
  });

  // As of a time between the two phases the lineage is phase 1's: pick starts where it differs from now.
  const inputsNow = (job: number) => graph.inputsNow(job);
  const lineageThen = new Map<number, number>();
  const lineageNow = new Map<number, number>();
  const asOfStarts = pickWhere(graph, count, deep, random, (id) => {
    const then = structure.upstream(id, depth).nodes;
    const now = structure.upstream(id, depth, inputsNow).nodes;
    lineageThen.set(id, then);
    lineageNow.set(id, now);
    return then !== now;
  });
  const lineageAsOf = asOfStarts.map((id): Probe => ({
    missing(answer) {
      // A build without time travel ignores the unknown parameter and answers with the current graph.
      const nodes = arrayAt(answer, 'graph')?.length;
      return nodes === lineageNow.get(id) && nodes !== lineageThen.get(id)
        ? 'asOf is ignored on this build (the answer is the current graph)'
        : undefined;
    },
    path:
      `/api/v1/lineage?nodeId=${enc(datasetId(id))}&depth=${depth}&direction=upstream` + `&asOf=${enc(asOf)}`,
    check(answer) {
      const nodes = arrayAt(answer, 'graph');
      if (!nodes) return notAnswer('a {graph:[...]} answer', answer);
      const then = lineageThen.get(id)!;
      if (nodes.length === then) return { size: nodes.length, reference: then };
      const now = lineageNow.get(id)!;
      return {
        size: nodes.length,
        reference: then,
        problem:
          `lineage of ${datasetId(id)} as of ${asOf}: ${nodes.length} nodes, ${then} then` +
          (nodes.length === now ? ' (the current graph)' : ` (${now} now)`),
      };
    },
  }));

  // Graph diff between then and now: starts whose depth-bounded upstream passes a job that changed inputs.
  const graphDiffStarts = pickWhere(graph, count, deep, random, (id) => {
    const jobs = [...structure.upstream(id, depth).jobs, ...structure.upstream(id, depth, inputsNow).jobs];
    return jobs.some((job) => graph.rerunKind(job) === 'rewired');
  });
  const graphDiff = graphDiffStarts.map((id): Probe => ({
    path:
      `/api/v1/analysis/graph-diff?nodeId=${enc(datasetId(id))}&from=${enc(asOf)}&to=${enc(end)}` +
      `&depth=${depth}&direction=upstream`,
    check(answer) {
      if (!isObject(answer)) return notAnswer('a graph-diff answer', answer);
      const changes = countChanges(answer);
      return changes > 0
        ? { size: changes }
        : {
            size: 0,
            problem: `graph diff of ${datasetId(id)}: nothing added or removed, but a job upstream changed inputs`,
          };
    },
  }));

  return [
    {
      key: 'rootCause',
      label: 'root cause, deep dataset',
      unit: 'injected failures found',
      probes: rootCause,
    },
    { key: 'impact', label: 'impact, dataset near the top', unit: 'nodes', probes: impact },
    {
      key: 'impactColumn',
      label: `impact, column ${wideField} removed`,
      unit: 'datasets',
      probes: impactColumn,
    },
    { key: 'schemaDiff', label: 'schema diff, two versions', unit: 'columns reached', probes: schemaDiff },
    { key: 'runDiff', label: 'run diff, two runs of a job', unit: 'differences', probes: runDiff },
    {
      key: 'columnPaths',
      label: `column paths, depth ${depth} upstream`,
      unit: 'columns',
      probes: columnPaths,
    },
    {
      key: 'lineageAsOf',
      label: `lineage as of a time, depth ${depth}`,
      unit: 'nodes',
      optional: true,
      probes: lineageAsOf,
    },
    {
      key: 'graphDiff',
      label: `graph diff, depth ${depth} upstream`,
      unit: 'changes',
      optional: true,
      probes: graphDiff,
    },
  ];
}

/**
 * Entries of every array under a key that says added or removed (`added`, `removedEdges`, ...), anywhere in
 * the answer: the graph-diff answer's exact shape is not settled yet.
 */
function countChanges(value: unknown): number {
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + countChanges(item), 0);
  if (!isObject(value)) return 0;
  let total = 0;
  for (const [key, item] of Object.entries(value)) {
    if (Array.isArray(item) && /added|removed/i.test(key)) total += item.length;
    else if (typeof item === 'object') total += countChanges(item);
  }
  return total;
}
