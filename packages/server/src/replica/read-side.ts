import { ColumnGraph } from '../read-model/column-graph.js';
import { LineageGraph } from '../read-model/lineage-graph.js';
import type { Db, Queryable } from '../store/db.js';
import type { CatalogEdit } from '../store/edits.js';
import type { FeedEntry, ReadDelta } from '../store/read-delta.js';
import { readAliases } from '../store/queries/aliases.js';
import { FEED_PAGE, readFeedEnd, readFeedPage } from '../store/queries/replication.js';
import { ReadModel } from '../store/read-model.js';

/** What the read side reports about how far it has come (see /readyz). */
export interface ReadSideStatus {
  /** The last commit-feed entry applied. */
  readonly applied: number;
  /** The last entry the feed was seen to hold. */
  readonly feedEnd: number;
  /** When the last entry applied was committed (ms since the epoch), if known. */
  readonly appliedCommittedAt: number | undefined;
  /**
   * Set while entries this replica never applied have been pruned from the feed, until it has reloaded its
   * state from the store (it does so by itself).
   */
  readonly missed: string | undefined;
}

/**
 * What every replica holds in memory for readers — the read model, the lineage and column graphs — kept in
 * step with the store through the commit feed (migration 010). The writer applies each of its own commits
 * directly, before acknowledging it; every replica (the writer too, as a safety net) also reads the entries it
 * has not applied from the feed, in order. Applying is serialized, and entries at or below the last one
 * applied are skipped, so whichever path brings an entry first, each is applied once and in order.
 *
 * Memory: nothing beyond the structures it feeds.
 */
export class ReadSide {
  readonly #db: Db;
  readonly model: ReadModel;
  readonly #graph: LineageGraph;
  readonly #columnGraph: ColumnGraph;
  readonly #batchListeners: ((delta: ReadDelta) => void)[] = [];
  readonly #exclusiveListeners: (() => void)[] = [];
  readonly #onError: (error: unknown, message: string) => void;
  #applied: number;
  #feedEnd: number;
  #appliedCommittedAt: number | undefined;
  #missed: string | undefined;
  #lock: Promise<void> = Promise.resolve();
  /** Jobs whose cutoff must be read again from the store (rare: a late event moved a completed run's start). */
  readonly #refresh = new Set<number>();

  constructor(
    db: Db,
    parts: { model: ReadModel; graph: LineageGraph; columnGraph: ColumnGraph; applied: number },
    onError: (error: unknown, message: string) => void,
  ) {
    this.#db = db;
    this.model = parts.model;
    this.#graph = parts.graph;
    this.#columnGraph = parts.columnGraph;
    this.#applied = parts.applied;
    this.#feedEnd = parts.applied;
    this.#onError = onError;
  }

  /** The feed's last entry now: read before the state a replica loads at start, which then applies what follows. */
  static async feedEnd(db: Queryable): Promise<number> {
    return (await readFeedEnd(db)) ?? 0;
  }

  get status(): ReadSideStatus {
    return {
      applied: this.#applied,
      feedEnd: this.#feedEnd,
      appliedCommittedAt: this.#appliedCommittedAt,
      missed: this.#missed,
    };
  }

  /** Registers a listener told of each batch applied (e.g. to drop cached answers it changed). */
  onBatch(listener: (delta: ReadDelta) => void): void {
    this.#batchListeners.push(listener);
  }

  /**
   * Registers a listener told after each write that did not come from events (tags, soft deletes), each chunk of
   * retention and each reload: what it caches may be stale.
   */
  onExclusive(listener: () => void): void {
    this.#exclusiveListeners.push(listener);
  }

  /**
   * Applies a batch this process committed as entry `seq`, after the entries before it (read from the feed if
   * they were missed: a write whose outcome was unknown may have committed).
   */
  committed(seq: number, delta: ReadDelta): Promise<void> {
    return this.#locked(async () => {
      if (seq <= this.#applied) return;
      if (seq > this.#applied + 1) await this.#catchUp(seq - 1);
      // A reload while catching up may have brought this very entry.
      if (seq <= this.#applied) return;
      await this.#apply(seq, { kind: 'batch', delta }, Date.now());
    });
  }

  /**
   * Applies an edit (a write that did not come from events: soft deletes, namespaces, aliases, tags; the feed
   * calls it `exclusive`) or a chunk of retention that this process committed as entry `seq`, after the entries
   * before it, as {@link committed} does for a batch. With `seq` undefined (the write failed), only drops what the
   * listeners cache.
   */
  edited(seq: number | undefined, edit: CatalogEdit): Promise<void> {
    if (seq === undefined) {
      for (const listener of this.#exclusiveListeners) listener();
      return Promise.resolve();
    }
    return this.#locked(async () => {
      if (seq <= this.#applied) return;
      if (seq > this.#applied + 1) await this.#catchUp(seq - 1);
      // Reading the feed may have brought this entry, and with it the edit (read from the store after it committed).
      if (seq <= this.#applied) return;
      for (const row of edit.namespaces)
        this.model.setNamespace({ id: row.id, name: row.name, isHidden: row.isHidden });
      for (const id of edit.hidden.namespaces) this.model.setHidden('namespace', id, true);
      for (const id of edit.hidden.datasets) {
        this.model.setHidden('dataset', id, true);
        this.#graph.setHidden('dataset', id, true);
      }
      for (const id of edit.hidden.jobs) {
        this.model.setHidden('job', id, true);
        this.#graph.setHidden('job', id, true);
      }
      // Shared with the column graph.
      if (edit.aliases !== undefined) this.#graph.aliases.replace(edit.aliases);
      for (const listener of this.#exclusiveListeners) listener();
      this.#applied = seq;
      this.#appliedCommittedAt = Date.now();
      if (seq > this.#feedEnd) this.#feedEnd = seq;
    });
  }

  /** Reads and applies the feed's entries after the last one applied (all of them, page by page). */
  catchUp(): Promise<void> {
    return this.#locked(() => this.#catchUp(Number.MAX_SAFE_INTEGER));
  }

  async #catchUp(until: number): Promise<void> {
    while (this.#applied < until) {
      const rows = await readFeedPage(this.#db, this.#applied, until);
      if (rows.length === 0) return;
      if (rows[0]!.seq !== this.#applied + 1) {
        this.#missed = `commit-feed entries ${this.#applied + 1}-${rows[0]!.seq - 1} were pruned before this replica read them`;
        this.#onError(undefined, `${this.#missed}; reloading its state from the store`);
        await this.#reload();
        continue;
      }
      for (const row of rows) await this.#apply(row.seq, row.entry, row.committed_at.getTime());
      if (rows.length < FEED_PAGE) return;
    }
  }

  /**
   * Reloads the read model and both graphs from the store, as a replica does at start, aside (readers go on
   * with what they have meanwhile), and swaps them in at once; entries after the feed's end as read first are
   * then applied on top (applying an entry twice changes nothing).
   */
  async #reload(): Promise<void> {
    const feedEnd = await ReadSide.feedEnd(this.#db);
    const model = await ReadModel.load(this.#db);
    const graph = new LineageGraph();
    await graph.load(this.#db);
    const columnGraph = new ColumnGraph();
    await columnGraph.load(this.#db);
    const aliases = await readAliases(this.#db);
    this.model.copy(model);
    this.#graph.aliases.replace(aliases);
    this.#graph.adopt(graph);
    this.#columnGraph.adopt(columnGraph);
    this.#refresh.clear();
    this.#applied = feedEnd;
    if (feedEnd > this.#feedEnd) this.#feedEnd = feedEnd;
    this.#missed = undefined;
    // Cached answers are of the state replaced.
    for (const listener of this.#exclusiveListeners) listener();
    this.#onError(undefined, `reloaded the state from the store, up to commit ${feedEnd}`);
  }

  /** Notes the feed's last entry as seen by a poll (for the lag in /readyz). */
  sawFeedEnd(seq: number): void {
    if (seq > this.#feedEnd) this.#feedEnd = seq;
  }

  async #apply(seq: number, entry: FeedEntry, committedAt: number): Promise<void> {
    if (entry.kind === 'batch') {
      const { delta } = entry;
      this.model.apply(delta);
      for (const jobId of this.#graph.apply(delta)) this.#refresh.add(jobId);
      this.#columnGraph.apply(delta);
      for (const listener of this.#batchListeners) listener(delta);
      if (this.#refresh.size > 0) {
        try {
          await this.#graph.refresh(this.#db, [...this.#refresh]);
          this.#refresh.clear();
        } catch (error) {
          // Tried again after the next batch.
          this.#onError(error, 'could not refresh the lineage of jobs whose cutoff moved back');
        }
      }
    } else if (entry.kind === 'retention') {
      // Only history went: names, flags and the graph of now are as they were; cached answers may not be.
      for (const listener of this.#exclusiveListeners) listener();
    } else {
      // Its effect cannot be derived from the entry: read the names and flags again, and swap them in at once.
      const [fresh, aliases] = await Promise.all([ReadModel.load(this.#db), readAliases(this.#db)]);
      this.model.copy(fresh);
      // Aliases are declared and removed by such writes (store/edits.ts).
      this.#graph.aliases.replace(aliases);
      for (const row of fresh.datasets.values()) this.#graph.setHidden('dataset', row.id, row.isHidden);
      for (const row of fresh.jobs.values()) this.#graph.setHidden('job', row.id, row.isHidden);
      for (const listener of this.#exclusiveListeners) listener();
    }
    this.#applied = seq;
    this.#appliedCommittedAt = committedAt;
    if (seq > this.#feedEnd) this.#feedEnd = seq;
  }

  #locked(fn: () => Promise<void>): Promise<void> {
    const result = this.#lock.then(fn);
    this.#lock = result.catch(() => undefined);
    return result;
  }
}
