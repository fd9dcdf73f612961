import type { OpenLineageEvent, RunEvent } from '../generated/model.js';
import type { EmitResult, Transport } from './transport.js';
import { SUCCESS } from './transport.js';

/** A transport that keeps events in memory, for your tests. */
export interface InMemoryTransport extends Transport {
  /** Every event received, in order, as JSON round-tripped copies (so later mutation does not leak in). */
  readonly events: readonly OpenLineageEvent[];
  /** The run events received, in order. */
  runEvents(): RunEvent[];
  /** Forgets every event received. */
  clear(): void;
}

/** Options of {@link createInMemoryTransport}. */
export interface InMemoryTransportOptions {
  /**
   * Decides the result of each emit, to simulate a failing backend. The event is recorded only on success.
   * @default always success
   */
  readonly respond?: (event: OpenLineageEvent, index: number) => EmitResult;
}

/**
 * Creates a transport that records events in memory.
 *
 * @example
 * ```ts
 * const transport = createInMemoryTransport();
 * const client = createClient({ transport });
 * await track({ client, job: { namespace: 'test', name: 'job' } }, () => 42);
 * expect(transport.runEvents().map((e) => e.eventType)).toEqual(['START', 'COMPLETE']);
 * ```
 */
export function createInMemoryTransport(options: InMemoryTransportOptions = {}): InMemoryTransport {
  const events: OpenLineageEvent[] = [];
  let calls = 0;
  return {
    events,
    emit(event) {
      const result = options.respond?.(event, calls++) ?? SUCCESS;
      if (result.status === 'success') events.push(JSON.parse(JSON.stringify(event)) as OpenLineageEvent);
      return Promise.resolve(result);
    },
    runEvents: () => events.filter((event): event is RunEvent => 'run' in event && event.run !== undefined),
    clear: () => {
      events.length = 0;
    },
  };
}
