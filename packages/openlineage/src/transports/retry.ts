import { setMaxListeners } from 'node:events';
import { retryDelayMs, sleep as abortableSleep } from '../backoff.js';
import type { OpenLineageEvent } from '../generated/model.js';
import type { BatchEmitResult, EmitResult, Transport } from './transport.js';
import { SUCCESS, safeEmit, safeEmitBatch } from './transport.js';

/** Waits `ms`, or less when `signal` aborts. Injected in tests so back-off needs no real time. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** What the retry wrapper tells `onRetry` before each wait. */
export interface RetryAttempt {
  /** 1 for the first retry. */
  readonly attempt: number;
  /** How long it will wait before that retry. */
  readonly delayMs: number;
  /** The result that caused the retry. */
  readonly error: Error;
  /** The `Retry-After` the backend asked for, if any. */
  readonly retryAfterMs: number | undefined;
}

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /**
   * How many times to retry after the first attempt (so at most `retries + 1` attempts).
   * @default 5 (as the Python client's `retry.total`)
   */
  readonly retries?: number;
  /**
   * The first back-off delay; each retry doubles it (`baseDelayMs * 2^(attempt-1)`).
   * @default 300 (the Python client's `backoff_factor` 0.3 s)
   */
  readonly baseDelayMs?: number;
  /**
   * The longest back-off delay, before jitter.
   * @default 10000
   */
  readonly maxDelayMs?: number;
  /**
   * The longest `Retry-After` honoured. A backend asking for more makes the wrapper give up at once and
   * report `retryable`, so a caller with a spool can keep the event rather than block.
   * @default 60000
   */
  readonly maxRetryAfterMs?: number;
  /**
   * Random source for jitter in [0, 1). The delay is drawn uniformly from [delay/2, delay] ("equal jitter"),
   * so clients that failed together do not retry together.
   * @default Math.random
   */
  readonly random?: () => number;
  /** Waits between attempts. @default a timer that never keeps the process alive */
  readonly sleep?: Sleep;
  /** Called before each wait, for logs and metrics. */
  readonly onRetry?: (attempt: RetryAttempt) => void;
}

const defaultSleep: Sleep = abortableSleep;

/**
 * Wraps a transport so `retryable` results are retried with exponential back-off and jitter, honouring
 * `Retry-After`. `failure` results are returned at once. Closing the wrapper cuts pending waits short: the
 * last result is returned, so a process can always exit.
 *
 * For batches, only the events the backend reported as retryable are sent again.
 *
 * @example
 * ```ts
 * const transport = withRetry(createHttpTransport({ url: 'http://localhost:5000' }), { retries: 3 });
 * ```
 */
export function withRetry(transport: Transport, options: RetryOptions = {}): Transport {
  const retries = options.retries ?? 5;
  const baseDelayMs = options.baseDelayMs ?? 300;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const closing = new AbortController();
  // Every pending back-off listens on this one signal: many concurrent retries are expected, not a leak.
  setMaxListeners(0, closing.signal);

  /** The wait before retry `attempt`, or undefined to give up now. */
  const delayFor = (attempt: number, retryAfterMs: number | undefined): number | undefined => {
    if (retryAfterMs !== undefined && retryAfterMs > maxRetryAfterMs) return undefined;
    return retryDelayMs(attempt, { baseDelayMs, maxDelayMs }, { retryAfterMs, random });
  };

  const wait = async (attempt: number, result: { error: Error; retryAfterMs?: number }): Promise<boolean> => {
    if (attempt > retries || closing.signal.aborted) return false;
    const delayMs = delayFor(attempt, result.retryAfterMs);
    if (delayMs === undefined) return false;
    options.onRetry?.({ attempt, delayMs, error: result.error, retryAfterMs: result.retryAfterMs });
    await sleep(delayMs, closing.signal);
    return !closing.signal.aborted;
  };

  const wrapped: Transport = {
    async emit(event: OpenLineageEvent): Promise<EmitResult> {
      let result = await safeEmit(transport, event);
      for (let attempt = 1; result.status === 'retryable'; attempt++) {
        if (!(await wait(attempt, result))) break;
        result = await safeEmit(transport, event);
      }
      return result;
    },
    close: async (timeoutMs) => {
      closing.abort();
      return transport.close === undefined ? true : transport.close(timeoutMs);
    },
  };
  if (transport.flush !== undefined) wrapped.flush = (timeoutMs) => transport.flush!(timeoutMs);
  if (transport.emitBatch !== undefined) {
    wrapped.emitBatch = async (events): Promise<BatchEmitResult> => {
      // `pending` maps positions in the batch being sent to positions in the caller's batch.
      let pending = events.map((_, index) => index);
      const failed: number[] = [];
      let result = await safeEmitBatch(transport, events);
      for (let attempt = 1; ; attempt++) {
        if (result.status === 'success') return failed.length === 0 ? SUCCESS : partial({}, [], failed);
        if (result.status === 'failure')
          return failed.length === 0 ? result : partial(result, [], [...failed, ...pending]);
        if (result.status === 'partial') {
          failed.push(...result.failed.map((i) => pending[i]!));
          pending = result.retryable.map((i) => pending[i]!);
          if (pending.length === 0) return partial(result, [], failed);
        }
        if (!(await wait(attempt, result))) {
          if (result.status === 'retryable' && failed.length === 0) return result;
          return partial(result, pending, failed);
        }
        result = await safeEmitBatch(
          transport,
          pending.map((i) => events[i]!),
        );
      }
    };
  }
  return wrapped;
}

function partial(
  result: { error?: Error },
  retryable: readonly number[],
  failed: readonly number[],
): BatchEmitResult {
  const error = result.error ?? new Error(`${failed.length} events of the batch were rejected`);
  return { status: 'partial', error, retryable: [...retryable], failed: [...failed].sort((a, b) => a - b) };
}
