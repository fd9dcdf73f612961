/**
 * Exponential back-off with jitter and a cap, for anything in the server that tries again: incident delivery,
 * stream sinks and ingest, store probes and reconnects, the embedded PostgreSQL's restarts, the CLI's requests.
 * Pure functions over an attempt number, plus abortable waits, so that a caller which keeps its attempts in a
 * table (an outbox) computes the same delays as one that loops in memory.
 *
 * The algorithm is the client package's (`@headwater/openlineage`, whose retrying transport uses it too): this
 * module only adds the server's defaults and the check of a configured policy. A loop whose policy differs says
 * so with its own {@link BackoffPolicy}, never with arithmetic of its own.
 */
import {
  backoffCeilingMs as ceilingOf,
  backoffDelayMs as delayOf,
  retryDelayMs as retryDelayOf,
  type Random,
} from '@headwater/openlineage';

export { sleep, untilAborted, type Random } from '@headwater/openlineage';

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
  return ceilingOf(attempt, checkBackoffPolicy(policy));
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
  return delayOf(attempt, checkBackoffPolicy(policy), random);
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
  return retryDelayOf(attempt, checkBackoffPolicy(policy), options);
}
