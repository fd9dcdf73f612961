import type { OpenLineageEvent } from '../generated/model.js';

/**
 * The outcome of sending events. A transport never throws: it reports what happened.
 * - `success`: the backend accepted the event.
 * - `retryable`: it may work later (timeout, connection refused, 429, 5xx); `retryAfterMs` carries the
 *   backend's `Retry-After`, if any.
 * - `failure`: sending again will not help (4xx, unserialisable event, closed transport).
 */
export type EmitResult =
  | { readonly status: 'success' }
  | { readonly status: 'retryable'; readonly error: Error; readonly retryAfterMs?: number }
  | { readonly status: 'failure'; readonly error: Error };

/**
 * The outcome of a batch: an {@link EmitResult} for the whole batch, or `partial` when the backend accepted
 * some events and reports others (by index into the batch) as retryable or failed.
 */
export type BatchEmitResult =
  | EmitResult
  | {
      readonly status: 'partial';
      readonly error: Error;
      /** Indexes of events worth sending again. */
      readonly retryable: readonly number[];
      /** Indexes of events rejected for good. */
      readonly failed: readonly number[];
    };

/**
 * Sends OpenLineage events somewhere. Only `emit` is required, so your own transport is a few lines:
 *
 * @example
 * ```ts
 * const logTransport: Transport = {
 *   async emit(event) {
 *     try {
 *       await appendFile('lineage.ndjson', JSON.stringify(event) + '\n');
 *       return { status: 'success' };
 *     } catch (error) {
 *       return { status: 'retryable', error: error as Error };
 *     }
 *   },
 * };
 * ```
 */
export interface Transport {
  /** Sends one event. Must not throw; the client still guards against transports that do. */
  emit(event: OpenLineageEvent): Promise<EmitResult>;
  /** Sends several events in one request, when the transport can. */
  emitBatch?(events: readonly OpenLineageEvent[]): Promise<BatchEmitResult>;
  /** Waits until buffered events are sent; resolves `true` when everything was handled in time. */
  flush?(timeoutMs: number): Promise<boolean>;
  /** Flushes, then releases resources (sockets, timers, files). Resolves `true` when it finished in time. */
  close?(timeoutMs: number): Promise<boolean>;
}

/** The `success` result, shared because it carries no data. */
export const SUCCESS: EmitResult = Object.freeze({ status: 'success' });

/** Turns anything thrown into an `Error`, so results and hooks always carry one. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === 'string' ? thrown : `Non-error thrown: ${String(thrown)}`);
}

/** Calls `transport.emit` and turns a throw or a rejection into a `failure` result. */
export async function safeEmit(transport: Transport, event: OpenLineageEvent): Promise<EmitResult> {
  try {
    return await transport.emit(event);
  } catch (thrown) {
    return { status: 'failure', error: toError(thrown) };
  }
}

/**
 * Sends a batch with `emitBatch` when the transport has it, else event by event, and never throws.
 * Event-by-event sending keeps order and stops at the first non-success, reporting the rest as retryable
 * or failed like a partial batch.
 */
export async function safeEmitBatch(
  transport: Transport,
  events: readonly OpenLineageEvent[],
): Promise<BatchEmitResult> {
  if (transport.emitBatch !== undefined) {
    try {
      return await transport.emitBatch(events);
    } catch (thrown) {
      return { status: 'failure', error: toError(thrown) };
    }
  }
  for (let i = 0; i < events.length; i++) {
    const result = await safeEmit(transport, events[i]!);
    if (result.status === 'success') continue;
    if (i === 0) return result;
    const rest = events.map((_, index) => index).slice(i);
    // Only the event that failed is known bad; the ones after it were not tried yet.
    return result.status === 'retryable'
      ? { status: 'partial', error: result.error, retryable: rest, failed: [] }
      : { status: 'partial', error: result.error, retryable: rest.slice(1), failed: [i] };
  }
  return SUCCESS;
}

/** Races `promise` against a timer; resolves `undefined` when the timer wins. The timer never keeps the process alive. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T | undefined> {
  if (!Number.isFinite(timeoutMs)) return promise;
  return new Promise<T | undefined>((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), Math.max(0, timeoutMs));
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(toError(error));
      },
    );
  });
}
