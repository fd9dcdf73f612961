import { randomUUID } from 'node:crypto';
import { createRandom, type Random } from './random.js';

/** Options of {@link createLayeredGraph}. */
export interface LayeredGraphOptions {
  /** Datasets plus jobs, approximately (rounded to whole layers). */
  readonly nodes: number;
  /** Job layers. Layer 0 holds source datasets only; job layer k writes dataset layer k. */
  readonly layers: number;
  /** Seed of the input choices. @default 1 */
  readonly seed?: number;
  /** Namespace of every job and dataset. @default 'bench-graph' */
  readonly namespace?: string;
}

/** What a reference traversal of the generated graph reached. */
export interface ReferenceLineage {
  /** Datasets plus jobs, start node included: what the server's graph should hold. */
  readonly nodes: number;
  /** Longest chain of jobs reached, at most the depth asked for. */
  readonly jobHops: number;
  /** The jobs reached. */
  readonly jobs: ReadonlySet<number>;
}

/** The two datasets a job reads: the near one (layer k - 1, within ±1) and the other one. */
export type JobInputs = readonly [near: number, other: number];

/**
 * A generated job-level lineage graph: `layers + 1` layers of `width` datasets and `layers` layers of `width`
 * jobs. Job (k, i) writes dataset (k, i) and reads two datasets from earlier layers: one from layer k - 1 within
 * ±1 of position i, so that every dataset in layer k has a chain of exactly k jobs above it, and one within ±3
 * positions from layer k - 1 (80 %) or k - 2 (20 %), so that chains merge and fan out as warehouse pipelines do.
 * Locality keeps a depth-20 upstream walk to about a thousand nodes instead of the whole graph, and nearly every
 * walk from layer 20 or deeper really takes 20 job hops.
 */
export interface LayeredGraph {
  readonly namespace: string;
  readonly layers: number;
  readonly width: number;
  readonly datasetCount: number;
  readonly jobCount: number;
  /** The name of dataset `id` (id = layer × width + position). */
  datasetName(id: number): string;
  /** `dataset:<namespace>:<name>`, the Marquez node id of dataset `id`. */
  datasetNodeId(id: number): string;
  /** The name of job `job` (0 ≤ job < jobCount); it writes dataset `job + width`. */
  jobName(job: number): string;
  /** The datasets job `job` reads in the generated events. */
  inputsOf(job: number): JobInputs;
  /** COMPLETE RunEvents, one per job, in layer order, as JSON arrays of `batchSize` events. */
  batches(batchSize: number): Generator<{ body: string; events: number }>;
  /** Distinct datasets at least `minLayer` layers deep, chosen at random. */
  deepStarts(count: number, minLayer: number, random: Random): number[];
  /**
   * Brute-force upstream walk of `depth` jobs from dataset `id`, with the server's depth semantics. `inputsOf`
   * replaces the generated inputs of jobs, to walk the graph as later runs changed it.
   */
  upstream(id: number, depth: number, inputsOf?: (job: number) => JobInputs): ReferenceLineage;
}

const PRODUCER = 'https://github.com/OpenLineage/OpenLineage/tree/1.24.2/client/python';
const RUN_EVENT_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';

/** Generates the graph described at {@link LayeredGraph}. */
export function createLayeredGraph(options: LayeredGraphOptions): LayeredGraph {
  const layers = options.layers;
  const width = Math.max(8, Math.round(options.nodes / (2 * layers + 1)));
  const namespace = options.namespace ?? 'bench-graph';
  const random = createRandom(options.seed ?? 1);
  const datasetCount = (layers + 1) * width;
  const jobCount = layers * width;
  const wrap = (position: number) => ((position % width) + width) % width;
  // Two input dataset ids per job; job j = (k - 1) × width + i writes dataset j + width.
  const inputs = new Uint32Array(jobCount * 2);
  for (let job = 0; job < jobCount; job++) {
    const layer = Math.floor(job / width) + 1;
    const position = job % width;
    const near = (layer - 1) * width + wrap(position + random.int(3) - 1);
    // A skip of two layers now and then, as when a job joins a raw table with a derived one. Skips stay rare:
    // each one shortens the shortest path to everything behind it, and a depth-20 walk should still take 20 hops.
    const from = Math.max(0, layer - (random.next() < 0.2 ? 2 : 1));
    let other: number;
    do other = from * width + wrap(position + random.int(7) - 3);
    while (other === near);
    inputs[job * 2] = near;
    inputs[job * 2 + 1] = other;
  }
  const datasetName = (id: number) =>
    `warehouse.l${String(Math.floor(id / width)).padStart(2, '0')}.t${String(id % width).padStart(5, '0')}`;
  const jobName = (job: number) =>
    `etl.l${String(Math.floor(job / width) + 1).padStart(2, '0')}.job${String(job % width).padStart(5, '0')}`;
  const dataset = (id: number) => `{"namespace":"${namespace}","name":"${datasetName(id)}"}`;
  const baseTimeMs = Date.now() - 3_600_000;

  return {
    namespace,
    layers,
    width,
    datasetCount,
    jobCount,
    datasetName,
    datasetNodeId: (id) => `dataset:${namespace}:${datasetName(id)}`,
    jobName,
    inputsOf: (job) => [inputs[job * 2]!, inputs[job * 2 + 1]!],
    *batches(batchSize) {
      for (let first = 0; first < jobCount; first += batchSize) {
        const events: string[] = [];
        for (let job = first; job < Math.min(jobCount, first + batchSize); job++) {
          events.push(
            `{"eventType":"COMPLETE","eventTime":"${new Date(baseTimeMs + job).toISOString()}",` +
              `"run":{"runId":"${randomUUID()}"},"job":{"namespace":"${namespace}","name":"${jobName(job)}"},` +
              `"inputs":[${dataset(inputs[job * 2]!)},${dataset(inputs[job * 2 + 1]!)}],` +
              `"outputs":[${dataset(job + width)}],"producer":"${PRODUCER}","schemaURL":"${RUN_EVENT_SCHEMA}"}`,
          );
        }
        yield { body: `[${events.join(',')}]`, events: events.length };
      }
    },
    deepStarts(count, minLayer, pick) {
      const firstDeep = Math.min(minLayer, layers) * width;
      const candidates = datasetCount - firstDeep;
      const chosen = new Set<number>();
      while (chosen.size < Math.min(count, candidates)) chosen.add(firstDeep + pick.int(candidates));
      return [...chosen];
    },
    upstream(id, depth, inputsOf) {
      // Upstream of a dataset: its writer (dataset id - width, if not a source), then that job's inputs.
      const seenDatasets = new Set<number>([id]);
      const seenJobs = new Set<number>();
      let frontier = [id];
      let hops = 0;
      while (hops < depth && frontier.length > 0) {
        const next: number[] = [];
        let reachedJob = false;
        for (const datasetId of frontier) {
          if (datasetId < width) continue;
          const job = datasetId - width;
          if (seenJobs.has(job)) continue;
          seenJobs.add(job);
          reachedJob = true;
          for (const input of inputsOf ? inputsOf(job) : [inputs[job * 2]!, inputs[job * 2 + 1]!]) {
            if (seenDatasets.has(input)) continue;
            seenDatasets.add(input);
            next.push(input);
          }
        }
        if (!reachedJob) break;
        hops++;
        frontier = next;
      }
      return { nodes: seenDatasets.size + seenJobs.size, jobHops: hops, jobs: seenJobs };
    },
  };
}
