import type { OpenLineageEvent } from '../generated/model.js';
import type { EmitResult, Transport } from './transport.js';
import { SUCCESS, safeEmit, withTimeout } from './transport.js';

/** Options of {@link createCompositeTransport}. */
export interface CompositeTransportOptions {
  /** The transports to fan out to, all sent to at once. */
  readonly transports: readonly Transport[];
  /**
   * When every child failed, report `retryable` if at least one child said retryable (else `failure`).
   * When `true`, also report a failure when *any* child failed, not only when all did.
   * @default false: success as soon as one child succeeded, like the Python client
   */
  readonly requireAll?: boolean;
  /**
   * `fan-out` sends to every transport at once; `failover` tries them in order and stops at the first
   * success (the Python client's `continue_on_success: false`).
   * @default 'fan-out'
   */
  readonly strategy?: 'fan-out' | 'failover';
}

/**
 * Creates a transport that sends each event to several transports at once. One child failing or throwing
 * never stops the others.
 */
export function createCompositeTransport(options: CompositeTransportOptions): Transport {
  const children = [...options.transports];
  const combine = (results: EmitResult[]): EmitResult => {
    const bad = results.filter(
      (r): r is Exclude<EmitResult, { status: 'success' }> => r.status !== 'success',
    );
    if (bad.length === 0 || (bad.length < results.length && options.requireAll !== true)) return SUCCESS;
    const error = new AggregateError(
      bad.map((r) => r.error),
      `${bad.length} of ${results.length} composite transports failed`,
    );
    return bad.some((r) => r.status === 'retryable')
      ? { status: 'retryable', error }
      : { status: 'failure', error };
  };
  const eachChild = async (timeoutMs: number, method: 'flush' | 'close'): Promise<boolean> => {
    const done = await Promise.all(
      children.map(async (child) => {
        if (child[method] === undefined) return true;
        try {
          const done = method === 'flush' ? child.flush!(timeoutMs) : child.close!(timeoutMs);
          return (await withTimeout(done, timeoutMs)) ?? false;
        } catch {
          return false;
        }
      }),
    );
    return done.every(Boolean);
  };
  return {
    async emit(event: OpenLineageEvent) {
      if (children.length === 0) return SUCCESS;
      if (options.strategy === 'failover') {
        const results: EmitResult[] = [];
        for (const child of children) {
          const result = await safeEmit(child, event);
          if (result.status === 'success') return SUCCESS;
          results.push(result);
        }
        return combine(results);
      }
      return combine(await Promise.all(children.map((child) => safeEmit(child, event))));
    },
    flush: (timeoutMs) => eachChild(timeoutMs, 'flush'),
    close: (timeoutMs) => eachChild(timeoutMs, 'close'),
  };
}
