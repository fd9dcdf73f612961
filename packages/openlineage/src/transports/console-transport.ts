import type { OpenLineageEvent } from '../generated/model.js';
import type { Transport } from './transport.js';
import { SUCCESS, toError } from './transport.js';

/** Options of {@link createConsoleTransport}. */
export interface ConsoleTransportOptions {
  /**
   * Where each JSON line goes.
   * @default console.log
   */
  readonly write?: (line: string) => void;
  /**
   * Indentation of the JSON, or 0 for one event per line.
   * @default 0
   */
  readonly indent?: number;
}

/** Creates a transport that prints each event as JSON: the fallback when nothing is configured. */
export function createConsoleTransport(options: ConsoleTransportOptions = {}): Transport {
  const write = options.write ?? ((line: string) => console.log(line));
  const indent = options.indent ?? 0;
  return {
    emit(event: OpenLineageEvent) {
      try {
        write(JSON.stringify(event, null, indent));
        return Promise.resolve(SUCCESS);
      } catch (thrown) {
        return Promise.resolve({ status: 'failure', error: toError(thrown) });
      }
    },
  };
}
