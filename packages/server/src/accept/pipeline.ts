import { HeadwaterError } from '../core/errors.js';
import type { Db, Queryable } from '../store/db.js';
import { isStoreUnavailable, type StoreHealth } from '../store/availability.js';
import { ModelState } from '../store/model-state.js';
import { readDelta, type ReadDelta } from '../store/read-delta.js';
import { readCutoffs, type CutoffRow } from '../store/job-cutoffs.js';
import { readRuns, recordExclusiveWrite, writeBatch } from '../store/writer.js';
import {
  applyEdit,
  declareAlias,
  hide,
  NO_EDIT,
  putNamespace,
  putOwners,
  putSource,
  removeAlias,
  setTags,
  type AliasDeclaration,
  type CatalogEdit,
  type Edited,
  type Hideable,
  type NamespacePut,
  type OwnersPut,
  type SourcePut,
  type TagChange,
} from '../store/edits.js';
import type { AliasRecord } from '../store/queries/aliases.js';
import type { NamespaceRecord } from '../store/queries/namespaces.js';
import type { SourceRecord } from '../store/queries/sources.js';
import { findVersions } from '../store/queries/versions.js';
import { deriveChanges } from '../derive/derive.js';
import { applyChangeset, type Changeset } from '../store/changeset.js';
import type { NormalizedEvent } from '../model/normalize.js';

/** What became of one submitted event. */
export type EventOutcome = 'stored' | 'duplicate';

/** A committed batch: its changes, what readers learn from them, and its number in the commit feed. */
export interface Commit {
  readonly changes: Changeset;
  readonly delta: ReadDelta;
  readonly seq: number;
}

/** Told of each group write: events written, milliseconds taken, whether it failed. */
export type WriteObserver = (events: number, ms: number, failed: boolean) => void;

/**
 * Called after each committed batch, e.g. to update the lineage graph index. Listeners see batches one at a
 * time, in commit order; a batch is acknowledged once its listeners have settled, so a reader that asks after
 * the acknowledgement sees it.
 */
export type CommitListener = (commit: Commit) => void | Promise<void>;

/**
 * Called after each committed edit (a write that did not come from events) or chunk of retention, with its number
 * in the commit feed and what it changed in memory; with undefined after one that failed.
 */
export type EditListener = (seq: number | undefined, edit: CatalogEdit) => void | Promise<void>;

interface Pending {
  readonly events: readonly NormalizedEvent[];
  readonly resolve: (outcomes: EventOutcome[]) => void;
  readonly reject: (error: unknown) => void;
  /** Commit this request in a group of its own (after a group it was part of failed). */
  alone?: boolean;
}

/** A batch ready to be written: its distinct events, their first id and the model changes. */
interface PreparedBatch {
  readonly unique: readonly NormalizedEvent[];
  readonly firstId: number;
  readonly changes: Changeset;
  readonly delta: ReadDelta;
}

/** A failed write and the requests it carried. */
interface FailedWrite {
  readonly group: readonly Pending[];
  readonly error: unknown;
}

/**
 * Writes in flight at once: one executing and one prepared behind it, so that deriving the next batch
 * overlaps the store's work on the current one.
 */
const MAX_WRITES_IN_FLIGHT = 2;

/** Options of {@link IngestPipeline}. */
export interface IngestPipelineOptions {
  /**
   * Most events committed in one transaction. Requests that arrive while a transaction runs wait and are
   * committed together in the next one (group commit), so throughput grows with concurrency.
   * @default 2000
   */
  readonly maxBatchEvents?: number;
  /**
   * Most events waiting to be committed. Beyond it, submissions are refused at once with OVERLOADED (503,
   * Retry-After), so a burst costs producers a retry instead of the server its memory.
   * @default 100000
   */
  readonly maxQueuedEvents?: number;
  /** Clock for received_at. */
  readonly now?: () => number;
  /**
   * Whether the store can be written now. While it cannot, submissions are refused at once with
   * STORE_UNAVAILABLE (retriable) instead of waiting on a store that is not there.
   */
  readonly health?: StoreHealth;
  /** Told when a commit listener fails (the batch is committed either way). */
  readonly onListenerError?: (error: unknown) => void;
}

/**
 * The one write path of the server: HTTP, batch and file ingest (and any later stream consumer) submit
 * validated, normalised events here. Each submit resolves only after its events are committed: raw events and
 * the lineage model derived from them in one atomic statement.
 *
 * Requests that arrive while a batch is being written are grouped into the next batch (group commit), so
 * throughput grows with concurrency. Batches are written strictly in order, and the next one is prepared
 * (deduplicated and derived) while the previous one is written: the writer's mirror of the model takes each
 * changeset as soon as it is derived. If a write fails, the writes queued behind it do not run, the mirror is
 * reloaded from the store, and the requests are retried one at a time, so one bad request fails alone and
 * nothing unacknowledged is half-applied.
 *
 * Writes that do not come from events (edits: a namespace declared, a soft delete, tags, aliases, a source; see
 * store/edits.ts) go through its named methods, between two batches. So the writer alone hands out ids and
 * changes its mirror, and the read side (the commit and edit listeners) learns of a batch or an edit only once it
 * has committed.
 */
export class IngestPipeline {
  readonly #db: Db;
  #state: ModelState;
  readonly #listeners: CommitListener[] = [];
  readonly #maxBatchEvents: number;
  readonly #maxQueuedEvents: number;
  #queuedEvents = 0;
  readonly #now: () => number;
  #queue: Pending[] = [];
  #running: Promise<void> | undefined;
  #closed = false;
  /** Settles (never rejects) when each in-flight write has been handled. */
  readonly #writes = new Set<Promise<void>>();
  /** The last write issued: the next one runs only if it succeeded. */
  #chain: Promise<unknown> = Promise.resolve();
  #failed: FailedWrite[] = [];
  /** The listeners' work on the batches committed so far (never rejects). */
  #notified: Promise<void> = Promise.resolve();
  #lock: Promise<void> = Promise.resolve();
  readonly #health: StoreHealth | undefined;
  /** The mirror took changes that may not have committed (the store went away mid-write): reload it first. */
  #mirrorStale = false;

  constructor(db: Db, state: ModelState, options: IngestPipelineOptions = {}) {
    this.#db = db;
    this.#state = state;
    this.#maxBatchEvents = options.maxBatchEvents ?? 2000;
    this.#maxQueuedEvents = options.maxQueuedEvents ?? 100_000;
    this.#now = options.now ?? Date.now;
    this.#health = options.health;
    this.#onListenerError = options.onListenerError ?? (() => undefined);
  }

  readonly #onListenerError: (error: unknown) => void;

  /**
   * Makes the next batch rebuild the mirror from the store first: this process has just become the writer
   * (again), and another may have written since the mirror was built.
   */
  forgetMirror(): void {
    this.#mirrorStale = true;
  }

  /** The writer's mirror of the model: ahead of the store while batches are in flight; not for readers. */
  get mirror(): ModelState {
    return this.#state;
  }

  /** Events accepted and not yet committed (the queue depth metric). */
  get queuedEvents(): number {
    return this.#queuedEvents;
  }

  /** Registers an observer told of each group write: its events, how long it took, and whether it failed. */
  onWrite(observer: WriteObserver): void {
    this.#writeObservers.push(observer);
  }

  readonly #writeObservers: WriteObserver[] = [];

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
    if (this.#health && !this.#health.available) return Promise.reject(this.#health.unavailableError());
    // One request larger than the whole queue is still taken when the queue is empty.
    if (this.#queuedEvents > 0 && this.#queuedEvents + events.length > this.#maxQueuedEvents) {
      return Promise.reject(
        new HeadwaterError(
          'OVERLOADED',
          `${this.#queuedEvents} events are waiting to be committed (the most is ${this.#maxQueuedEvents}); retry in 1 s.`,
          { retryAfterSeconds: 1 },
        ),
      );
    }
    this.#queuedEvents += events.length;
    const settle = () => {
      this.#queuedEvents -= events.length;
    };
    return new Promise<EventOutcome[]>((resolve, reject) => {
      this.#queue.push({
        events,
        resolve: (outcomes) => {
          settle();
          resolve(outcomes);
        },
        reject: (error) => {
          settle();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      });
      this.#running ??= this.#drain().finally(() => {
        this.#running = undefined;
      });
    });
  }

  /** Creates a namespace or updates its owner and description (un-hiding it); a new one gets its id here. */
  putNamespace(put: NamespacePut): Promise<NamespaceRecord> {
    return this.#edit((tx, mirror) => putNamespace(tx, mirror, put, new Date(this.#now())));
  }

  /**
   * Creates or updates a source as Marquez's legacy `PUT /api/v1/sources/{name}` declares it. OpenLineage has
   * no event for a source on its own (only a dataset's dataSource facet names one), so this is the one write
   * of the legacy API that is not an event: the writer gives the source its id and its mirror learns the row,
   * so that events naming the source by its dataSource facet find it.
   */
  declareSource(source: SourcePut): Promise<SourceRecord> {
    return this.#edit((tx, mirror) => putSource(tx, mirror, source, new Date(this.#now())));
  }

  /**
   * Soft-deletes a namespace (with its datasets and jobs), a dataset or a job: hidden until the next event that
   * names it.
   */
  hide(kind: Hideable, id: number): Promise<void> {
    return this.#edit((tx) => hide(tx, kind, id));
  }

  /** Puts tags on datasets, fields and jobs (a tag that does not exist yet is created), in one transaction. */
  tag(changes: readonly TagChange[]): Promise<void> {
    return this.#edit((tx) => setTags(tx, changes, true));
  }

  /** Takes tags off datasets, fields and jobs, in one transaction. */
  untag(changes: readonly TagChange[]): Promise<void> {
    return this.#edit((tx) => setTags(tx, changes, false));
  }

  /** Declares who owns a dataset or job (replacing the last declaration; an empty list withdraws it). */
  declareOwners(put: OwnersPut): Promise<void> {
    return this.#edit((tx) => putOwners(tx, put, new Date(this.#now())));
  }

  /** Declares that dataset `datasetId` is dataset `targetId`, unless an alias in the store stands in the way. */
  declareAlias(datasetId: number, targetId: number, actor: string): Promise<AliasDeclaration> {
    return this.#edit((tx) => declareAlias(tx, datasetId, targetId, actor));
  }

  /** Removes the alias that dataset `datasetId` is `targetId`; resolves with it, or undefined if there was none. */
  removeAlias(datasetId: number, targetId: number): Promise<AliasRecord | undefined> {
    return this.#edit((tx) => removeAlias(tx, datasetId, targetId));
  }

  /**
   * Runs an edit (a write that does not come from events, see store/edits.ts) when no batch is being prepared or
   * written: in one transaction with its commit-feed entry, fenced by the writer's epoch, so it commits whole or
   * not at all. Only once it has committed do the mirror and then the read side (the edit listeners) take what
   * it changed, so that neither ever holds an edit the store does not.
   */
  #edit<T>(write: (tx: Queryable, mirror: ModelState) => Promise<Edited<T>>): Promise<T> {
    return this.#locked(async () => {
      await Promise.all(this.#writes);
      // After a failed write, or when this process has just become the writer (another may have written since),
      // the mirror is behind the store: the ids it would hand out may be taken.
      if (this.#mirrorStale) await this.#reloadMirror();
      const epoch = this.#writerEpoch();
      let seq: number | undefined;
      let edited: Edited<T>;
      try {
        edited = await this.#db.transaction(async (tx) => {
          const value = await write(tx, this.#state);
          if (value.edit !== undefined) seq = await recordExclusiveWrite(tx, epoch);
          return value;
        });
      } catch (error) {
        // The store went away: whether the transaction committed is unknown, so the mirror is rebuilt first.
        if (this.#unavailable(error)) this.#mirrorStale = true;
        await this.#edited(undefined, NO_EDIT);
        throw error;
      }
      if (edited.edit !== undefined) {
        applyEdit(this.#state, edited.edit);
        await this.#edited(seq, edited.edit);
      }
      return edited.result;
    });
  }

  /**
   * Runs a maintenance write (a chunk of retention) like an edit, in one transaction with its commit-feed entry,
   * fenced by the writer's epoch: it commits whole or not at all. `apply` then brings the writer's mirror in step,
   * only once the write has committed (a mirror that dropped a version the store still holds would give it a
   * second id).
   */
  maintain<T>(fn: (tx: Queryable) => Promise<T>, apply: (result: T, state: ModelState) => void): Promise<T> {
    return this.#locked(async () => {
      await Promise.all(this.#writes);
      const epoch = this.#writerEpoch();
      let seq: number | undefined;
      try {
        const result = await this.#db.transaction(async (tx) => {
          const value = await fn(tx);
          seq = await recordExclusiveWrite(tx, epoch, { kind: 'retention' });
          return value;
        });
        apply(result, this.#state);
        return result;
      } finally {
        await this.#edited(seq, NO_EDIT);
      }
    });
  }

  /**
   * Registers a listener called after each edit and each chunk of retention, with its number in the commit feed
   * and what it changed in memory (undefined and {@link NO_EDIT} if it failed, so that caches it may have staled
   * are dropped all the same). An edit is answered once its listeners have settled, so a reader that asks after
   * the answer sees it.
   */
  onEdit(listener: EditListener): void {
    this.#editListeners.push(listener);
  }

  readonly #editListeners: EditListener[] = [];

  /** Tells the edit listeners; a listener's failure is its own (the edit is committed either way). */
  async #edited(seq: number | undefined, edit: CatalogEdit): Promise<void> {
    for (const listener of this.#editListeners) {
      try {
        await listener(seq, edit);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** The epoch this process writes with, or STORE_UNAVAILABLE if it is not the writer now (see Db.lead). */
  #writerEpoch(): number {
    const epoch = this.#db.epoch;
    if (epoch === undefined) {
      throw new HeadwaterError(
        'STORE_UNAVAILABLE',
        'This server is not the writer now (another server holds the writer lock, or it is being taken again); retry shortly.',
        { retryAfterSeconds: 1 },
      );
    }
    return epoch;
  }

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#lock.then(fn);
    this.#lock = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Stops taking events and waits until everything already submitted is committed. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running) await this.#running;
  }

  #takeGroup(): Pending[] {
    const first = this.#queue.shift()!;
    const group = [first];
    if (first.alone) return group;
    let size = first.events.length;
    while (
      this.#queue.length > 0 &&
      !this.#queue[0]!.alone &&
      size + this.#queue[0]!.events.length <= this.#maxBatchEvents
    ) {
      const next = this.#queue.shift()!;
      group.push(next);
      size += next.events.length;
    }
    return group;
  }

  async #drain(): Promise<void> {
    // Let requests that arrive in the same tick join the first group.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (;;) {
      if (this.#failed.length > 0) await this.#recover();
      if (this.#health && !this.#health.available && this.#queue.length > 0) {
        // Requests queued before the store went away: answer them now rather than try each against it.
        const error = this.#health.unavailableError();
        for (const pending of this.#queue.splice(0)) pending.reject(error);
      }
      if (this.#queue.length === 0) {
        if (this.#writes.size === 0) return;
        await Promise.race(this.#writes);
        continue;
      }
      while (this.#writes.size >= MAX_WRITES_IN_FLIGHT) await Promise.race(this.#writes);
      if (this.#failed.length > 0) continue;
      const group = this.#takeGroup();
      const events = group.flatMap((pending) => pending.events);
      let batch: PreparedBatch;
      try {
        batch = await this.#locked(() => this.#prepare(events));
      } catch (error) {
        if (this.#unavailable(error)) {
          const answer = this.#health?.unavailableError(error) ?? error;
          for (const pending of group) pending.reject(answer);
          continue;
        }
        // Nothing was applied: a request that fails alone is rejected, the others are retried alone.
        this.#requeue(group, error);
        continue;
      }
      const write = this.#chain.then(async () => {
        const epoch = this.#writerEpoch();
        await this.#db.checkWritable();
        const started = performance.now();
        const observe = (failed: boolean) => {
          for (const observer of this.#writeObservers)
            observer(batch.unique.length, performance.now() - started, failed);
        };
        try {
          // Stale cutoffs are worked out here, where every earlier batch has committed and none is in flight.
          const state = this.#state;
          const stale = [...state.staleCutoffs];
          const fixes = new Map<number, CutoffRow | null>(stale.map((jobId) => [jobId, null]));
          for (const row of await readCutoffs(this.#db, stale)) fixes.set(row.job_id, row);
          const written = await writeBatch(
            this.#db,
            batch.unique,
            batch.firstId,
            this.#now(),
            batch.changes,
            batch.delta,
            epoch,
            fixes,
          );
          for (const { jobId, stale } of written.cutoffs) {
            if (stale) state.staleCutoffs.add(jobId);
            else state.staleCutoffs.delete(jobId);
          }
          observe(false);
          return written;
        } catch (error) {
          observe(true);
          throw error;
        }
      });
      this.#chain = write;
      const handled: Promise<void> = write
        .then(
          async ({ inserted, seq }) => {
            await this.#notify({ changes: batch.changes, delta: batch.delta, seq });
            // The first copy of an event the store did not have is 'stored'; everything else is a duplicate.
            for (const pending of group) {
              pending.resolve(
                pending.events.map((event) => (inserted.delete(event.hash) ? 'stored' : 'duplicate')),
              );
            }
          },
          (error: unknown) => {
            this.#failed.push({ group, error });
          },
        )
        .finally(() => this.#writes.delete(handled));
      this.#writes.add(handled);
    }
  }

  /** After a failed write: let the rest settle, reload the mirror, and retry the requests one by one. */
  async #recover(): Promise<void> {
    await Promise.all(this.#writes);
    const failed = this.#failed;
    this.#failed = [];
    this.#chain = Promise.resolve();
    this.#mirrorStale = true;
    const first = failed[0]!.error;
    if (!this.#unavailable(first)) {
      try {
        await this.#locked(() => this.#reloadMirror());
      } catch (error) {
        if (!this.#unavailable(error)) throw error;
      }
    }
    if (this.#mirrorStale) {
      // The store went away: whether the writes in flight committed is unknown, so none is acknowledged (a retry
      // is safe: events already stored are found by their hash and stored once).
      const answer = this.#health?.unavailableError(first) ?? first;
      for (const { group } of failed) for (const pending of group) pending.reject(answer);
      return;
    }
    // The first failure is the culprit; the writes behind it never ran and are retried as they were.
    const retry: Pending[] = [];
    failed.forEach(({ group, error }, index) => {
      if (index === 0) this.#requeue(group, error, retry);
      else retry.push(...group);
    });
    this.#queue.unshift(...retry);
  }

  /** A request that failed in a group of its own is rejected; the requests of a larger group are retried alone. */
  #requeue(group: readonly Pending[], error: unknown, into?: Pending[]): void {
    if (group.length === 1) {
      group[0]!.reject(error);
      return;
    }
    for (const pending of group) pending.alone = true;
    if (into) into.push(...group);
    else this.#queue.unshift(...group);
  }

  /** Tells the listeners of a committed batch, after those of the batches before it. */
  #notify(commit: Commit): Promise<void> {
    const done = this.#notified.then(async () => {
      for (const listener of this.#listeners) await listener(commit);
    });
    // A listener's failure is its own (the batch is committed either way): the next batch is still told.
    const settled = done.catch((error: unknown) => this.#onListenerError(error));
    this.#notified = settled;
    return settled;
  }

  /** Whether `error` means the store is away (and marks it so), as opposed to a fault of the request. */
  #unavailable(error: unknown): boolean {
    if (!isStoreUnavailable(error)) return false;
    this.#health?.markDown(error);
    return true;
  }

  /**
   * Rebuilds the mirror from the store, aside, and swaps it in whole. Ids handed out to a batch that failed are
   * not handed out again: nothing outside the writer saw them, but an id is never reused, so no cache keyed by
   * id can go stale.
   */
  async #reloadMirror(): Promise<void> {
    const fresh = new ModelState();
    await fresh.load(this.#db);
    for (const key of Object.keys(fresh.next) as (keyof ModelState['next'])[]) {
      fresh.next[key] = Math.max(fresh.next[key], this.#state.next[key]);
    }
    this.#state = fresh;
    this.#mirrorStale = false;
  }

  /**
   * Derives a batch's changes (after reading the runs the mirror lacks) and applies them to the mirror. The
   * write itself is issued by the caller, in order.
   */
  async #prepare(events: readonly NormalizedEvent[]): Promise<PreparedBatch> {
    if (this.#mirrorStale) await this.#reloadMirror();
    const unique: NormalizedEvent[] = [];
    const seenInBatch = new Set<string>();
    for (const event of events) {
      if (!seenInBatch.has(event.hash)) {
        seenInBatch.add(event.hash);
        unique.push(event);
      }
    }
    const state = this.#state;
    const runUuids: string[] = [];
    for (const event of unique) {
      if (event.run) runUuids.push(event.run.uuid);
      if (event.run?.parent) runUuids.push(event.run.parent.runUuid);
    }
    // Only runs the mirror lacks need a read; duplicates need none (see writeBatch).
    state.addRuns(await readRuns(this.#db, state.missingRuns(runUuids)));
    const firstId = state.next.event;
    const next = { ...state.next };
    let changes = deriveChanges(state, unique, firstId);
    // Versions the batch would create that the mirror has forgotten are known to the store: learn them and
    // derive again (derivation changes nothing in the mirror but its id counters, put back first, and its memo of
    // version uuids, whose entries are pure results and stay true).
    if (await learnVersions(this.#db, state, changes)) {
      Object.assign(state.next, next);
      changes = deriveChanges(state, unique, firstId);
    }
    const delta = readDelta(changes, state);
    applyChangeset(state, changes);
    state.next.event += unique.length;
    return { unique, firstId, changes, delta };
  }
}

/**
 * Reads from the store the versions `changes` would create that the mirror's version caches do not hold, when
 * they may have forgotten some (see VersionCache), and adds them to the caches. Returns whether any was found:
 * the batch must then be derived again, so that those events name the stored versions' ids.
 */
async function learnVersions(db: Queryable, state: ModelState, changes: Changeset): Promise<boolean> {
  let found = false;
  for (const [cache, created, kind] of [
    [state.datasetVersions, changes.datasetVersions, 'dataset'],
    [state.jobVersions, changes.jobVersions, 'job'],
  ] as const) {
    if (cache.complete || created.size === 0) continue;
    const rows = await findVersions(db, kind, [...created.keys()]);
    for (const row of rows) cache.set(row.version, { id: row.id, ownerId: row.owner });
    found ||= rows.length > 0;
  }
  return found;
}
