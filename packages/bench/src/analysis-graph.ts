import { randomUUID } from 'node:crypto';
import { createLayeredGraph, type JobInputs, type LayeredGraph } from './layered-graph.js';
import { createRandom, type Random } from './random.js';

/** Options of {@link createAnalysisGraph}. */
export interface AnalysisGraphOptions {
  /** Datasets plus jobs, approximately (rounded to whole layers). */
  readonly nodes: number;
  /** Job layers. */
  readonly layers: number;
  /** Seed of the graph (the same structure as the lineage measurement's for the same seed) and of the facts. */
  readonly seed: number;
  /** Namespace of every job and dataset. @default 'bench-analysis' */
  readonly namespace?: string;
  /** The clock, so that every event time lies in the past. @default Date.now() */
  readonly nowMs?: number;
}

/** What a job's second run is, if it has one. */
export type RerunKind = 'failed' | 'schemaChange' | 'rewired';

/** The columns of every written dataset. `amount` sums both inputs; the other columns come from one input. */
export type Field = 'id' | 'key' | 'amount' | 'updated_at' | 'note';

/** What a reference walk of the job graph reached (start excluded unless said otherwise). */
export interface ReachedNodes {
  readonly datasets: readonly number[];
  readonly jobs: readonly number[];
}

/** What a reference walk of the column graph reached, the start column excluded. */
export interface ReachedColumns {
  readonly columns: number;
  /** Datasets holding a reached column (a walk keeps to one field, so never the start's dataset). */
  readonly datasets: ReadonlySet<number>;
}

/**
 * The layered graph of layered-graph.ts (same seed, same structure), loaded as an OpenLineage producer with
 * facets would send it, with facts for the analysis endpoints to find, in two phases of event time:
 *
 * 1. one COMPLETE per job, in layer order: schema facets (4 columns) on inputs and output, a columnLineage facet
 *    on the output (`id` and `updated_at` from the near input, `key` from the other, `amount` summed from both),
 *    ownership facets on 30 % of jobs and 30 % of written datasets, and a failing dataQualityAssertions input
 *    facet from 1 % of jobs on the near dataset they read;
 * 2. a day later, a second run (START, then COMPLETE or FAIL 10 minutes later) of 7 % of jobs: 1 % FAIL with an
 *    errorMessage facet; 3 % write a changed schema (`id` becomes a string, `updated_at` is dropped, `note`
 *    added: a breaking change whose reach follows the one-input columns); 3 % read another dataset instead of
 *    their `other` one, so that edges are added and retired and the lineage as of phase 1 differs from now.
 *
 * The reference walks answer what the server should: the job graph as it is now (rewired inputs), the column
 * graph as the union of every columnLineage facet sent (the server never retires column edges).
 */
export interface AnalysisGraph {
  readonly structure: LayeredGraph;
  readonly namespace: string;
  readonly datasetCount: number;
  readonly jobCount: number;
  /** Events of each phase. */
  readonly phaseEvents: readonly [number, number];
  /** A time between the two phases: the lineage then is phase 1's. */
  readonly asOfMs: number;
  /** A time after every event. */
  readonly endMs: number;
  /** COMPLETE events of phase 1 or the second runs of phase 2, as JSON arrays of at most `batchSize` events. */
  batches(phase: 1 | 2, batchSize: number): Generator<{ body: string; events: number }>;
  jobNodeId(job: number): string;
  fieldNodeId(dataset: number, field: Field): string;
  /** Jobs with a second run, of one kind or of any. */
  rerunJobs(kind?: RerunKind): readonly number[];
  rerunKind(job: number): RerunKind | undefined;
  /** The run ids of a job with a second run. */
  runIds(job: number): { readonly first: string; readonly second: string } | undefined;
  /** True when the job's latest run FAILED. */
  failed(job: number): boolean;
  /** True when the latest assertions on the dataset include a failure. */
  failingAssertions(dataset: number): boolean;
  /** The owner in the latest ownership facet of a job or dataset, if any. */
  ownerOf(kind: 'job' | 'dataset', id: number): string | undefined;
  /** The inputs of a job now (after the second runs). */
  inputsNow(job: number): JobInputs;
  /** Everything upstream of a dataset now, the dataset included, at any distance. */
  upstreamAll(dataset: number): ReachedNodes;
  /** Everything downstream of a dataset now, at any distance. */
  downstreamAll(dataset: number): ReachedNodes;
  /** Columns upstream or downstream of a column, at most `maxDepth` hops away. */
  columnWalk(
    dataset: number,
    field: Field,
    direction: 'upstream' | 'downstream',
    maxDepth?: number,
  ): ReachedColumns;
  /** Datasets in layers [from, to], at random: distinct while there are enough, then repeating. */
  pickDatasets(count: number, fromLayer: number, toLayer: number, random: Random): number[];
}

const PRODUCER = 'https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/spark';
const RUN_EVENT_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const OWNERS = 12;
const SHARE = { failed: 0.01, schemaChange: 0.03, rewired: 0.03, assertion: 0.01, owned: 0.3 } as const;
const PHASE_1_STEP_MS = 1000;
const DAY_MS = 86_400_000;
const RUN_MS = 600_000;

const facet = (name: string, version: string, body: string) =>
  `{"_producer":"${PRODUCER}",` +
  `"_schemaURL":"https://openlineage.io/spec/facets/${version}/${name}.json#/$defs/${name}",${body}}`;

const SCHEMA_V1 = facet(
  'SchemaDatasetFacet',
  '1-2-0',
  '"fields":[{"name":"id","type":"bigint"},{"name":"key","type":"string"},' +
    '{"name":"amount","type":"decimal(18,2)"},{"name":"updated_at","type":"timestamp"}]',
);
const SCHEMA_V2 = facet(
  'SchemaDatasetFacet',
  '1-2-0',
  '"fields":[{"name":"id","type":"string"},{"name":"key","type":"string"},' +
    '{"name":"amount","type":"decimal(18,2)"},{"name":"note","type":"string"}]',
);
const ownership = (kind: 'Job' | 'Dataset', owner: number) =>
  facet(
    `Ownership${kind}Facet`,
    '1-0-1',
    `"owners":[{"name":"team:squad-${owner}","type":"${kind === 'Job' ? 'MAINTAINER' : 'OWNER'}"}]`,
  );
const STACK_TRACE =
  'org.apache.spark.SparkException: Job aborted.\\n' +
  '\\tat org.apache.spark.sql.execution.datasources.FileFormatWriter$.write(FileFormatWriter.scala:251)';
const FAILING_ASSERTIONS = facet(
  'DataQualityAssertionsDatasetFacet',
  '1-0-1',
  '"assertions":[{"assertion":"not_null","success":true,"column":"id"},' +
    '{"assertion":"unique","success":false,"column":"id","severity":"error","expected":"0","actual":"17"}]',
);

/** Generates the graph and facts described at {@link AnalysisGraph}. */
export function createAnalysisGraph(options: AnalysisGraphOptions): AnalysisGraph {
  const namespace = options.namespace ?? 'bench-analysis';
  const structure = createLayeredGraph({
    nodes: options.nodes,
    layers: options.layers,
    seed: options.seed,
    namespace,
  });
  const { width, datasetCount, jobCount } = structure;
  const datasetName = (id: number) => structure.datasetName(id);
  const jobName = (job: number) => structure.jobName(job);
  const inputsOf = (job: number) => structure.inputsOf(job);
  // A random stream of its own: the structure stays the lineage measurement's.
  const random = createRandom(options.seed * 7919 + 17);
  const kinds = new Uint8Array(jobCount); // 0: one run; 1, 2, 3: RERUN_KINDS[k - 1]
  const RERUN_KINDS: readonly RerunKind[] = ['failed', 'schemaChange', 'rewired'];
  const newOther = new Int32Array(jobCount).fill(-1);
  const assertingJob = new Uint8Array(jobCount);
  const jobOwner = new Int8Array(jobCount).fill(-1);
  const datasetOwner = new Int8Array(datasetCount).fill(-1);
  const wrap = (position: number) => ((position % width) + width) % width;
  for (let job = 0; job < jobCount; job++) {
    const roll = random.next();
    if (roll < SHARE.failed) kinds[job] = 1;
    else if (roll < SHARE.failed + SHARE.schemaChange) kinds[job] = 2;
    else if (roll < SHARE.failed + SHARE.schemaChange + SHARE.rewired) {
      const [near, other] = inputsOf(job);
      const layer = Math.floor(job / width);
      let replacement: number;
      do replacement = layer * width + wrap((job % width) + random.int(7) - 3);
      while (replacement === near || replacement === other);
      kinds[job] = 3;
      newOther[job] = replacement;
    }
    if (random.next() < SHARE.assertion) assertingJob[job] = 1;
    if (random.next() < SHARE.owned) jobOwner[job] = random.int(OWNERS);
    if (random.next() < SHARE.owned) datasetOwner[job + width] = random.int(OWNERS);
  }
  const failingDataset = new Uint8Array(datasetCount);
  for (let job = 0; job < jobCount; job++) if (assertingJob[job]) failingDataset[inputsOf(job)[0]] = 1;
  const runs = new Map<number, { first: string; second: string }>();
  const reruns: number[] = [];
  for (let job = 0; job < jobCount; job++) {
    if (kinds[job] === 0) continue;
    reruns.push(job);
    runs.set(job, { first: randomUUID(), second: randomUUID() });
  }
  const inputsNow = (job: number): JobInputs => {
    const [near, other] = inputsOf(job);
    return newOther[job]! >= 0 ? [near, newOther[job]!] : [near, other];
  };

  // Readers now (job graph) and readers ever (column graph), as CSR arrays: dataset -> jobs.
  const csr = (pairs: (add: (dataset: number, job: number) => void) => void) => {
    const counts = new Uint32Array(datasetCount + 1);
    pairs((dataset) => counts[dataset + 1]!++);
    for (let i = 0; i < datasetCount; i++) counts[i + 1]! += counts[i]!;
    const fill = counts.slice(0, datasetCount);
    const jobs = new Uint32Array(counts[datasetCount]!);
    pairs((dataset, job) => (jobs[fill[dataset]!++] = job));
    return (dataset: number) => jobs.subarray(counts[dataset], counts[dataset + 1]);
  };
  const readersNow = csr((add) => {
    for (let job = 0; job < jobCount; job++) for (const input of inputsNow(job)) add(input, job);
  });
  const nearReaders = csr((add) => {
    for (let job = 0; job < jobCount; job++) add(inputsOf(job)[0], job);
  });
  const otherReaders = csr((add) => {
    for (let job = 0; job < jobCount; job++) {
      add(inputsOf(job)[1], job);
      if (newOther[job]! >= 0) add(newOther[job]!, job);
    }
  });
  const columnInputs = (dataset: number, field: Field): number[] => {
    if (dataset < width) return [];
    const job = dataset - width;
    const [near, other] = inputsOf(job);
    const others = newOther[job]! >= 0 ? [other, newOther[job]!] : [other];
    if (field === 'id' || field === 'updated_at') return [near];
    if (field === 'key') return others;
    if (field === 'amount') return [near, ...others];
    return [];
  };
  const columnOutputs = (dataset: number, field: Field): number[] => {
    const writes = (jobs: Uint32Array) => Array.from(jobs, (job) => job + width);
    if (field === 'id' || field === 'updated_at') return writes(nearReaders(dataset));
    if (field === 'key') return writes(otherReaders(dataset));
    if (field === 'amount')
      return [...new Set([...writes(nearReaders(dataset)), ...writes(otherReaders(dataset))])];
    return [];
  };

  const nowMs = options.nowMs ?? Date.now();
  const phase1Ms = nowMs - 3 * DAY_MS;
  const phase1EndMs = phase1Ms + jobCount * PHASE_1_STEP_MS;
  const phase2Ms = phase1EndMs + DAY_MS;
  const rerunStepMs = Math.max(1, Math.floor(DAY_MS / Math.max(1, reruns.length)));
  const iso = (ms: number) => new Date(ms).toISOString();
  const ref = (dataset: number, body?: string) =>
    `{"namespace":"${namespace}","name":"${datasetName(dataset)}"${body ? `,${body}` : ''}}`;
  const jobJson = (job: number) => {
    const owner = jobOwner[job]!;
    const facets = owner >= 0 ? `,"facets":{"ownership":${ownership('Job', owner)}}` : '';
    return `{"namespace":"${namespace}","name":"${jobName(job)}"${facets}}`;
  };
  const columnLineage = (dataset: number, inputs: JobInputs, schema: 1 | 2) => {
    const [near, other] = inputs;
    const input = (from: number, field: Field, subtype: string, description?: string) =>
      `{"namespace":"${namespace}","name":"${datasetName(from)}","field":"${field}","transformations":` +
      `[{"type":"DIRECT","subtype":"${subtype}"${description ? `,"description":"${description}"` : ''}}]}`;
    const fields = [
      `"id":{"inputFields":[${input(near, 'id', 'IDENTITY')}]}`,
      `"key":{"inputFields":[${input(other, 'key', 'IDENTITY')}]}`,
      `"amount":{"inputFields":[${input(near, 'amount', 'AGGREGATION', 'sum(amount)')},` +
        `${input(other, 'amount', 'AGGREGATION', 'sum(amount)')}]}`,
    ];
    if (schema === 1) fields.push(`"updated_at":{"inputFields":[${input(near, 'updated_at', 'IDENTITY')}]}`);
    const owner = datasetOwner[dataset]!;
    const lineage = facet('ColumnLineageDatasetFacet', '1-2-0', `"fields":{${fields.join(',')}}`);
    return (
      `"facets":{"schema":${schema === 1 ? SCHEMA_V1 : SCHEMA_V2},"columnLineage":${lineage}` +
      `${owner >= 0 ? `,"ownership":${ownership('Dataset', owner)}` : ''}}`
    );
  };
  const event = (
    type: string,
    timeMs: number,
    runId: string,
    job: number,
    inputs: string,
    outputs: string,
    runFacets = '',
  ) =>
    `{"eventType":"${type}","eventTime":"${iso(timeMs)}","run":{"runId":"${runId}"${runFacets}},` +
    `"job":${jobJson(job)},"inputs":[${inputs}],"outputs":[${outputs}],` +
    `"producer":"${PRODUCER}","schemaURL":"${RUN_EVENT_SCHEMA}"}`;

  const phase1 = (job: number): string[] => {
    const [near, other] = inputsOf(job);
    const output = job + width;
    const nearBody =
      `"facets":{"schema":${SCHEMA_V1}}` +
      (assertingJob[job] ? `,"inputFacets":{"dataQualityAssertions":${FAILING_ASSERTIONS}}` : '');
    return [
      event(
        'COMPLETE',
        phase1Ms + job * PHASE_1_STEP_MS,
        runs.get(job)?.first ?? randomUUID(),
        job,
        `${ref(near, nearBody)},${ref(other, `"facets":{"schema":${SCHEMA_V1}}`)}`,
        ref(output, columnLineage(output, [near, other], 1)),
      ),
    ];
  };
  const phase2 = (job: number, rank: number): string[] => {
    const kind = RERUN_KINDS[kinds[job]! - 1]!;
    const runId = runs.get(job)!.second;
    const inputs = inputsNow(job);
    const output = job + width;
    const startMs = phase2Ms + rank * rerunStepMs;
    // Inputs carry no schema now: the server takes their current versions, as a producer that sends no schema.
    const names = `${ref(inputs[0])},${ref(inputs[1])}`;
    const start = event('START', startMs, runId, job, names, ref(output));
    if (kind === 'failed') {
      const error = facet(
        'ErrorMessageRunFacet',
        '1-0-1',
        `"message":"Job aborted: duplicate key value in ${datasetName(output)}","programmingLanguage":"JAVA",` +
          `"stackTrace":"${STACK_TRACE}"`,
      );
      return [
        start,
        event(
          'FAIL',
          startMs + RUN_MS,
          runId,
          job,
          names,
          ref(output),
          `,"facets":{"errorMessage":${error}}`,
        ),
      ];
    }
    const schema = kind === 'schemaChange' ? 2 : 1;
    return [
      start,
      event(
        'COMPLETE',
        startMs + RUN_MS + job,
        runId,
        job,
        names,
        ref(output, columnLineage(output, inputs, schema)),
      ),
    ];
  };

  return {
    structure,
    namespace,
    datasetCount,
    jobCount,
    phaseEvents: [jobCount, reruns.length * 2],
    asOfMs: phase1EndMs + DAY_MS / 2,
    endMs: phase2Ms + DAY_MS + RUN_MS + jobCount + 1000,
    *batches(phase, batchSize) {
      let events: string[] = [];
      const units = phase === 1 ? jobCount : reruns.length;
      for (let unit = 0; unit < units; unit++) {
        events.push(...(phase === 1 ? phase1(unit) : phase2(reruns[unit]!, unit)));
        if (events.length >= batchSize) {
          yield { body: `[${events.join(',')}]`, events: events.length };
          events = [];
        }
      }
      if (events.length > 0) yield { body: `[${events.join(',')}]`, events: events.length };
    },
    jobNodeId: (job) => `job:${namespace}:${jobName(job)}`,
    fieldNodeId: (dataset, field) => `datasetField:${namespace}:${datasetName(dataset)}:${field}`,
    rerunJobs: (kind) =>
      kind === undefined ? reruns : reruns.filter((job) => RERUN_KINDS[kinds[job]! - 1] === kind),
    rerunKind: (job) => (kinds[job] ? RERUN_KINDS[kinds[job] - 1] : undefined),
    runIds: (job) => runs.get(job),
    failed: (job) => kinds[job] === 1,
    failingAssertions: (dataset) => failingDataset[dataset] === 1,
    ownerOf(kind, id) {
      const owner = kind === 'job' ? jobOwner[id] : datasetOwner[id];
      return owner !== undefined && owner >= 0 ? `team:squad-${owner}` : undefined;
    },
    inputsNow,
    upstreamAll(dataset) {
      const datasets = [dataset];
      const jobs: number[] = [];
      const seen = new Uint8Array(datasetCount);
      seen[dataset] = 1;
      for (let next = 0; next < datasets.length; next++) {
        const current = datasets[next]!;
        if (current < width) continue;
        const job = current - width;
        jobs.push(job);
        for (const input of inputsNow(job)) {
          if (seen[input]) continue;
          seen[input] = 1;
          datasets.push(input);
        }
      }
      return { datasets, jobs };
    },
    downstreamAll(dataset) {
      const datasets: number[] = [];
      const jobs: number[] = [];
      const seen = new Uint8Array(datasetCount);
      seen[dataset] = 1;
      const frontier = [dataset];
      for (let next = 0; next < frontier.length; next++) {
        // Each dataset has one writer, and each job is reached from the first of its inputs reached.
        for (const job of readersNow(frontier[next]!)) {
          const output = job + width;
          if (seen[output]) continue;
          seen[output] = 1;
          jobs.push(job);
          datasets.push(output);
          frontier.push(output);
        }
      }
      return { datasets, jobs };
    },
    columnWalk(dataset, field, direction, maxDepth = Number.POSITIVE_INFINITY) {
      // Every dataset has one writer: a column is (dataset, field), and its field never changes along a path.
      const seen = new Set<number>([dataset]);
      let frontier = [dataset];
      for (let distance = 1; distance <= maxDepth && frontier.length > 0; distance++) {
        const next: number[] = [];
        for (const current of frontier) {
          const neighbours =
            direction === 'upstream' ? columnInputs(current, field) : columnOutputs(current, field);
          for (const neighbour of neighbours) {
            if (seen.has(neighbour)) continue;
            seen.add(neighbour);
            next.push(neighbour);
          }
        }
        frontier = next;
      }
      seen.delete(dataset);
      return { columns: seen.size, datasets: seen };
    },
    pickDatasets(count, fromLayer, toLayer, pick) {
      const first = Math.max(0, fromLayer) * width;
      const candidates = (Math.min(toLayer, options.layers) + 1) * width - first;
      const chosen = new Set<number>();
      const picked: number[] = [];
      while (picked.length < count) {
        const id = first + pick.int(candidates);
        if (chosen.size < candidates && chosen.has(id)) continue;
        chosen.add(id);
        picked.push(id);
      }
      return picked;
    },
  };
}
