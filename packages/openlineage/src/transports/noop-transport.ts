import type { Transport } from './transport.js';
import { SUCCESS } from './transport.js';

/** Creates a transport that drops every event: what `OPENLINEAGE_DISABLED=true` selects. */
export function createNoopTransport(): Transport {
  return { emit: () => Promise.resolve(SUCCESS) };
}
