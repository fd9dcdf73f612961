import { backoffCeilingMs, backoffDelayMs, checkBackoffPolicy, type BackoffPolicy } from '../core/backoff.js';
import { HeadwaterError } from '../core/errors.js';

/**
 * SQLSTATEs that say the store cannot serve now (it is restarting, out of disk, out of connections, read-only
 * after a failover), not that the statement is wrong: class 08 (connection exception) is matched by prefix.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping (pg_ctl stop, pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '57014', // query_canceled (statement timeout, a frozen store)
  '53100', // disk_full
  '53200', // out_of_memory
  '53300', // too_many_connections
  '58030', // io_error
  '25006', // read_only_sql_transaction: a standby after a failover
  '40P01', // deadlock_detected: retrying succeeds
  'HW409', // fenced (migration 010): another server took over writing; the write goes to it on retry
]);

/** Node and driver errors of a connection that failed or went away. */
const UNAVAILABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOSPC',
  'EDQUOT',
]);

const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection error|timeout exceeded when trying to connect|Query read timeout|the embedded store's thread exited|no space left on device|Client was closed|Cannot use a pool after calling end/i;

/**
 * Whether `error` (or any error in its `cause` chain) means the store is unavailable, so that the same request
 * would succeed later: the answer is then 503 with Retry-After, and producers retry, instead of a 500 that
 * they take for a bug.
 */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    if (current instanceof HeadwaterError) {
      if (current.code === 'STORE_UNAVAILABLE') return true;
    } else if (typeof current === 'object') {
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string') {
        if (code.startsWith('08') && code.length === 5) return true;
        if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNO.has(code)) return true;
      }
      const message = (current as { message?: unknown }).message;
      if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** What {@link StoreHealth} reports. */
export interface StoreStatus {
  readonly available: boolean;
  /** Why the store is unavailable, when it is. */
  readonly reason: string | undefined;
  /** Since when (ms since the epoch) it has been unavailable. */
  readonly since: number | undefined;
}

/** Options of {@link StoreHealth}. */
export interface StoreHealthOptions {
  /** Resolves when the store can take writes again (reconnects, re-takes locks); rejects while it cannot. */
  readonly probe: () => Promise<void>;
  /** Told each change of availability (for the log). */
  readonly onChange?: (status: StoreStatus, error?: unknown) => void;
  /** First wait between probes, before jitter (core/backoff.ts); each failed probe doubles it. @default 200 */
  readonly minBackoffMs?: number;
  /** Longest wait between probes, before jitter. @default 5000 */
  readonly maxBackoffMs?: number;
}

/**
 * Whether the store can take writes now. Once a write or a connection fails for a reason that passes (see
 * {@link isStoreUnavailable}), it is marked down and probed with exponential back-off until it answers; meanwhile
 * ingest is refused at once with STORE_UNAVAILABLE (503, Retry-After), so no request hangs on a store that is
 * not there and nothing is acknowledged that was not committed.
 */
export class StoreHealth {
  readonly #probe: () => Promise<void>;
  readonly #onChange: (status: StoreStatus, error?: unknown) => void;
  readonly #backoff: Required<BackoffPolicy>;
  #down: { reason: string; since: number } | undefined;
  /** Probes tried since the store went down, counting the one scheduled: 1 for the first. */
  #attempt = 1;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #recovered: (() => void)[] = [];

  constructor(options: StoreHealthOptions) {
    this.#probe = options.probe;
    this.#onChange = options.onChange ?? (() => undefined);
    this.#backoff = checkBackoffPolicy(
      { baseDelayMs: options.minBackoffMs ?? 200, maxDelayMs: options.maxBackoffMs ?? 5000 },
      'store health (minBackoffMs, maxBackoffMs)',
    );
  }

  /** The current status. */
  get status(): StoreStatus {
    return {
      available: this.#down === undefined,
      reason: this.#down?.reason,
      since: this.#down?.since,
    };
  }

  /** Whether writes may be tried now. */
  get available(): boolean {
    return this.#down === undefined;
  }

  /** Seconds a client should wait before retrying: the probe interval before jitter, at least 1. */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(backoffCeilingMs(this.#attempt, this.#backoff) / 1000));
  }

  /** Registers a listener called each time the store becomes available again. */
  onRecovered(listener: () => void): void {
    this.#recovered.push(listener);
  }

  /** Marks the store unavailable because of `error` and starts probing it. */
  markDown(error: unknown): void {
    if (this.#closed) return;
    if (this.#down) return;
    this.#down = { reason: describe(error), since: Date.now() };
    this.#attempt = 1;
    this.#onChange(this.status, error);
    this.#schedule();
  }

  /** The error to answer while the store is down. */
  unavailableError(cause?: unknown): HeadwaterError {
    const reason = this.#down?.reason ?? describe(cause);
    return new HeadwaterError(
      'STORE_UNAVAILABLE',
      `The lineage store is unavailable (${reason}). Nothing from this request was stored; retry in ` +
        `${this.retryAfterSeconds} s.`,
      { cause, retryAfterSeconds: this.retryAfterSeconds },
    );
  }

  /** Stops probing. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#tryProbe(), backoffDelayMs(this.#attempt, this.#backoff));
    this.#timer.unref();
  }

  async #tryProbe(): Promise<void> {
    try {
      await this.#probe();
    } catch (error) {
      if (this.#down) this.#down = { ...this.#down, reason: describe(error) };
      this.#attempt++;
      this.#schedule();
      return;
    }
    if (this.#closed) return;
    this.#down = undefined;
    this.#attempt = 1;
    this.#onChange(this.status);
    for (const listener of this.#recovered) listener();
  }
}

/** A short reason for a log line or an answer: the innermost driver message. */
function describe(error: unknown): string {
  let message = 'unknown error';
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    const text = (current as { message?: unknown }).message;
    const code = (current as { code?: unknown }).code;
    if (typeof text === 'string' && text.length > 0 && !(current instanceof HeadwaterError)) {
      message = typeof code === 'string' && !text.includes(code) ? `${text} [${code}]` : text;
    } else if (typeof text === 'string' && message === 'unknown error') message = text;
    current = (current as { cause?: unknown }).cause;
  }
  return message.length > 300 ? `${message.slice(0, 297)}...` : message;
}
