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

/** When an edge was seen: every distinct eventTime of an event naming it, ascending. */
type Sightings = number[];

/** A run that completed (or a JobEvent): from then on, its job's edges are the ones it named. */
interface Completion {
  /** The run's first eventTime (the JobEvent's time). */
  first: Ms;
  /** The earliest COMPLETE event of the run (the JobEvent's time). */
  completedAt: Ms;
}

/** Index of the last element of ascending `list` that is <= `at`, or -1. */
function lastAtOrBefore(list: readonly number[], at: number): number {
  let low = 0;
  let high = list.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (list[middle]! <= at) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/** Adds `time` to ascending `list` unless present. */
function insertTime(list: number[], time: number): void {
  const index = lastAtOrBefore(list, time);
  if (index >= 0 && list[index] === time) return;
  list.splice(index + 1, 0, time);
}

/**
 * The job-level lineage graph, kept in memory: adjacency in both directions with the times each edge was seen.
 * Traversals are plain BFS with a visited set, so a depth-20 walk over a large graph costs what it reaches,
 * not what the graph holds. Loaded once from the history tables at start and updated after every commit.
 *
 * An edge is current unless its job completed a run that started after the edge was last seen (that run did
 * not name it): the cutoff of a job is the first eventTime of its latest completed run (or its latest JobEvent).
 * Streaming jobs, which never complete, keep every edge they have reported. Every question can be asked as of
 * an event time `at`: the edges seen by then, against the runs completed by then, which is what a store holding
 * only the events up to `at` would answer. Soft deletes are of the present and do not apply to the past.
 */
export class LineageGraph {
  /** job -> dataset -> sightings, for inputs (reads) and outputs (writes). */
  readonly #reads = new Map<number, Map<number, Sightings>>();
  readonly #writes = new Map<number, Map<number, Sightings>>();
  /** dataset -> jobs reading / writing it. */
  readonly #readers = new Map<number, Set<number>>();
  readonly #writers = new Map<number, Set<number>>();
  /** job -> run uuid (or `job@<time>` for a JobEvent) -> its completion. */
  readonly #completions = new Map<number, Map<string, Completion>>();
  /** job -> the present cutoff (the largest `first` of its completions). */
  readonly #cutoff = new Map<number, Ms>();
  /** job -> its completions as a search index for past cutoffs (built on demand, dropped on change). */
  readonly #cutoffIndex = new Map<number, { completedAt: number[]; cutoff: number[] }>();
  readonly #hiddenJobs = new Set<number>();
  readonly #hiddenDatasets = new Set<number>();

  /** Loads the graph from the store. */
  async load(db: Queryable): Promise<void> {
    const sightings = await db.query<{ job_id: number; kind: number; dataset_id: number; at: Date }>(
      `SELECT job_id, kind, dataset_id, event_time AS at FROM dataset_sightings
       WHERE job_id IS NOT NULL AND kind IN (0, 1) ORDER BY event_time`,
    );
    for (const row of sightings) this.#addSighting(row.job_id, row.kind, row.dataset_id, row.at.getTime());
    const completions = await db.query<{ job_id: number; run: string; first: Date; completed_at: Date }>(
      `SELECT s.job_id, s.run_uuid::text AS run, r.created_at AS first, min(s.event_time) AS completed_at
       FROM job_sightings s JOIN runs r ON r.uuid = s.run_uuid
       WHERE s.kind = 0 AND s.event_type = 'COMPLETE'
       GROUP BY s.job_id, s.run_uuid, r.created_at
       UNION ALL
       SELECT job_id, 'job@' || event_hash, event_time, event_time FROM job_sightings
       WHERE kind = 0 AND run_uuid IS NULL`,
    );
    const touched = new Set<number>();
    for (const row of completions) {
      this.#complete(row.job_id, row.run, row.first.getTime(), row.completed_at.getTime());
      touched.add(row.job_id);
    }
    for (const jobId of touched) this.#updateCutoff(jobId);
    for (const job of await db.query<{ id: number }>('SELECT id FROM jobs WHERE is_hidden')) {
      this.#hiddenJobs.add(job.id);
    }
    for (const dataset of await db.query<{ id: number }>('SELECT id FROM datasets WHERE is_hidden')) {
      this.#hiddenDatasets.add(dataset.id);
    }
  }

  /** Takes in a committed changeset. */
  apply(changes: Changeset): void {
    for (const sighting of changes.datasetSightings.values()) {
      if (sighting.jobId !== null && (sighting.kind === 0 || sighting.kind === 1)) {
        this.#addSighting(sighting.jobId, sighting.kind, sighting.datasetId, sighting.eventTime);
      }
    }
    const touched = new Set<number>();
    for (const sighting of changes.jobSightings.values()) {
      if (sighting.kind !== 0) continue;
      if (sighting.runUuid === null) {
        const t = sighting.eventTime;
        this.#complete(sighting.jobId, `job@${sighting.eventHash}`, t, t);
        touched.add(sighting.jobId);
      } else if (sighting.eventType === 'COMPLETE') {
        const run = changes.runs.get(sighting.runUuid);
        const first = run?.aggregate.firstEventAt ?? sighting.eventTime;
        this.#complete(sighting.jobId, sighting.runUuid, first, sighting.eventTime);
        touched.add(sighting.jobId);
      }
    }
    // A run that completed earlier may have learnt of an earlier event: its start moves back.
    for (const run of changes.runs.values()) {
      const completion = this.#completions.get(run.jobId)?.get(run.uuid);
      if (completion && run.aggregate.firstEventAt < completion.first) {
        completion.first = run.aggregate.firstEventAt;
        touched.add(run.jobId);
      }
    }
    for (const jobId of touched) this.#updateCutoff(jobId);
    for (const job of changes.jobs.values()) this.setHidden('job', job.id, job.isHidden);
    for (const dataset of changes.datasets.values()) this.setHidden('dataset', dataset.id, dataset.isHidden);
  }

  /** Marks a node soft-deleted (hidden from lineage) or visible again. */
  setHidden(kind: 'dataset' | 'job', id: number, hidden: boolean): void {
    const set = kind === 'job' ? this.#hiddenJobs : this.#hiddenDatasets;
    if (hidden) set.add(id);
    else set.delete(id);
  }

  #addSighting(jobId: number, direction: number, datasetId: number, at: Ms): void {
    const [byJob, byDataset] = direction === 0 ? [this.#reads, this.#readers] : [this.#writes, this.#writers];
    let datasets = byJob.get(jobId);
    if (!datasets) byJob.set(jobId, (datasets = new Map<number, Sightings>()));
    const times = datasets.get(datasetId);
    if (!times) datasets.set(datasetId, [at]);
    else if (at > times[times.length - 1]!) times.push(at);
    else insertTime(times, at);
    let jobs = byDataset.get(datasetId);
    if (!jobs) byDataset.set(datasetId, (jobs = new Set<number>()));
    jobs.add(jobId);
  }

  #complete(jobId: number, key: string, first: Ms, completedAt: Ms): void {
    let completions = this.#completions.get(jobId);
    if (!completions) this.#completions.set(jobId, (completions = new Map<string, Completion>()));
    const known = completions.get(key);
    if (known) {
      known.first = Math.min(known.first, first);
      known.completedAt = Math.min(known.completedAt, completedAt);
    } else {
      completions.set(key, { first, completedAt });
    }
  }

  #updateCutoff(jobId: number): void {
    this.#cutoffIndex.delete(jobId);
    let cutoff = -Infinity;
    for (const completion of this.#completions.get(jobId)?.values() ?? []) {
      cutoff = Math.max(cutoff, completion.first);
    }
    if (cutoff === -Infinity) this.#cutoff.delete(jobId);
    else this.#cutoff.set(jobId, cutoff);
  }

  /** The cutoff of a job as of `at`: the largest start of the runs completed by then. */
  #cutoffAt(jobId: number, at: Ms): Ms | undefined {
    let index = this.#cutoffIndex.get(jobId);
    if (!index) {
      // Completions by completion time, with the running maximum of their starts: a binary search per question.
      const sorted = [...(this.#completions.get(jobId)?.values() ?? [])].sort(
        (a, b) => a.completedAt - b.completedAt,
      );
      let max = -Infinity;
      index = { completedAt: [], cutoff: [] };
      for (const completion of sorted) {
        max = Math.max(max, completion.first);
        index.completedAt.push(completion.completedAt);
        index.cutoff.push(max);
      }
      this.#cutoffIndex.set(jobId, index);
    }
    const position = lastAtOrBefore(index.completedAt, at);
    return position < 0 ? undefined : index.cutoff[position];
  }

  #current(jobId: number, datasetId: number, direction: 0 | 1, at: Ms | undefined): boolean {
    const times = (direction === 0 ? this.#reads : this.#writes).get(jobId)?.get(datasetId);
    if (!times) return false;
    if (at === undefined) {
      if (this.#hiddenJobs.has(jobId) || this.#hiddenDatasets.has(datasetId)) return false;
      const cutoff = this.#cutoff.get(jobId);
      return cutoff === undefined || times[times.length - 1]! >= cutoff;
    }
    const index = lastAtOrBefore(times, at);
    if (index < 0) return false;
    const cutoff = this.#cutoffAt(jobId, at);
    return cutoff === undefined || times[index]! >= cutoff;
  }

  /** Datasets a job reads (0) or writes (1), now or as of `at`. */
  datasetsOf(jobId: number, direction: 0 | 1, at?: Ms): number[] {
    const map = (direction === 0 ? this.#reads : this.#writes).get(jobId);
    if (!map) return [];
    return [...map.keys()].filter((datasetId) => this.#current(jobId, datasetId, direction, at));
  }

  /** Jobs that read (0) or write (1) a dataset, now or as of `at`. */
  jobsOf(datasetId: number, direction: 0 | 1, at?: Ms): number[] {
    const set = (direction === 0 ? this.#readers : this.#writers).get(datasetId);
    if (!set) return [];
    return [...set].filter((jobId) => this.#current(jobId, datasetId, direction, at));
  }

  /**
   * Walks from `start` up to `depth` jobs away in the given direction ('both' is the union of the two walks,
   * not an undirected walk: siblings that merely share an input are not lineage).
   */
  traverse(start: GraphNode, depth: number, direction: LineageDirection, at?: Ms): Subgraph {
    const datasets = new Set<number>();
    const jobs = new Set<number>();
    if (start.kind === 'dataset') datasets.add(start.id);
    else jobs.add(start.id);
    if (direction !== 'downstream') this.#walk(start, depth, true, datasets, jobs, at);
    if (direction !== 'upstream') this.#walk(start, depth, false, datasets, jobs, at);
    return { datasets, jobs, edges: this.edgesAmong(datasets, jobs, at) };
  }

  /** The edges (now or as of `at`) between the given datasets and jobs. */
  edgesAmong(datasets: ReadonlySet<number>, jobs: ReadonlySet<number>, at?: Ms): GraphEdge[] {
    const edges: GraphEdge[] = [];
    for (const jobId of jobs) {
      for (const datasetId of this.datasetsOf(jobId, 0, at)) {
        if (datasets.has(datasetId)) {
          edges.push({ origin: { kind: 'dataset', id: datasetId }, destination: { kind: 'job', id: jobId } });
        }
      }
      for (const datasetId of this.datasetsOf(jobId, 1, at)) {
        if (datasets.has(datasetId)) {
          edges.push({ origin: { kind: 'job', id: jobId }, destination: { kind: 'dataset', id: datasetId } });
        }
      }
    }
    return edges;
  }

  #walk(
    start: GraphNode,
    depth: number,
    upstream: boolean,
    datasets: Set<number>,
    jobs: Set<number>,
    at: Ms | undefined,
  ): void {
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
          for (const datasetId of this.datasetsOf(jobId, datasetDirection, at)) {
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
        for (const jobId of this.jobsOf(datasetId, jobDirection, at)) {
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
