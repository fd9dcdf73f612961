import type { OpenLineageEvent } from '../generated/model.js';
import type { Transport } from './transport.js';
import { SUCCESS, safeEmitBatch, toError, withTimeout } from './transport.js';

/** Called with events the async transport gave up on (after the inner transport's retries), and why. */
export type UndeliveredHandler = (events: readonly OpenLineageEvent[], error: Error) => void;

/** Counters of an async transport. */
export interface AsyncTransportStats {
  /** Events waiting in the queue now. */
  readonly queued: number;
  /** Events the inner transport accepted. */
  readonly sent: number;
  /** Events given to `onUndelivered` because sending failed. */
  readonly undelivered: number;
  /** Events refused because the queue was full or the transport closed. */
  readonly rejected: number;
}

/** Options of {@link createAsyncTransport}. */
export interface AsyncTransportOptions {
  /** The transport that sends the batches; usually `withRetry(createHttpTransport({ ..., batch: true }))`. */
  readonly transport: Transport;
  /**
   * Most events held in memory. When full, `emit` returns a `failure` at once rather than block the caller.
   * @default 10000 (the Python client's `max_queue_size`)
   */
  readonly maxQueueSize?: number;
  /**
   * Most events per batch. Batches go through `emitBatch` when the inner transport has it.
   * @default 100
   */
  readonly batchSize?: number;
  /**
   * How long an event may wait for its batch to fill before it is sent anyway.
   * @default 1000
   */
  readonly flushIntervalMs?: number;
  /** Receives events that could not be delivered, e.g. to spool them; they are dropped otherwise. */
  readonly onUndelivered?: UndeliveredHandler;
}

/** A transport that queues events and sends them in the background. */
export interface AsyncTransport extends Transport {
  /** Counters since creation. */
  stats(): AsyncTransportStats;
}

/**
 * Creates a transport that accepts events into a bounded in-memory queue and sends them in batches from
 * one background worker. `emit` resolves as soon as the event is queued. One worker and one batch in flight
 * keep the order of events, so a run's START always goes before its COMPLETE.
 *
 * @example
 * ```ts
 * const transport = createAsyncTransport({
 *   transport: withRetry(createHttpTransport({ url: 'http://localhost:5000', batch: true })),
 *   onUndelivered: (events, error) => console.warn(`dropped ${events.length} events: ${error.message}`),
 * });
 * ```
 */
export function createAsyncTransport(options: AsyncTransportOptions): AsyncTransport {
  const inner = options.transport;
  const maxQueueSize = options.maxQueueSize ?? 10_000;
  const batchSize = Math.max(1, options.batchSize ?? 100);
  const flushIntervalMs = options.flushIntervalMs ?? 1000;
  const queue: OpenLineageEvent[] = [];
  let sent = 0;
  let undelivered = 0;
  let rejected = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let worker: Promise<void> | undefined;
  // While a flush or close waits, send partial batches at once instead of waiting for the interval.
  let urgent = 0;

  const giveUp = (events: readonly OpenLineageEvent[], error: Error): void => {
    undelivered += events.length;
    try {
      options.onUndelivered?.(events, error);
    } catch {
      // A faulty handler must not stop the worker.
    }
  };

  const sendBatch = async (batch: OpenLineageEvent[]): Promise<void> => {
    const result = await safeEmitBatch(inner, batch);
    switch (result.status) {
      case 'success':
        sent += batch.length;
        return;
      case 'partial': {
        const bad = new Set([...result.retryable, ...result.failed]);
        sent += batch.length - bad.size;
        giveUp(
          batch.filter((_, index) => bad.has(index)),
          result.error,
        );
        return;
      }
      default:
        giveUp(batch, result.error);
    }
  };

  const run = async (): Promise<void> => {
    while (queue.length > 0 && (queue.length >= batchSize || urgent > 0 || timer === undefined)) {
      const batch = queue.splice(0, batchSize);
      try {
        await sendBatch(batch);
      } catch (thrown) {
        giveUp(batch, toError(thrown));
      }
    }
  };

  const kick = (): void => {
    if (worker !== undefined) return;
    worker = run().finally(() => {
      worker = undefined;
      if (queue.length >= batchSize || (urgent > 0 && queue.length > 0)) kick();
      else schedule();
    });
  };

  const schedule = (): void => {
    if (timer !== undefined || queue.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      kick();
    }, flushIntervalMs);
    // The interval must not keep a finished program alive; close() or flush() sends what is left.
    timer.unref();
  };

  const drain = async (timeoutMs: number): Promise<boolean> => {
    urgent++;
    const deadline = Date.now() + timeoutMs;
    try {
      while (queue.length > 0 || worker !== undefined) {
        kick();
        const remaining = deadline - Date.now();
        if (remaining <= 0) return false;
        // The worker resolves to nothing, so map completion to `true` to tell it apart from the timeout.
        const current = worker ?? Promise.resolve();
        if (
          (await withTimeout(
            current.then(() => true),
            remaining,
          )) === undefined
        )
          return false;
      }
      return true;
    } finally {
      urgent--;
    }
  };

  return {
    emit(event) {
      if (closed) {
        rejected++;
        return Promise.resolve({
          status: 'failure',
          error: new Error('async transport: emit after close()'),
        });
      }
      if (queue.length >= maxQueueSize) {
        rejected++;
        const error = new Error(
          `async transport: queue full (${maxQueueSize} events; raise maxQueueSize or check the backend)`,
        );
        return Promise.resolve({ status: 'failure', error });
      }
      queue.push(event);
      if (queue.length >= batchSize) kick();
      else schedule();
      return Promise.resolve(SUCCESS);
    },
    flush: (timeoutMs) => drain(timeoutMs),
    async close(timeoutMs) {
      closed = true;
      const started = Date.now();
      const drained = await drain(timeoutMs);
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const left = queue.splice(0);
      if (left.length > 0)
        giveUp(left, new Error(`async transport: closed with ${left.length} events unsent`));
      const remaining = Math.max(0, timeoutMs - (Date.now() - started));
      const innerClosed =
        inner.close === undefined ? true : ((await withTimeout(inner.close(remaining), remaining)) ?? false);
      return drained && innerClosed;
    },
    stats: () => ({ queued: queue.length, sent, undelivered, rejected }),
  };
}
