import type { Changeset } from '../ingest/derive.js';
import type { Queryable } from '../store/db.js';
import type { Ms } from '../store/model-state.js';

/** Which way to walk from the start node. */
export type LineageDirection = 'upstream' | 'downstream' | 'both';

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

interface Seen {
  first: Ms;
  last: Ms;
}

/**
 * The job-level lineage graph, kept in memory: adjacency in both directions with the time span each edge was
 * seen. Traversals are plain BFS with a visited set, so a depth-20 walk over a large graph costs what it
 * reaches, not what the graph holds. Loaded once from job_io at start and updated after every commit.
 *
 * An edge is current unless the job completed a run after the edge was last seen (the run did not name it):
 * see `jobs.io_cutoff`. Streaming jobs, which never complete, keep every edge they have reported.
 */
export class LineageGraph {
  /** job -> dataset -> seen, for inputs (reads) and outputs (writes). */
  readonly #reads = new Map<number, Map<number, Seen>>();
  readonly #writes = new Map<number, Map<number, Seen>>();
  /** dataset -> jobs reading / writing it. */
  readonly #readers = new Map<number, Set<number>>();
  readonly #writers = new Map<number, Set<number>>();
  readonly #cutoff = new Map<number, Ms>();
  readonly #hiddenJobs = new Set<number>();
  readonly #hiddenDatasets = new Set<number>();

  /** Loads the graph from the store. */
  async load(db: Queryable): Promise<void> {
    const edges = await db.query<{
      job_id: number;
      direction: number;
      dataset_id: number;
      first: Date;
      last: Date;
    }>('SELECT job_id, direction, dataset_id, first_seen AS first, last_seen AS last FROM job_io');
    for (const edge of edges) {
      this.#addEdge(edge.job_id, edge.direction, edge.dataset_id, edge.first.getTime(), edge.last.getTime());
    }
    for (const job of await db.query<{ id: number; io_cutoff: Date | null; is_hidden: boolean }>(
      'SELECT id, io_cutoff, is_hidden FROM jobs WHERE io_cutoff IS NOT NULL OR is_hidden',
    )) {
      if (job.io_cutoff) this.#cutoff.set(job.id, job.io_cutoff.getTime());
      if (job.is_hidden) this.#hiddenJobs.add(job.id);
    }
    for (const dataset of await db.query<{ id: number }>('SELECT id FROM datasets WHERE is_hidden')) {
      this.#hiddenDatasets.add(dataset.id);
    }
  }

  /** Takes in a committed changeset. */
  apply(changes: Changeset): void {
    for (const edge of changes.edges.values()) {
      this.#addEdge(edge.jobId, edge.direction, edge.datasetId, edge.firstSeen, edge.lastSeen);
    }
    for (const job of changes.jobs.values()) {
      if (job.ioCutoff !== null) this.#cutoff.set(job.id, job.ioCutoff);
      this.setHidden('job', job.id, job.isHidden);
    }
    for (const dataset of changes.datasets.values()) this.setHidden('dataset', dataset.id, dataset.isHidden);
  }

  /** Marks a node soft-deleted (hidden from lineage) or visible again. */
  setHidden(kind: 'dataset' | 'job', id: number, hidden: boolean): void {
    const set = kind === 'job' ? this.#hiddenJobs : this.#hiddenDatasets;
    if (hidden) set.add(id);
    else set.delete(id);
  }

  #addEdge(jobId: number, direction: number, datasetId: number, first: Ms, last: Ms): void {
    const [byJob, byDataset] = direction === 0 ? [this.#reads, this.#readers] : [this.#writes, this.#writers];
    let datasets = byJob.get(jobId);
    if (!datasets) byJob.set(jobId, (datasets = new Map<number, Seen>()));
    const seen = datasets.get(datasetId);
    if (seen) {
      seen.first = Math.min(seen.first, first);
      seen.last = Math.max(seen.last, last);
    } else {
      datasets.set(datasetId, { first, last });
    }
    let jobs = byDataset.get(datasetId);
    if (!jobs) byDataset.set(datasetId, (jobs = new Set<number>()));
    jobs.add(jobId);
  }

  #current(jobId: number, datasetId: number, direction: 0 | 1): boolean {
    if (this.#hiddenJobs.has(jobId) || this.#hiddenDatasets.has(datasetId)) return false;
    const seen = (direction === 0 ? this.#reads : this.#writes).get(jobId)?.get(datasetId);
    if (!seen) return false;
    const cutoff = this.#cutoff.get(jobId);
    return cutoff === undefined || seen.last >= cutoff;
  }

  /** Datasets a job currently reads (0) or writes (1). */
  datasetsOf(jobId: number, direction: 0 | 1): number[] {
    const map = (direction === 0 ? this.#reads : this.#writes).get(jobId);
    if (!map) return [];
    return [...map.keys()].filter((datasetId) => this.#current(jobId, datasetId, direction));
  }

  /** Jobs that currently read (0) or write (1) a dataset. */
  jobsOf(datasetId: number, direction: 0 | 1): number[] {
    const set = (direction === 0 ? this.#readers : this.#writers).get(datasetId);
    if (!set) return [];
    return [...set].filter((jobId) => this.#current(jobId, datasetId, direction));
  }

  /**
   * Walks from `start` up to `depth` jobs away in the given direction ('both' is the union of the two walks,
   * not an undirected walk: siblings that merely share an input are not lineage).
   */
  traverse(start: GraphNode, depth: number, direction: LineageDirection): Subgraph {
    const datasets = new Set<number>();
    const jobs = new Set<number>();
    if (start.kind === 'dataset') datasets.add(start.id);
    else jobs.add(start.id);
    if (direction !== 'downstream') this.#walk(start, depth, true, datasets, jobs);
    if (direction !== 'upstream') this.#walk(start, depth, false, datasets, jobs);
    const edges: GraphEdge[] = [];
    for (const jobId of jobs) {
      for (const datasetId of this.datasetsOf(jobId, 0)) {
        if (datasets.has(datasetId)) {
          edges.push({ origin: { kind: 'dataset', id: datasetId }, destination: { kind: 'job', id: jobId } });
        }
      }
      for (const datasetId of this.datasetsOf(jobId, 1)) {
        if (datasets.has(datasetId)) {
          edges.push({ origin: { kind: 'job', id: jobId }, destination: { kind: 'dataset', id: datasetId } });
        }
      }
    }
    return { datasets, jobs, edges };
  }

  #walk(start: GraphNode, depth: number, upstream: boolean, datasets: Set<number>, jobs: Set<number>): void {
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
      if (depth < 1) return;
      frontierJobs = [start.id];
      visitedJobs.add(start.id);
      count = 1;
    }
    const datasetDirection = upstream ? 0 : 1;
    const jobDirection = upstream ? 1 : 0;
    for (;;) {
      if (frontierJobs.length > 0) {
        const next: number[] = [];
        for (const jobId of frontierJobs) {
          for (const datasetId of this.datasetsOf(jobId, datasetDirection)) {
            if (visitedDatasets.has(datasetId)) continue;
            visitedDatasets.add(datasetId);
            datasets.add(datasetId);
            next.push(datasetId);
          }
        }
        frontierDatasets = next;
      }
      if (count >= depth || frontierDatasets.length === 0) return;
      count++;
      const next: number[] = [];
      for (const datasetId of frontierDatasets) {
        for (const jobId of this.jobsOf(datasetId, jobDirection)) {
          if (visitedJobs.has(jobId)) continue;
          visitedJobs.add(jobId);
          jobs.add(jobId);
          next.push(jobId);
        }
      }
      if (next.length === 0) return;
      frontierJobs = next;
    }
  }
}
