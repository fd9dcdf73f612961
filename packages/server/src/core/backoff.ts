/**
 * Exponential back-off with jitter and a cap, for anything in the server that tries again: incident delivery,
 * stream sinks, store reconnects. Pure functions over an attempt number, plus an abortable sleep, so that a caller
 * which keeps its attempts in a table (an outbox) computes the same delays as one that loops in memory.
 *
 * The delay before retry n is `min(maxDelayMs, baseDelayMs * 2^(n-1))`, drawn uniformly from its upper half
 * ("equal jitter", as the client package's retrying transport does): callers that failed together spread out,
 * yet no retry comes sooner than half the nominal delay. A server's `Retry-After` is a floor, never shortened.
 */

/** How long to wait between attempts. */
export interface BackoffPolicy {
  /**
   * The delay before the first retry, before jitter; each further retry doubles it.
   * @default 1000
   */
  readonly baseDelayMs?: number;
  /**
   * The longest delay, before jitter.
   * @default 300000 (5 minutes)
   */
  readonly maxDelayMs?: number;
}

/** Random source in [0, 1), injected in tests. */
export type Random = () => number;

const DEFAULT_BASE_DELAY_MS = 1000;
const DEFAULT_MAX_DELAY_MS = 300_000;

/**
 * Checks a policy once, at construction, so a bad one fails where it is configured rather than on the first retry.
 * @throws RangeError naming the field when a delay is not a positive finite number or the cap is below the base.
 */
export function checkBackoffPolicy(
  policy: BackoffPolicy,
  where = 'back-off policy',
): Required<BackoffPolicy> {
  const baseDelayMs = policy.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const maxDelayMs = policy.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  if (!(Number.isFinite(baseDelayMs) && baseDelayMs > 0))
    throw new RangeError(
      `${where}: baseDelayMs must be a positive number of milliseconds, got ${baseDelayMs}.`,
    );
  if (!(Number.isFinite(maxDelayMs) && maxDelayMs >= baseDelayMs))
    throw new RangeError(
      `${where}: maxDelayMs must be a number of milliseconds no smaller than baseDelayMs (${baseDelayMs}), ` +
        `got ${maxDelayMs}.`,
    );
  return { baseDelayMs, maxDelayMs };
}

/**
 * The nominal delay before retry `attempt` (1 for the first retry), before jitter: doubling from the base, capped.
 * @example backoffCeilingMs(3, { baseDelayMs: 1000, maxDelayMs: 60000 }) // 4000
 */
export function backoffCeilingMs(attempt: number, policy: BackoffPolicy = {}): number {
  const { baseDelayMs, maxDelayMs } = checkBackoffPolicy(policy);
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2 ** 1100 is Infinity and Math.min handles it, but stop early so a huge attempt count stays cheap and exact.
  if (exponent >= 53) return maxDelayMs;
  return Math.min(maxDelayMs, baseDelayMs * 2 ** exponent);
}

/**
 * The delay before retry `attempt` (1 for the first retry), with equal jitter: uniform in [ceiling/2, ceiling).
 * @example backoffDelayMs(1, { baseDelayMs: 1000 }, () => 0.5) // 750
 */
export function backoffDelayMs(
  attempt: number,
  policy: BackoffPolicy = {},
  random: Random = Math.random,
): number {
  const ceiling = backoffCeilingMs(attempt, policy);
  return ceiling / 2 + (random() * ceiling) / 2;
}

/**
 * The delay before retry `attempt` when the other side may have asked for one: the jittered back-off, or the
 * server's `Retry-After` if that is longer (a server that asks for 30 s is not asked again after 2).
 */
export function retryDelayMs(
  attempt: number,
  policy: BackoffPolicy = {},
  options: { readonly retryAfterMs?: number | undefined; readonly random?: Random } = {},
): number {
  const delay = backoffDelayMs(attempt, policy, options.random);
  const asked = options.retryAfterMs;
  return asked !== undefined && Number.isFinite(asked) && asked > delay ? asked : delay;
}

/**
 * Waits `ms`, or less when `signal` aborts (it then resolves, never rejects: the caller checks `signal.aborted`).
 * The timer does not keep the process alive, so a pending back-off never delays shutdown.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, ms));
    timer.unref();
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
