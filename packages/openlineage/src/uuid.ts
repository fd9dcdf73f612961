import { randomFillSync } from 'node:crypto';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Options of {@link createUuidV7Generator}; both exist so tests can pin the output. */
export interface UuidV7GeneratorOptions {
  /**
   * Milliseconds since the Unix epoch.
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * Fills a buffer with random bytes.
   * @default crypto.randomFillSync
   */
  readonly fillRandom?: (bytes: Uint8Array) => void;
}

/**
 * Makes a UUIDv7 generator (RFC 9562): 48 bits of Unix milliseconds, then random bits. Ids from one generator
 * sort in creation order, even within one millisecond, because the 12-bit `rand_a` field is used as a counter
 * (RFC 9562 section 6.2, method 1) and the timestamp never goes backwards.
 */
export function createUuidV7Generator(options: UuidV7GeneratorOptions = {}): () => string {
  const now = options.now ?? Date.now;
  const fillRandom = options.fillRandom ?? ((bytes: Uint8Array) => void randomFillSync(bytes));
  let lastMs = -1;
  let counter = 0;
  return () => {
    const bytes = new Uint8Array(16);
    fillRandom(bytes);
    let ms = Math.max(Math.trunc(now()), 0);
    if (ms <= lastMs) {
      // Same (or an earlier, clock-stepped) millisecond: keep the last timestamp and count up.
      ms = lastMs;
      counter++;
      if (counter > 0xfff) {
        ms++;
        counter = 0;
      }
    } else {
      // Start the counter in the lower half so there is room to count up before it overflows.
      counter = ((bytes[6]! << 8) | bytes[7]!) & 0x7ff;
    }
    lastMs = ms;
    // 48-bit big-endian timestamp; division keeps it exact beyond 32 bits.
    const high = Math.floor(ms / 0x1_0000_0000);
    const low = ms >>> 0;
    bytes[0] = (high >>> 8) & 0xff;
    bytes[1] = high & 0xff;
    bytes[2] = (low >>> 24) & 0xff;
    bytes[3] = (low >>> 16) & 0xff;
    bytes[4] = (low >>> 8) & 0xff;
    bytes[5] = low & 0xff;
    bytes[6] = 0x70 | ((counter >>> 8) & 0x0f);
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | (bytes[8]! & 0x3f);
    const hex = Buffer.from(bytes).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}

/**
 * Returns a new UUIDv7, the kind of run id the OpenLineage clients generate: time-ordered, so run ids sort
 * by start time.
 *
 * @example
 * ```ts
 * const runId = uuidv7(); // '0190b6a2-5c3e-7a41-9d2f-6c0e8b1f2a3d'
 * ```
 */
export const uuidv7: () => string = createUuidV7Generator();

/** True when `value` is a UUID in the 8-4-4-4-12 hex form (any version), as `format: uuid` requires. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** The Unix milliseconds stored in a UUIDv7, or `undefined` when `id` is not a UUIDv7. */
export function uuidv7Timestamp(id: string): number | undefined {
  if (!isUuid(id) || id[14] !== '7') return undefined;
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
