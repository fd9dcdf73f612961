/**
 * The retry loop of one delivery: attempts a send, waits with back-off (core/backoff.ts) or as long as the
 * receiver's `Retry-After` asks, and tries again, until it is delivered, gone, failed, out of attempts, or the
 * next wait is longer than this call should hold on. Then it reports when to try next, so that the outbox worker
 * can store that time and let go: the loop is for the seconds after a transition, the outbox for the hours after.
 *
 * `previousAttempts` continues the back-off of an outbox row that was already tried (by this replica before a
 * restart, or by another), so delays keep growing instead of starting over.
 */
import type { BackoffPolicy, Random } from '../core/backoff.js';
import { checkBackoffPolicy, retryDelayMs, sleep as defaultSleep } from '../core/backoff.js';
import type { DeliveryResult, SendOptions } from './delivery-result.js';

/** How hard one call of {@link deliverWithRetry} tries. */
export interface DeliveryPolicy extends BackoffPolicy {
  /**
   * Attempts in one call, at most.
   * @default 5
   */
  readonly maxAttempts?: number;
  /**
   * The longest wait within one call. A longer one (a large `Retry-After`, or back-off grown past it) ends the
   * call with `retry` and `nextAttemptAtMs`, for the outbox to keep.
   * @default 60000
   */
  readonly maxWaitMs?: number;
}

/** One attempt, as `onAttempt` sees it, for logs, metrics and the outbox's audit. */
export interface DeliveryAttempt {
  /** Counting `previousAttempts`: 1 for the first attempt ever. */
  readonly attempt: number;
  readonly startedAtMs: number;
  readonly durationMs: number;
  readonly result: DeliveryResult;
}

/** Options of {@link deliverWithRetry}. */
export interface DeliverOptions {
  /** Stops waiting and cancels the attempt under way (whose result is then `retry`). */
  readonly signal?: AbortSignal;
  /** The clock, epoch milliseconds. @default Date.now */
  readonly now?: () => number;
  /** Jitter's random source. @default Math.random */
  readonly random?: Random;
  /** Waits between attempts; resolves early when the signal aborts. @default a timer that never holds the process */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Attempts already made for this delivery (the outbox row's count). @default 0 */
  readonly previousAttempts?: number;
  /** Called after each attempt. */
  readonly onAttempt?: (attempt: DeliveryAttempt) => void;
}

/** How a call of {@link deliverWithRetry} ended. */
export interface DeliveryReport {
  /** The last attempt's result; `retry` when it should be tried again later. */
  readonly result: DeliveryResult;
  /** Attempts made by this call. */
  readonly attempts: number;
  /** All attempts so far, `previousAttempts` included. */
  readonly totalAttempts: number;
  /** For `retry`: when to try next, epoch milliseconds (back-off or `Retry-After`, whichever is later). */
  readonly nextAttemptAtMs: number | undefined;
}

/** One attempt of a delivery: the attempt's number (counting earlier calls' too) and its send options. */
export type DeliveryAttemptFn = (attempt: number, options: SendOptions) => Promise<DeliveryResult>;

/**
 * Delivers with retries; never throws (a `send` that throws counts as `failed`, a bug not to repeat).
 *
 * @example
 * ```ts
 * const sender = createWebhookSender(channel);
 * const report = await deliverWithRetry((_, options) => sender.send(message, options), {}, { signal });
 * if (report.result.status === 'retry') await outbox.reschedule(row.id, report.nextAttemptAtMs, report.totalAttempts);
 * ```
 */
export async function deliverWithRetry(
  send: DeliveryAttemptFn,
  policy: DeliveryPolicy = {},
  options: DeliverOptions = {},
): Promise<DeliveryReport> {
  const backoff = checkBackoffPolicy(policy, 'delivery policy');
  const maxAttempts = policy.maxAttempts ?? 5;
  const maxWaitMs = policy.maxWaitMs ?? 60_000;
  if (!(Number.isInteger(maxAttempts) && maxAttempts >= 1))
    throw new RangeError(
      `delivery policy: maxAttempts must be a whole number of at least 1, got ${maxAttempts}.`,
    );
  if (!(maxWaitMs >= 0))
    throw new RangeError(`delivery policy: maxWaitMs must be 0 or more, got ${maxWaitMs}.`);
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const signal = options.signal;
  const previous = options.previousAttempts ?? 0;

  let attempts = 0;
  for (;;) {
    const attempt = previous + attempts + 1;
    const startedAtMs = now();
    let result: DeliveryResult;
    try {
      result = await send(attempt, { ...(signal === undefined ? {} : { signal }), now });
    } catch (cause) {
      result = {
        status: 'failed',
        error: new Error(`the delivery's send threw: ${String(cause)}`, { cause }),
      };
    }
    attempts++;
    options.onAttempt?.({ attempt, startedAtMs, durationMs: now() - startedAtMs, result });
    const report = (nextAttemptAtMs: number | undefined): DeliveryReport => ({
      result,
      attempts,
      totalAttempts: previous + attempts,
      nextAttemptAtMs,
    });
    if (result.status !== 'retry') return report(undefined);

    const delayMs = retryDelayMs(attempt, backoff, {
      retryAfterMs: result.retryAfterMs,
      ...(options.random === undefined ? {} : { random: options.random }),
    });
    const nextAttemptAtMs = now() + delayMs;
    if (attempts >= maxAttempts || delayMs > maxWaitMs || signal?.aborted) return report(nextAttemptAtMs);
    await sleep(delayMs, signal);
    if (signal?.aborted) return report(nextAttemptAtMs);
  }
}
