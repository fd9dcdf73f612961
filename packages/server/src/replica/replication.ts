import type { IngestPipeline } from '../accept/pipeline.js';
import { advertiseLeader, type Db } from '../store/db.js';
import { pruneFeed, readLeaderUrl } from '../store/queries/replication.js';
import { ReadSide } from './read-side.js';

/** The part a server plays among the replicas of one database. */
export type Role = 'writer' | 'follower';

/** How often a follower tries the writer lock, and every replica polls the feed besides LISTEN. */
const TICK_MS = 1_000;

/** How often the writer prunes the feed. */
const PRUNE_EVERY_MS = 60_000;
/** While the store stays away, how often the loop says so again. */
const AWAY_LOG_EVERY_MS = 30_000;

/** What /readyz reports of replication. */
export interface ReplicationStatus {
  readonly role: Role;
  /** The writer lease's epoch this process writes with (writer only). */
  readonly epoch: number | undefined;
  /** Where the writer takes requests, as it advertised (a follower forwards writes there). */
  readonly writerUrl: string | undefined;
  readonly applied: number;
  readonly feedEnd: number;
  /** Seconds between now and the commit of the last entry applied, while entries are waiting; else 0. */
  readonly lagSeconds: number;
  readonly missed: string | undefined;
}

interface Logger {
  info(message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/**
 * Runs a server's part among the replicas that share one database: the one holding the writer lock writes
 * (its pipeline takes ingest), the others follow the commit feed and forward writes to it. A follower tries
 * the lock every second, so when the writer dies (its session ends and the lock with it) one follower takes
 * over within about a second: it raises the lease's epoch (which fences the old writer's writes), reads the
 * feed to its end, and rebuilds the writer's mirror before its first batch. A writer that loses its lock and
 * finds it taken becomes a follower.
 *
 * The embedded store has one server: it is always the writer and nothing here polls.
 */
export class Replication {
  readonly #db: Db;
  readonly #pipeline: IngestPipeline;
  readonly readSide: ReadSide;
  readonly #log: Logger;
  #role: Role = 'follower';
  #advertised: string | undefined;
  #writerUrl: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopListening: (() => Promise<void>) | undefined;
  #ticking: Promise<void> | undefined;
  #polling: Promise<void> | undefined;
  #pollAgain = false;
  #lastPrune = 0;
  #closed = false;
  /** Since when the store has been failing the loop, and when that was last logged. */
  #awaySince: number | undefined;
  #awayLogged = 0;
  readonly #roleListeners: ((role: Role) => void)[] = [];

  constructor(db: Db, pipeline: IngestPipeline, readSide: ReadSide, log: Logger) {
    this.#db = db;
    this.#pipeline = pipeline;
    this.readSide = readSide;
    this.#log = log;
  }

  get role(): Role {
    return this.#role;
  }

  /** Where writes go from a follower: the writer's advertised URL, if known. */
  get writerUrl(): string | undefined {
    return this.#writerUrl;
  }

  get status(): ReplicationStatus {
    const side = this.readSide.status;
    const behind = side.feedEnd > side.applied;
    return {
      role: this.#role,
      epoch: this.#role === 'writer' ? this.#db.epoch : undefined,
      writerUrl: this.#writerUrl,
      applied: side.applied,
      feedEnd: side.feedEnd,
      lagSeconds:
        behind && side.appliedCommittedAt !== undefined ? (Date.now() - side.appliedCommittedAt) / 1000 : 0,
      missed: side.missed,
    };
  }

  /** Registers a listener told when this server becomes the writer or a follower. */
  onRole(listener: (role: Role) => void): void {
    this.#roleListeners.push(listener);
  }

  /**
   * Takes the writer lock if it is free, else follows; then keeps trying, polling and listening.
   * `mirrorLoaded`: the pipeline's mirror was loaded after this server took the lock (so under its own lease, and
   * no other writer can have committed since): it is kept rather than rebuilt, which would double the start-up.
   */
  async start({ mirrorLoaded = false }: { mirrorLoaded?: boolean } = {}): Promise<void> {
    const epoch = await this.#db.lead(undefined);
    if (epoch !== undefined) await this.#becomeWriter(epoch, { mirrorFresh: mirrorLoaded });
    else this.#log.info('another server writes to this database: this one follows its commits');
    if (this.#db.kind === 'embedded') return;
    await this.#readWriter();
    // The notification's payload is the entry's number (see migration 010): the feed's end, known without a query.
    this.#stopListening = this.#db.listen('headwater_commit', (payload) => {
      const seq = Number(payload);
      if (payload !== undefined && Number.isSafeInteger(seq)) this.readSide.sawFeedEnd(seq);
      this.#poll(payload !== undefined);
    });
    this.#timer = setInterval(() => {
      this.#ticking ??= this.#tick().finally(() => (this.#ticking = undefined));
    }, TICK_MS);
    this.#timer.unref();
  }

  /** Records the URL this server takes requests at, for followers to forward writes to while it writes. */
  async advertise(url: string): Promise<void> {
    this.#advertised = url;
    const epoch = this.#db.epoch;
    if (this.#role === 'writer' && epoch !== undefined) {
      await advertiseLeader(this.#db, epoch, url);
      this.#writerUrl = url;
    }
  }

  /** Stops polling and listening (the store is closed by the caller). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#stopListening?.();
    await this.#ticking;
    await this.#polling;
  }

  /** Tells the loop to look again now (e.g. a forwarded write found no writer). */
  nudge(): void {
    if (this.#closed || this.#db.kind === 'embedded') return;
    this.#ticking ??= this.#tick().finally(() => (this.#ticking = undefined));
  }

  async #tick(): Promise<void> {
    try {
      if (this.#role === 'follower' || this.#db.epoch === undefined) {
        const epoch = await this.#db.lead(this.#advertised);
        if (epoch !== undefined) await this.#becomeWriter(epoch);
        else if (this.#role === 'writer') this.#becomeFollower();
      }
      if (this.#role === 'follower') await this.#readWriter();
      else await this.#prune();
      this.#storeBack();
    } catch (error) {
      // The store is away: tried again on the next tick.
      this.#storeAway(error, 'could not reach the store');
    }
    this.#poll();
  }

  /**
   * Logs that the store is away: the first failure at once, then at most one line per {@link AWAY_LOG_EVERY_MS}
   * while it stays away (the loop retries every second), and one line when it is back.
   */
  #storeAway(error: unknown, what: string): void {
    if (this.#closed) return;
    const now = Date.now();
    if (this.#awaySince === undefined || now - this.#awayLogged >= AWAY_LOG_EVERY_MS) {
      const away =
        this.#awaySince === undefined ? '' : ` (away for ${Math.round((now - this.#awaySince) / 1000)} s)`;
      this.#log.warn({ err: error }, `replication: ${what}; retrying every second${away}`);
      this.#awayLogged = now;
    }
    this.#awaySince ??= now;
  }

  #storeBack(): void {
    if (this.#awaySince === undefined) return;
    this.#log.info(
      `replication: the store answers again after ${Math.round((Date.now() - this.#awaySince) / 1000)} s`,
    );
    this.#awaySince = undefined;
  }

  async #becomeWriter(epoch: number, { mirrorFresh = false } = {}): Promise<void> {
    // Whatever the last writer committed is read before this one writes, and the mirror is rebuilt from the store
    // (unless it was just loaded under this lease: rebuilding it would double the start-up).
    await this.readSide.catchUp();
    if (!mirrorFresh) this.#pipeline.forgetMirror();
    const wasWriter = this.#role === 'writer';
    this.#role = 'writer';
    this.#writerUrl = this.#advertised;
    if (this.#advertised !== undefined) await advertiseLeader(this.#db, epoch, this.#advertised);
    this.#log.info(
      wasWriter
        ? `took the writer lock again (epoch ${epoch})`
        : `this server is the writer (epoch ${epoch})`,
    );
    if (!wasWriter) for (const listener of this.#roleListeners) listener('writer');
  }

  #becomeFollower(): void {
    this.#role = 'follower';
    this.#log.warn({}, 'another server took over writing: this one follows its commits');
    for (const listener of this.#roleListeners) listener('follower');
  }

  async #readWriter(): Promise<void> {
    this.#writerUrl = await readLeaderUrl(this.#db);
  }

  async #prune(): Promise<void> {
    if (Date.now() - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = Date.now();
    await pruneFeed(this.#db);
  }

  /**
   * Applies what the feed holds beyond what was applied; one pass at a time, another if asked meanwhile. The
   * feed's end is read first, for the lag in /readyz while a long catch-up runs, unless a notification has just
   * told it (`notified`); a pass asked for meanwhile reads the entries only (applying them tells the end too).
   */
  #poll(notified = false): void {
    if (this.#closed) return;
    if (this.#polling) {
      this.#pollAgain = true;
      return;
    }
    this.#polling = (async () => {
      let readEnd = !notified;
      do {
        this.#pollAgain = false;
        try {
          if (readEnd) this.readSide.sawFeedEnd(await ReadSide.feedEnd(this.#db));
          readEnd = false;
          await this.readSide.catchUp();
        } catch (error) {
          this.#storeAway(error, 'could not read the commit feed');
          return;
        }
      } while (this.#pollAgain && !this.#closed);
    })().finally(() => (this.#polling = undefined));
  }
}
