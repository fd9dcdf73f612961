import type { ReadDelta } from '../store/read-delta.js';
import type { Queryable } from '../store/db.js';
import type { Ms } from '../store/model-state.js';
import { loadCutoffs, readCutoffs } from '../store/job-cutoffs.js';
import {
  edgesAsOf,
  readHiddenDatasets,
  readHiddenJobs,
  readJobEdges,
  readLineageEdges,
} from '../store/queries/graph.js';
import { DatasetAliases } from './aliases.js';

/** Which way to walk from the start node. */
export const LINEAGE_DIRECTIONS = ['upstream', 'downstream', 'both'] as const;
export type LineageDirection = (typeof LINEAGE_DIRECTIONS)[number];

/** A node of the job-level lineage graph. */
export type GraphNode = { readonly kind: 'dataset' | 'job'; readonly id: number };

/** An edge in data-flow direction: dataset -> job (the job reads it) or job -> dataset (the job writes it). */
export interface GraphEdge {
  readonly origin: GraphNode;
  readonly destination: GraphNode;
}

/** The part of the graph a traversal reached. */
export interface Subgraph {
  readonly datasets: ReadonlySet<number>;
  readonly jobs: ReadonlySet<number>;
  readonly edges: readonly GraphEdge[];
}

/** The latest eventTime an event named an edge at. */
type LastSeen = Ms;

/** The edges of jobs as of a time: job -> datasets read (0) and written (1). */
export interface JobEdges {
  readonly inputs: number[];
  readonly outputs: number[];
}

/** The completion that sets a job's present cutoff: the latest start among its completed runs. */
interface Cutoff {
  /** The first eventTime of that run (the JobEvent's time). */
  readonly at: Ms;
  /** The run's uuid, or `job@<event hash>` for a JobEvent. */
  readonly key: string;
}

/**
 * The job-level lineage graph of now, kept in memory: each current edge with the last time an event named it,
 * in both directions, and each job's cutoff. Traversals are plain BFS with a visited set, so a depth-20 walk
 * over a large graph costs what it reaches, not what the graph holds. Loaded at start from the compact table
 * of current edges (lineage_edges) and of cutoffs (job_cutoffs), and updated after every commit.
 *
 * An edge is current unless its job completed a run that started after the edge was last seen (that run did
 * not name it): the cutoff of a job is the first eventTime of its latest-starting completed run (or its latest
 * JobEvent). Streaming jobs, which never complete, keep every edge they have reported. Edges retired by the
 * cutoff leave memory.
 *
 * Memory: one number per current edge and per job, so it follows the current graph, never the number of
 * events. Questions about the past ({@link traverseAsOf}, {@link edgesAsOf}) are answered from the history in
 * the store, as a store holding only the events up to then would answer them. Soft deletes are of the present
 * and do not apply to the past.
 *
 * Dataset aliases ({@link DatasetAliases}) are joined where edges are read: a dataset's neighbours are those of
 * every dataset joined with it, and every dataset answered is the canonical one, so a walk sees one node where
 * the events used several names. They apply to every time, the past included: an alias repairs naming, and the
 * lineage of any moment is then what it would have been had the events used one name throughout.
 */
export class LineageGraph {
  readonly #aliases: DatasetAliases;
  /** job -> dataset -> last seen, for inputs (reads) and outputs (writes). Current edges only. */
  #reads = new Map<number, Map<number, LastSeen>>();
  #writes = new Map<number, Map<number, LastSeen>>();
  /** dataset -> jobs reading / writing it. */
  #readers = new Map<number, Set<number>>();
  #writers = new Map<number, Set<number>>();
  /** job -> the completion that sets its present cutoff. */
  #cutoff = new Map<number, Cutoff>();
  #hiddenJobs = new Set<number>();
  #hiddenDatasets = new Set<number>();

  /** @param aliases the aliases to join (shared with the column graph and the routes); none by default. */
  constructor(aliases: DatasetAliases = new DatasetAliases()) {
    this.#aliases = aliases;
  }

  /** The aliases this graph joins. */
  get aliases(): DatasetAliases {
    return this.#aliases;
  }

  /**
   * Takes over everything `other` holds, at once (synchronously, so readers never see a mix): how a replica
   * that fell too far behind the commit feed swaps in a graph it loaded aside. `other` is not used after.
   */
  adopt(other: LineageGraph): void {
    this.#reads = other.#reads;
    this.#writes = other.#writes;
    this.#readers = other.#readers;
    this.#writers = other.#writers;
    this.#cutoff = other.#cutoff;
    this.#hiddenJobs = other.#hiddenJobs;
    this.#hiddenDatasets = other.#hiddenDatasets;
  }

  /** Loads the current graph from the store. */
  async load(db: Queryable): Promise<void> {
    for (const row of await loadCutoffs(db)) this.#cutoff.set(row.job_id, { at: row.first, key: row.key });
    await readLineageEdges(db, (rows) => {
      for (const row of rows) this.#addSighting(row.job_id, row.direction, row.dataset_id, row.at);
    });
    for (const job of await readHiddenJobs(db)) this.#hiddenJobs.add(job.id);
    for (const dataset of await readHiddenDatasets(db)) this.#hiddenDatasets.add(dataset.id);
  }

  /**
   * Takes in a committed changeset. Returns the jobs whose cutoff may have moved back (a completed run learnt of
   * an earlier event), which {@link refresh} must read again from the store; usually none.
   */
  apply(delta: ReadDelta): number[] {
    const stale = new Set<number>();
    // Completions first: the edges of this very batch are then judged against the cutoff they make.
    for (const [jobId, key, first] of delta.completions) this.#complete(jobId, key, first);
    // The run that sets a cutoff may have learnt of an earlier event: its start moved back, and another
    // completion (which only the store knows) may set the cutoff now.
    for (const [jobId, uuid, first] of delta.runs) {
      const cutoff = this.#cutoff.get(jobId);
      if (cutoff?.key === uuid && first < cutoff.at) stale.add(jobId);
    }
    for (const [jobId, direction, datasetId, at] of delta.edges)
      this.#addSighting(jobId, direction, datasetId, at);
    for (const [id, , , isHidden] of delta.jobs) this.setHidden('job', id, isHidden);
    for (const [id, , , isHidden] of delta.datasets) this.setHidden('dataset', id, isHidden);
    return [...stale];
  }

  /** Reads the cutoffs and current edges of `jobIds` again from the store (see {@link apply}). */
  async refresh(db: Queryable, jobIds: readonly number[]): Promise<void> {
    if (jobIds.length === 0) return;
    const [cutoffs, edges] = await Promise.all([readCutoffs(db, jobIds), readJobEdges(db, jobIds)]);
    for (const jobId of jobIds) {
      this.#cutoff.delete(jobId);
      for (const [byJob, byDataset] of [
        [this.#reads, this.#readers],
        [this.#writes, this.#writers],
      ] as const) {
        for (const datasetId of byJob.get(jobId)?.keys() ?? []) byDataset.get(datasetId)?.delete(jobId);
        byJob.delete(jobId);
      }
    }
    for (const row of cutoffs) this.#cutoff.set(row.job_id, { at: row.first, key: row.key });
    for (const row of edges) this.#addSighting(row.job_id, row.direction, row.dataset_id, row.at);
  }

  /** Marks a node soft-deleted (hidden from lineage) or visible again. */
  setHidden(kind: 'dataset' | 'job', id: number, hidden: boolean): void {
    const set = kind === 'job' ? this.#hiddenJobs : this.#hiddenDatasets;
    if (hidden) set.add(id);
    else set.delete(id);
  }

  #addSighting(jobId: number, direction: number, datasetId: number, at: Ms): void {
    const cutoff = this.#cutoff.get(jobId);
    const [byJob, byDataset] = direction === 0 ? [this.#reads, this.#readers] : [this.#writes, this.#writers];
    let datasets = byJob.get(jobId);
    const known = datasets?.get(datasetId);
    if (known !== undefined && known >= at) return;
    // Named before the job's latest completed run started: that run did not name it, so it is retired.
    if (known === undefined && cutoff !== undefined && at < cutoff.at) return;
    if (!datasets) byJob.set(jobId, (datasets = new Map<number, LastSeen>()));
    datasets.set(datasetId, at);
    let jobs = byDataset.get(datasetId);
    if (!jobs) byDataset.set(datasetId, (jobs = new Set<number>()));
    jobs.add(jobId);
  }

  #complete(jobId: number, key: string, first: Ms): void {
    const cutoff = this.#cutoff.get(jobId);
    if (cutoff !== undefined && (cutoff.at > first || (cutoff.at === first && cutoff.key <= key))) return;
    this.#cutoff.set(jobId, { at: first, key });
    // Edges last named before the new cutoff are retired.
    for (const [byJob, byDataset] of [
      [this.#reads, this.#readers],
      [this.#writes, this.#writers],
    ] as const) {
      const datasets = byJob.get(jobId);
      if (!datasets) continue;
      for (const [datasetId, seen] of datasets) {
        if (seen >= first) continue;
        datasets.delete(datasetId);
        byDataset.get(datasetId)?.delete(jobId);
      }
    }
  }

  /** Datasets a job reads (0) or writes (1) now (canonical ones: see {@link DatasetAliases}). */
  datasetsOf(jobId: number, direction: 0 | 1): number[] {
    if (this.#hiddenJobs.has(jobId)) return [];
    const map = (direction === 0 ? this.#reads : this.#writes).get(jobId);
    if (!map) return [];
    const result: number[] = [];
    for (const datasetId of map.keys()) if (!this.#hiddenDatasets.has(datasetId)) result.push(datasetId);
    return canonicalDatasets(this.#aliases, result);
  }

  /** Jobs that read (0) or write (1) a dataset, or any dataset joined with it by an alias, now. */
  jobsOf(datasetId: number, direction: 0 | 1): number[] {
    const result: number[] = [];
    // Walks call this for every dataset they reach: without aliases, no list of members is made.
    if (this.#aliases.size === 0) {
      this.#addJobsOf(datasetId, direction, result);
      return result;
    }
    const members = this.#aliases.membersOf(datasetId);
    for (const member of members) this.#addJobsOf(member, direction, result);
    return members.length === 1 ? result : [...new Set(result)];
  }

  #addJobsOf(datasetId: number, direction: 0 | 1, result: number[]): void {
    if (this.#hiddenDatasets.has(datasetId)) return;
    const set = (direction === 0 ? this.#readers : this.#writers).get(datasetId);
    if (!set) return;
    for (const jobId of set) if (!this.#hiddenJobs.has(jobId)) result.push(jobId);
  }

  /** The job that read (0) or wrote (1) a dataset last, by the eventTime that named the edge: none or one. */
  #latestJobOf(datasetId: number, direction: 0 | 1): number[] {
    const byJob = direction === 0 ? this.#reads : this.#writes;
    const members = this.#aliases.size === 0 ? [datasetId] : this.#aliases.membersOf(datasetId);
    let latest: { jobId: number; at: Ms } | undefined;
    for (const jobId of this.jobsOf(datasetId, direction)) {
      for (const member of members) {
        const at = byJob.get(jobId)?.get(member);
        if (at !== undefined && isLater(jobId, at, latest)) latest = { jobId, at };
      }
    }
    return latest === undefined ? [] : [latest.jobId];
  }

  /** The node a walk starts from: a dataset's canonical one. */
  #start(node: GraphNode): GraphNode {
    return node.kind === 'dataset' ? { kind: 'dataset', id: this.#aliases.canonicalOf(node.id) } : node;
  }

  /**
   * Walks from `start` up to `depth` jobs away in the given direction ('both' is the union of the two walks,
   * not an undirected walk: siblings that merely share an input are not lineage).
   */
  traverse(start: GraphNode, depth: number, direction: LineageDirection): Subgraph {
    return this.#run(walkGraph(this.#start(start), depth, direction));
  }

  /**
   * Marquez's lineage graph (GET /api/v1/lineage without `direction`), with Marquez's depth (LineageDao's
   * recursive query): the jobs within `depth` job hops of a start job, two jobs being one hop apart when they
   * share a dataset (whichever reads or writes it), and every dataset those jobs read or write. Depth 0 is the
   * start job and its datasets. A dataset starts from one job, as in Marquez: the job that wrote it last (else
   * the one that read it last); a dataset no job touches is alone. So the other inputs of each job and the jobs
   * sharing a dataset (a failed sibling input, often the actual cause) are in, as the Marquez UI's "Full Graph"
   * expects.
   */
  component(start: GraphNode, depth: number): Subgraph {
    return this.#run(walkComponent(this.#start(start), depth));
  }

  /** {@link component} as of event time `at`, read from the store's history. */
  componentAsOf(db: Queryable, start: GraphNode, depth: number, at: Ms): Promise<Subgraph> {
    return this.#runAsOf(db, at, walkComponent(this.#start(start), depth));
  }

  /** Runs a walk against the present graph in memory. */
  #run(walk: Walk): Subgraph {
    const neighbours: Neighbours = {
      datasetsOf: (jobIds, dir) => new Map(jobIds.map((id) => [id, this.datasetsOf(id, dir)])),
      jobsOf: (datasetIds, dir) => new Map(datasetIds.map((id) => [id, this.jobsOf(id, dir)])),
      latestJobOf: (datasetIds, dir) => new Map(datasetIds.map((id) => [id, this.#latestJobOf(id, dir)])),
    };
    for (let step = walk.next(); ;) {
      if (step.done) return step.value;
      step = walk.next(neighbours[step.value.kind](step.value.ids, step.value.direction));
    }
  }

  /** The lineage of `start` as of event time `at`, read from the store's history (a query per level). */
  traverseAsOf(
    db: Queryable,
    start: GraphNode,
    depth: number,
    direction: LineageDirection,
    at: Ms,
  ): Promise<Subgraph> {
    return this.#runAsOf(db, at, walkGraph(this.#start(start), depth, direction));
  }

  /** Runs a walk against the history in the store as of `at`: one query per question. */
  async #runAsOf(db: Queryable, at: Ms, walk: Walk): Promise<Subgraph> {
    const aliases = this.#aliases;
    const neighbours: AsyncNeighbours = {
      datasetsOf: async (jobIds, dir) => {
        const result = new Map<number, number[]>(jobIds.map((id) => [id, []]));
        for (const row of await edgesAsOf(db, 'job', jobIds, [dir], at))
          result.get(row.job_id)?.push(row.dataset_id);
        if (aliases.size > 0)
          for (const [id, list] of result) result.set(id, canonicalDatasets(aliases, list));
        return result;
      },
      jobsOf: async (datasetIds, dir) => {
        // The walk asks of canonical datasets; the history knows the names the events used.
        const asked = aliases.size === 0 ? datasetIds : datasetIds.flatMap((id) => aliases.membersOf(id));
        const result = new Map<number, number[]>(datasetIds.map((id) => [id, []]));
        for (const row of await edgesAsOf(db, 'dataset', asked, [dir], at))
          result.get(aliases.canonicalOf(row.dataset_id))?.push(row.job_id);
        if (asked !== datasetIds) for (const [id, jobs] of result) result.set(id, [...new Set(jobs)]);
        return result;
      },
      latestJobOf: async (datasetIds, dir) => {
        const asked = aliases.size === 0 ? datasetIds : datasetIds.flatMap((id) => aliases.membersOf(id));
        const latest = new Map<number, { jobId: number; at: Ms }>();
        for (const row of await edgesAsOf(db, 'dataset', asked, [dir], at)) {
          const id = aliases.canonicalOf(row.dataset_id);
          if (isLater(row.job_id, row.at, latest.get(id))) latest.set(id, { jobId: row.job_id, at: row.at });
        }
        return new Map(datasetIds.map((id) => [id, latest.has(id) ? [latest.get(id)!.jobId] : []]));
      },
    };
    for (let step = walk.next(); ;) {
      if (step.done) return step.value;
      step = walk.next(await neighbours[step.value.kind](step.value.ids, step.value.direction));
    }
  }

  /** The inputs and outputs of `jobIds` as of event time `at`, read from the store's history. */
  async edgesAsOf(db: Queryable, jobIds: readonly number[], at: Ms): Promise<Map<number, JobEdges>> {
    const result = new Map<number, JobEdges>(jobIds.map((id) => [id, { inputs: [], outputs: [] }]));
    for (const row of await edgesAsOf(db, 'job', jobIds, [0, 1], at)) {
      const edges = result.get(row.job_id);
      (row.direction === 0 ? edges?.inputs : edges?.outputs)?.push(row.dataset_id);
    }
    if (this.#aliases.size === 0) return result;
    return new Map(
      [...result].map(([id, edges]) => [
        id,
        {
          inputs: canonicalDatasets(this.#aliases, edges.inputs),
          outputs: canonicalDatasets(this.#aliases, edges.outputs),
        },
      ]),
    );
  }
}

/** `ids` with each alias replaced by its canonical dataset, once each, in first-seen order. */
function canonicalDatasets(aliases: DatasetAliases, ids: number[]): number[] {
  if (aliases.size === 0) return ids;
  return [...new Set(ids.map((id) => aliases.canonicalOf(id)))];
}

/** Whether a job's edge named at `at` is later than `latest` (the newer job on a tie, as Marquez's newest version). */
function isLater(jobId: number, at: Ms, latest: { jobId: number; at: Ms } | undefined): boolean {
  return latest === undefined || at > latest.at || (at === latest.at && jobId > latest.jobId);
}

/** Neighbours of many nodes at once: job -> datasets, dataset -> jobs, in one direction. */
interface Neighbours {
  datasetsOf(jobIds: number[], direction: 0 | 1): Map<number, number[]>;
  jobsOf(datasetIds: number[], direction: 0 | 1): Map<number, number[]>;
  /** Per dataset, the job that read (0) or wrote (1) it last, if any (a list of none or one). */
  latestJobOf(datasetIds: number[], direction: 0 | 1): Map<number, number[]>;
}
interface AsyncNeighbours {
  datasetsOf(jobIds: number[], direction: 0 | 1): Promise<Map<number, number[]>>;
  jobsOf(datasetIds: number[], direction: 0 | 1): Promise<Map<number, number[]>>;
  latestJobOf(datasetIds: number[], direction: 0 | 1): Promise<Map<number, number[]>>;
}

/** One level's neighbour question, asked by the walk and answered by whoever runs it (in memory or SQL). */
type Ask = {
  readonly kind: 'datasetsOf' | 'jobsOf' | 'latestJobOf';
  readonly ids: number[];
  readonly direction: 0 | 1;
};

/** A walk of the graph: it yields each level's question and is resumed with the answer. */
type Walk = Generator<Ask, Subgraph, Map<number, number[]>>;

/**
 * The traversal, written once for the present (in memory) and the past (SQL): a generator that yields each
 * level's question and is resumed with the answer.
 */
function* walkGraph(start: GraphNode, depth: number, direction: LineageDirection): Walk {
  const datasets = new Set<number>();
  const jobs = new Set<number>();
  if (start.kind === 'dataset') datasets.add(start.id);
  else jobs.add(start.id);
  for (const upstream of direction === 'both' ? [true, false] : [direction === 'upstream']) {
    // `count` is the number of jobs on the path from the start, the start job included: a dataset start with
    // depth 1 reaches the jobs that wrote it and their inputs, as Marquez's depth (job hops) does. Levels are
    // expanded in order, so each node is first reached with its smallest count and visited once.
    const visitedDatasets = new Set<number>();
    const visitedJobs = new Set<number>();
    let frontierDatasets: number[] = [];
    let frontierJobs: number[] = [];
    let count: number;
    if (start.kind === 'dataset') {
      frontierDatasets = [start.id];
      visitedDatasets.add(start.id);
      count = 0;
    } else {
      if (depth < 1) continue;
      frontierJobs = [start.id];
      visitedJobs.add(start.id);
      count = 1;
    }
    const datasetDirection = upstream ? 0 : 1;
    const jobDirection = upstream ? 1 : 0;
    for (;;) {
      if (frontierJobs.length > 0) {
        const answer = yield { kind: 'datasetsOf', ids: frontierJobs, direction: datasetDirection };
        const next: number[] = [];
        for (const jobId of frontierJobs) {
          for (const datasetId of answer.get(jobId) ?? []) {
            if (visitedDatasets.has(datasetId)) continue;
            visitedDatasets.add(datasetId);
            datasets.add(datasetId);
            next.push(datasetId);
          }
        }
        frontierDatasets = next;
      }
      if (count >= depth || frontierDatasets.length === 0) break;
      count++;
      const answer = yield { kind: 'jobsOf', ids: frontierDatasets, direction: jobDirection };
      const next: number[] = [];
      for (const datasetId of frontierDatasets) {
        for (const jobId of answer.get(datasetId) ?? []) {
          if (visitedJobs.has(jobId)) continue;
          visitedJobs.add(jobId);
          jobs.add(jobId);
          next.push(jobId);
        }
      }
      if (next.length === 0) break;
      frontierJobs = next;
    }
  }
  return { datasets, jobs, edges: yield* edgesAmong(datasets, jobs) };
}

/** The edges between the reached datasets and jobs (two questions). */
function* edgesAmong(
  datasets: ReadonlySet<number>,
  jobs: ReadonlySet<number>,
): Generator<Ask, GraphEdge[], Map<number, number[]>> {
  const edges: GraphEdge[] = [];
  const jobList = [...jobs];
  const reads = yield { kind: 'datasetsOf', ids: jobList, direction: 0 };
  const writes = yield { kind: 'datasetsOf', ids: jobList, direction: 1 };
  for (const jobId of jobList) {
    for (const datasetId of reads.get(jobId) ?? []) {
      if (datasets.has(datasetId)) {
        edges.push({ origin: { kind: 'dataset', id: datasetId }, destination: { kind: 'job', id: jobId } });
      }
    }
    for (const datasetId of writes.get(jobId) ?? []) {
      if (datasets.has(datasetId)) {
        edges.push({ origin: { kind: 'job', id: jobId }, destination: { kind: 'dataset', id: datasetId } });
      }
    }
  }
  return edges;
}

/**
 * The connected component within `depth` job hops (see {@link LineageGraph.component}): Marquez's depth, which
 * counts hops between jobs (the start job is hop 0), not jobs on a path as {@link walkGraph} does. Levels are
 * expanded in order, so each node is first reached at its smallest hop count and visited once.
 */
function* walkComponent(start: GraphNode, depth: number): Walk {
  const datasets = new Set<number>();
  const jobs = new Set<number>();
  let startJob: number | undefined = start.kind === 'job' ? start.id : undefined;
  if (start.kind === 'dataset') {
    // Marquez starts from one job of the dataset (LineageDao.getJobFromInputOrOutput): a writer first. The
    // dataset is then one of that job's, reached at hop 0 with the others (and, like them, a way to hop 1).
    for (const direction of [1, 0] as const) {
      const answer = yield { kind: 'latestJobOf', ids: [start.id], direction };
      startJob = answer.get(start.id)?.[0];
      if (startJob !== undefined) break;
    }
  }
  // A dataset no job touches is alone (Marquez's "orphan" graph).
  if (startJob === undefined) return { datasets: new Set([start.id]), jobs, edges: [] };
  jobs.add(startJob);
  let frontierJobs = [startJob];
  for (let hops = 0; ; hops++) {
    const reads = yield { kind: 'datasetsOf', ids: frontierJobs, direction: 0 };
    const writes = yield { kind: 'datasetsOf', ids: frontierJobs, direction: 1 };
    const frontierDatasets: number[] = [];
    for (const jobId of frontierJobs) {
      for (const datasetId of [...(reads.get(jobId) ?? []), ...(writes.get(jobId) ?? [])]) {
        if (datasets.has(datasetId)) continue;
        datasets.add(datasetId);
        frontierDatasets.push(datasetId);
      }
    }
    // A job one hop further shares a dataset with a job of this hop; one sharing an older dataset only is in already.
    if (hops >= depth || frontierDatasets.length === 0) break;
    const readers = yield { kind: 'jobsOf', ids: frontierDatasets, direction: 0 };
    const writers = yield { kind: 'jobsOf', ids: frontierDatasets, direction: 1 };
    frontierJobs = [];
    for (const datasetId of frontierDatasets) {
      for (const jobId of [...(readers.get(datasetId) ?? []), ...(writers.get(datasetId) ?? [])]) {
        if (jobs.has(jobId)) continue;
        jobs.add(jobId);
        frontierJobs.push(jobId);
      }
    }
    if (frontierJobs.length === 0) break;
  }
  return { datasets, jobs, edges: yield* edgesAmong(datasets, jobs) };
}
