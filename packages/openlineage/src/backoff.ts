/**
 * Exponential back-off with equal jitter and a cap, and the abortable waits between attempts: the one definition
 * used by this package's retrying transport and by the Headwater server (which re-exports it from its
 * `core/backoff.ts`), so every loop that tries again computes its delays the same way.
 *
 * The delay before retry n is `min(maxDelayMs, baseDelayMs * 2^(n-1))`, drawn uniformly from its upper half
 * ("equal jitter"): callers that failed together spread out, yet no retry comes sooner than half the nominal
 * delay. A `Retry-After` the other side asked for is a floor, never shortened.
 */

/** How long to wait between attempts. Checking it (for example that the base is positive) is the caller's. */
export interface BackoffPolicy {
  /** The delay before the first retry, before jitter; each further retry doubles it. 0 retries at once. */
  readonly baseDelayMs: number;
  /** The longest delay, before jitter. */
  readonly maxDelayMs: number;
}

/** Random source in [0, 1), injected in tests. */
export type Random = () => number;

/**
 * The nominal delay before retry `attempt` (1 for the first retry), before jitter: doubling from the base, capped.
 * @example backoffCeilingMs(3, { baseDelayMs: 1000, maxDelayMs: 60000 }) // 4000
 */
export function backoffCeilingMs(attempt: number, policy: BackoffPolicy): number {
  const { baseDelayMs, maxDelayMs } = policy;
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2 ** 1100 is Infinity and Math.min handles it, but stop early so a huge attempt count stays cheap and exact.
  if (exponent >= 53) return Math.min(maxDelayMs, baseDelayMs === 0 ? 0 : Infinity);
  return Math.min(maxDelayMs, baseDelayMs * 2 ** exponent);
}

/**
 * The delay before retry `attempt` (1 for the first retry), with equal jitter: uniform in [ceiling/2, ceiling).
 * @example backoffDelayMs(1, { baseDelayMs: 1000, maxDelayMs: 60000 }, () => 0.5) // 750
 */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy, random: Random = Math.random): number {
  const ceiling = backoffCeilingMs(attempt, policy);
  return ceiling / 2 + (random() * ceiling) / 2;
}

/**
 * The delay before retry `attempt` when the other side may have asked for one: the jittered back-off, or its
 * `Retry-After` if that is longer (a server that asks for 30 s is not asked again after 2).
 */
export function retryDelayMs(
  attempt: number,
  policy: BackoffPolicy,
  options: { readonly retryAfterMs?: number | undefined; readonly random?: Random } = {},
): number {
  const delay = backoffDelayMs(attempt, policy, options.random);
  const asked = options.retryAfterMs;
  return asked !== undefined && Number.isFinite(asked) && asked > delay ? asked : delay;
}

/**
 * Waits until `start` calls the `done` it is given, or until `signal` aborts, whichever comes first. The abort
 * listener is removed once the wait ends, and so is what `start` set up (the function it returns): a loop that
 * waits again and again on one long-lived signal would otherwise pile a listener onto it per wait, which is
 * memory that grows with uptime (Node warns at 11).
 */
export function untilAborted(
  signal: AbortSignal | undefined,
  start: (done: () => void) => (() => void) | void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    let undo: (() => void) | void = undefined;
    let ended = false;
    const done = () => {
      if (ended) return;
      ended = true;
      signal?.removeEventListener('abort', done);
      undo?.();
      resolve();
    };
    signal?.addEventListener('abort', done, { once: true });
    undo = start(done);
    // `start` may have called `done` before it returned what undoes it.
    if (ended) undo?.();
  });
}

/**
 * Waits `ms`, or less when `signal` aborts (it then resolves, never rejects: the caller checks `signal.aborted`).
 * The timer does not keep the process alive, so a pending back-off never delays an exit.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return untilAborted(signal, (done) => {
    const timer = setTimeout(done, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  });
}
