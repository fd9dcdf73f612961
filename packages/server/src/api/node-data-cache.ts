import type { ReadDelta } from '../store/read-delta.js';
import { LruMap } from '../store/model-state.js';
import type { DatasetNodeData } from './schemas/dataset.js';
import type { JobNodeData } from './schemas/job.js';

/**
 * The JSON text of lineage node data (DatasetData, JobData with its latest run), kept between requests.
 * Building a node costs several joins; a depth-20 answer holds a thousand nodes, and neighbouring questions
 * share most of them. Entries are dropped when a commit touches what they show: the dataset or job itself
 * (every event that changes a job's edges names the job), a run of the job (latestRun). Writes that do not come
 * from events (tags, soft deletes) clear everything. A load that overlaps an invalidation is not kept, so nothing
 * stale is cached.
 */
export class NodeDataCache {
  readonly #datasets: LruMap<number, string>;
  readonly #jobs: LruMap<number, string>;
  #epoch = 0;

  constructor(capacity = 200_000) {
    this.#datasets = new LruMap(capacity);
    this.#jobs = new LruMap(capacity);
  }

  /** Drops what a committed changeset may have changed. */
  invalidate(delta: ReadDelta): void {
    this.#epoch++;
    for (const id of delta.touchedDatasets) this.#datasets.delete(id);
    for (const id of delta.touchedJobs) this.#jobs.delete(id);
  }

  /** Drops everything. */
  clear(): void {
    this.#epoch++;
    this.#datasets.clear();
    this.#jobs.clear();
  }

  /** The JSON text of each dataset's node data; `load` is called once for those not cached. */
  datasets(
    ids: readonly number[],
    load: (missing: number[]) => Promise<Map<number, DatasetNodeData>>,
  ): Promise<Map<number, string>> {
    return this.#get(this.#datasets, ids, load);
  }

  /** The JSON text of each job's node data; `load` is called once for those not cached. */
  jobs(
    ids: readonly number[],
    load: (missing: number[]) => Promise<Map<number, JobNodeData>>,
  ): Promise<Map<number, string>> {
    return this.#get(this.#jobs, ids, load);
  }

  async #get<T>(
    cache: LruMap<number, string>,
    ids: readonly number[],
    load: (missing: number[]) => Promise<Map<number, T>>,
  ): Promise<Map<number, string>> {
    const result = new Map<number, string>();
    const missing: number[] = [];
    for (const id of ids) {
      const text = cache.get(id);
      if (text === undefined) missing.push(id);
      else result.set(id, text);
    }
    if (missing.length === 0) return result;
    const epoch = this.#epoch;
    const loaded = await load(missing);
    const keep = epoch === this.#epoch;
    for (const [id, data] of loaded) {
      const text = JSON.stringify(data);
      result.set(id, text);
      if (keep) cache.set(id, text);
    }
    return result;
  }
}
