import type { Db } from './db.js';

/** Events stored since the last ANALYZE that call for another: a tenth of the store, and at least this many. */
const MIN_NEW_EVENTS = 20_000;

/**
 * Keeps the query planner's statistics fresh on the embedded store. PostgreSQL's autovacuum analyses tables as
 * they grow; PGlite has no autovacuum, so its planner works from guesses and, for instance, scans a whole history
 * table where an index would find a few rows. This runs ANALYZE at start if the store was never analysed (and holds 20,000 events), and
 * whenever the events committed since the last run reach a tenth of those stored (at least 20,000): rarely, as the
 * store grows by steps of 10 %. One ANALYZE at a time, off the request path; `close` waits for a running one.
 */
export class StatisticsKeeper {
  readonly #db: Db;
  readonly #minNewEvents: number;
  #stored: number;
  #sinceLast = 0;
  #running: Promise<void> | undefined;

  /** `stored`: about how many events the store holds. */
  constructor(db: Db, stored: number, minNewEvents = MIN_NEW_EVENTS) {
    this.#db = db;
    this.#stored = stored;
    this.#minNewEvents = minNewEvents;
    // Statistics are kept with the store: analyse at start only a store never analysed (reltuples -1).
    this.#running = db
      .query<{ never: boolean }>(`SELECT reltuples < 0 AS never FROM pg_class WHERE relname = 'events'`)
      .then(
        ([row]) => {
          this.#running = undefined;
          // Statistics of a nearly empty store would tell the planner its tables stay empty as they fill up.
          if (row?.never && stored >= minNewEvents) this.#analyze();
        },
        () => undefined,
      );
  }

  /** Counts committed events; analyses when enough have come. */
  committed(events: number): void {
    this.#stored += events;
    this.#sinceLast += events;
    if (this.#sinceLast >= Math.max(this.#minNewEvents, this.#stored / 10)) this.#analyze();
  }

  /** Waits for a running ANALYZE. */
  async close(): Promise<void> {
    while (this.#running) await this.#running;
  }

  #analyze(): void {
    if (this.#running) return;
    this.#sinceLast = 0;
    // A sample of 3,000 rows per table (statistics target 10, not 100) is plenty for these plans, and ten times
    // cheaper: the store's one thread is busy for the whole ANALYZE.
    this.#running = this.#db
      .query('SET default_statistics_target = 10')
      .then(() => this.#db.query('ANALYZE'))
      .then(
        () => undefined,
        // Statistics are an optimisation: a failed ANALYZE (the store closing) changes no answer.
        () => undefined,
      )
      .finally(() => (this.#running = undefined));
  }
}
