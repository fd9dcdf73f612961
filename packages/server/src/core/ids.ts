import { createHash } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True if `value` is a UUID in the canonical 8-4-4-4-12 form. */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

function formatUuid(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.subarray(0, 16)).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A version-3 UUID of the bytes of `name` with no namespace, as Java's `UUID.nameUUIDFromBytes` makes it. Marquez
 * maps non-UUID runIds this way, so a producer that sends `"run_id"` gets the same run id from both servers.
 */
export function nameUuid(name: string): string {
  const bytes = createHash('md5').update(name, 'utf8').digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x30;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUuid(bytes);
}

/** The run uuid for a runId: itself (lower-cased) when it is a UUID, else its {@link nameUuid}. */
export function runUuidOf(runId: string): string {
  return isUuid(runId) ? runId.toLowerCase() : nameUuid(runId);
}

/** A content address: the first 16 bytes of the SHA-256 of `text`, formatted as a UUID. */
export function contentUuid(text: string): string {
  return formatUuid(createHash('sha256').update(text, 'utf8').digest());
}

/** A 64-bit content hash of `text` as a decimal string (for bigint columns), from SHA-1. */
export function contentHash64(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest().readBigInt64BE(0).toString();
}

/** JSON with object keys sorted, so that equal values give equal text whatever the producer's key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}
