import { HeadwaterError } from '../errors.js';
import type { Db } from '../store/db.js';
import type { ModelState } from '../store/model-state.js';
import { readBeforeWrite, writeBatch } from '../store/writer.js';
import { applyChangeset, deriveChanges, type Changeset } from './derive.js';
import type { NormalizedEvent } from './normalize.js';

/** What became of one submitted event. */
export type EventOutcome = 'stored' | 'duplicate';

/** Called after each committed batch, e.g. to update the lineage graph index. */
export type CommitListener = (changes: Changeset) => void;

interface Pending {
  readonly events: readonly NormalizedEvent[];
  readonly resolve: (outcomes: EventOutcome[]) => void;
  readonly reject: (error: unknown) => void;
}

/** Options of {@link IngestPipeline}. */
export interface IngestPipelineOptions {
  /**
   * Most events committed in one transaction. Requests that arrive while a transaction runs wait and are
   * committed together in the next one (group commit), so throughput grows with concurrency.
   * @default 2000
   */
  readonly maxBatchEvents?: number;
  /** Clock for received_at. */
  readonly now?: () => number;
}

/**
 * The one write path of the server: HTTP, batch and file ingest (and any later stream consumer) submit
 * validated, normalised events here. Each submit resolves only after its events are committed: raw events and
 * the lineage model derived from them in the same transaction. One transaction runs at a time; everything
 * submitted meanwhile is committed together next, and every request in the group is then acknowledged.
 */
export class IngestPipeline {
  readonly #db: Db;
  readonly #state: ModelState;
  readonly #listeners: CommitListener[] = [];
  readonly #maxBatchEvents: number;
  readonly #now: () => number;
  #queue: Pending[] = [];
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(db: Db, state: ModelState, options: IngestPipelineOptions = {}) {
    this.#db = db;
    this.#state = state;
    this.#maxBatchEvents = options.maxBatchEvents ?? 2000;
    this.#now = options.now ?? Date.now;
  }

  /** Registers a listener called with each committed changeset. */
  onCommit(listener: CommitListener): void {
    this.#listeners.push(listener);
  }

  /** Commits `events`; resolves with one outcome per event once they are durable. */
  submit(events: readonly NormalizedEvent[]): Promise<EventOutcome[]> {
    if (this.#closed) {
      return Promise.reject(
        new HeadwaterError('SHUTTING_DOWN', 'The server is shutting down; retry shortly.'),
      );
    }
    if (events.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.#queue.push({ events, resolve, reject });
      this.#running ??= this.#drain().finally(() => {
        this.#running = undefined;
      });
    });
  }

  /**
   * Runs a write that does not come from events (a soft delete, a tag) between two commits, so that it and the
   * writer's mirror of the model never see each other half-done. `fn` gets the store and the mirror.
   */
  exclusive<T>(fn: (db: Db, state: ModelState) => Promise<T>): Promise<T> {
    const result = this.#lock.then(() => fn(this.#db, this.#state));
    this.#lock = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  #lock: Promise<void> = Promise.resolve();

  /** Stops taking events and waits until everything already submitted is committed. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    // Let requests that arrive in the same tick join the first group.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const group: Pending[] = [];
      let size = 0;
      while (
        this.#queue.length > 0 &&
        (group.length === 0 || size + this.#queue[0]!.events.length <= this.#maxBatchEvents)
      ) {
        const next = this.#queue.shift()!;
        group.push(next);
        size += next.events.length;
      }
      try {
        const outcomes = await this.exclusive(() => this.#commit(group.flatMap((pending) => pending.events)));
        let offset = 0;
        for (const pending of group) {
          pending.resolve(outcomes.slice(offset, offset + pending.events.length));
          offset += pending.events.length;
        }
      } catch (error) {
        if (group.length === 1) {
          group[0]!.reject(error);
          continue;
        }
        // One request's events made the group fail: commit each request alone so the others still land.
        for (const pending of group) {
          try {
            pending.resolve(await this.exclusive(() => this.#commit(pending.events)));
          } catch (single) {
            pending.reject(single);
          }
        }
      }
    }
  }

  async #commit(events: readonly NormalizedEvent[]): Promise<EventOutcome[]> {
    const firstIndex = new Map<string, number>();
    const unique: NormalizedEvent[] = [];
    for (const event of events) {
      if (!firstIndex.has(event.hash)) {
        firstIndex.set(event.hash, unique.length);
        unique.push(event);
      }
    }
    const state = this.#state;
    const runUuids: string[] = [];
    for (const event of unique) {
      if (event.run) runUuids.push(event.run.uuid);
      if (event.run?.parent) runUuids.push(event.run.parent.runUuid);
    }
    // Two round trips per batch, whatever its size: read what is already stored, then write events and
    // model in one statement (atomic on its own, so no BEGIN/COMMIT trips either).
    const { stored, runs } = await readBeforeWrite(
      this.#db,
      unique.map((event) => event.hash),
      state.missingRuns(runUuids),
    );
    state.addRuns(runs);
    const fresh = unique.filter((event) => !stored.has(event.hash));
    const changes = deriveChanges(state, fresh);
    const firstId = state.next.event;
    state.next.event += fresh.length;
    await writeBatch(this.#db, fresh, firstId, this.#now(), changes);
    applyChangeset(state, changes);
    for (const listener of this.#listeners) listener(changes);
    const seen = new Set<string>();
    return events.map((event) => {
      if (!stored.has(event.hash) && !seen.has(event.hash)) {
        seen.add(event.hash);
        return 'stored';
      }
      return 'duplicate';
    });
  }
}
