import type { OpenLineageEvent } from '../generated/model.js';
import type { Transport } from './transport.js';
import { SUCCESS, safeEmit, toError } from './transport.js';

/**
 * Changes an event before it is sent. Return the event (the same object or a new one) to send it, or
 * `undefined`/`null` to drop it.
 */
export type EventTransformer = (
  event: OpenLineageEvent,
) => OpenLineageEvent | undefined | null | Promise<OpenLineageEvent | undefined | null>;

/** Options of {@link createTransformTransport}. */
export interface TransformTransportOptions {
  /** The transport that sends the transformed events. */
  readonly transport: Transport;
  /** The user function applied to every event. A throw becomes a `failure` result; nothing is sent. */
  readonly transform: EventTransformer;
}

/**
 * Creates a transport that runs a user function on each event, then sends the result (or drops it).
 *
 * @example
 * ```ts
 * const transport = createTransformTransport({
 *   transport: createHttpTransport({ url: 'http://localhost:5000' }),
 *   transform: (event) => ('job' in event ? { ...event, job: { ...event.job, namespace: 'prod' } } : event),
 * });
 * ```
 */
export function createTransformTransport(options: TransformTransportOptions): Transport {
  const inner = options.transport;
  const transport: Transport = {
    async emit(event) {
      let transformed: OpenLineageEvent | undefined | null;
      try {
        transformed = await options.transform(event);
      } catch (thrown) {
        const error = new Error(`The transform function threw: ${toError(thrown).message}`, {
          cause: thrown,
        });
        return { status: 'failure', error };
      }
      // A dropped event counts as handled: the user asked for it.
      if (transformed === undefined || transformed === null) return SUCCESS;
      return safeEmit(inner, transformed);
    },
  };
  if (inner.flush !== undefined) transport.flush = (timeoutMs) => inner.flush!(timeoutMs);
  if (inner.close !== undefined) transport.close = (timeoutMs) => inner.close!(timeoutMs);
  return transport;
}
