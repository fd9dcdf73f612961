import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { HeadwaterError } from '../core/errors.js';
import type { Queryable } from '../store/db.js';
import {
  apiKeyExists,
  insertApiKey,
  readApiKeys,
  readApiKeySecret,
  revokeApiKeys,
  type ApiKeyRow,
  type ApiKeySecretRow,
} from '../store/queries/keys.js';
import { isRole, Principal, ROLES, type Role } from './access.js';

/** An API key as stored (never its secret). */
export type ApiKeyRecord = ApiKeyRow<Role>;

/** What `createApiKey` needs. */
export interface NewApiKey {
  readonly name: string;
  readonly role: string;
  readonly namespaces: readonly string[];
  readonly expiresAt?: Date | undefined;
}

const KEY_PATTERN = /^hw_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

/**
 * A key's id and secret (`hw_<id>_<secret>`), or undefined for a token of another shape. The secret is base64url
 * and may hold `_` itself: split the token by the pattern, never on `_`.
 */
export function keyParts(token: string): { id: string; secret: string } | undefined {
  const match = KEY_PATTERN.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

/**
 * The salted SHA-256 of a key's secret. The secret is 32 random bytes: nobody can search that space, so a
 * password hash's deliberate slowness (bcrypt, argon2: milliseconds per check) buys nothing and would cost
 * ingest throughput on every request. The per-key salt keeps two stores' hashes unrelated.
 */
function hashSecret(salt: Uint8Array, secret: string): Buffer {
  return createHash('sha256').update(salt).update(secret).digest();
}

/** Creates a key and returns it with its one-time plain text (`hw_<id>_<secret>`), which is not stored. */
export async function createApiKey(
  db: Queryable,
  key: NewApiKey,
  now = new Date(),
): Promise<{ record: ApiKeyRecord; token: string }> {
  if (!isRole(key.role))
    throw new HeadwaterError(
      'BAD_REQUEST',
      `role must be one of ${ROLES.join(', ')}; got ${JSON.stringify(key.role)}.`,
    );
  if (key.name.trim() === '') throw new HeadwaterError('BAD_REQUEST', 'A key needs a --name.');
  if (key.namespaces.length === 0)
    throw new HeadwaterError(
      'BAD_REQUEST',
      "A key needs --namespaces (a pattern, such as 'analytics*' or '*').",
    );
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime())
    throw new HeadwaterError('BAD_REQUEST', `--expires ${key.expiresAt.toISOString()} is in the past.`);
  const id = [...randomBytes(12)].map((byte) => 'abcdefghijklmnopqrstuvwxyz0123456789'[byte % 36]).join('');
  const secret = randomBytes(32).toString('base64url');
  const salt = randomBytes(16);
  const row = await insertApiKey(db, {
    id,
    name: key.name,
    role: key.role,
    namespaces: key.namespaces,
    salt,
    hash: hashSecret(salt, secret),
    createdAt: now,
    expiresAt: key.expiresAt ?? null,
  });
  return { record: recordOf(row), token: `hw_${id}_${secret}` };
}

/** Every key, newest first (revoked and expired ones included, marked). */
export async function listApiKeys(db: Queryable): Promise<ApiKeyRecord[]> {
  return (await readApiKeys<Role>(db)).map(recordOf);
}

/** Revokes a key by id or name; resolves with the keys revoked (none if nothing matched or all were revoked). */
export async function revokeApiKey(
  db: Queryable,
  idOrName: string,
  now = new Date(),
): Promise<ApiKeyRecord[]> {
  return (await revokeApiKeys<Role>(db, idOrName, now)).map(recordOf);
}

/** Whether any key was ever created. */
export function anyApiKey(db: Queryable): Promise<boolean> {
  return apiKeyExists(db);
}

function recordOf(row: ApiKeyRecord): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    namespaces: row.namespaces,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
  };
}

/** A key record as JSON (what the API and `keys list --json` show). */
export function apiKeyJson(record: ApiKeyRecord, now = Date.now()) {
  const state = record.revokedAt
    ? 'revoked'
    : record.expiresAt && record.expiresAt.getTime() <= now
      ? 'expired'
      : 'active';
  return {
    id: record.id,
    name: record.name,
    role: record.role,
    namespaces: record.namespaces,
    createdAt: record.createdAt.toISOString(),
    expiresAt: record.expiresAt?.toISOString() ?? null,
    revokedAt: record.revokedAt?.toISOString() ?? null,
    state,
  };
}

/** Why a bearer key was refused (what the audit log and the 401 say). */
export type KeyRefusal = 'malformed' | 'unknown' | 'revoked' | 'expired';

/** How long a key read from the store is trusted before it is read again (a revocation by another process). */
const KEY_CACHE_MS = 5_000;

/** How often "no key exists" is read again from the store. */
const NO_KEY_RECHECK_MS = 1_000;

/**
 * Checks bearer keys against the store. A verified key is kept in memory for a few seconds, so a request costs
 * one SHA-256 of the secret and no query; a revocation through this server applies at once, through another
 * process (the CLI on PostgreSQL) within KEY_CACHE_MS. Unknown ids are also remembered briefly, so a flood of
 * made-up keys costs no query each.
 */
export class ApiKeyVerifier {
  readonly #db: Queryable;
  readonly #now: () => number;
  readonly #cache = new Map<
    string,
    { row: ApiKeySecretRow<Role> | undefined; principal?: Principal; readAt: number }
  >();
  /** true once a key exists, else when "none" was last read. */
  #anyKey: true | number | undefined;

  readonly #shared: boolean;

  /** `shared`: other processes may write keys into this store (PostgreSQL). */
  constructor(db: Queryable, shared: boolean, now: () => number = Date.now) {
    this.#db = db;
    this.#shared = shared;
    this.#now = now;
  }

  /** Checks `token`: the key's principal, or why it was refused. */
  async verify(token: string): Promise<{ principal: Principal } | { refused: KeyRefusal }> {
    const parts = keyParts(token);
    if (!parts) return { refused: 'malformed' };
    const { id, secret } = parts;
    const now = this.#now();
    let entry = this.#cache.get(id);
    if (!entry || now - entry.readAt > KEY_CACHE_MS) {
      const read = readApiKeySecret<Role>(this.#db, id);
      // With the store away, a key read before is judged as it was read: nobody can revoke it meanwhile (keys
      // live in the store), and the server keeps answering what it can (reads, /metrics) through the outage.
      // A key never read needs the store.
      const row = entry ? await read.catch(() => entry!.row) : await read;
      if (this.#cache.size > 10_000) this.#cache.clear();
      entry = { row, readAt: now };
      this.#cache.set(id, entry);
    }
    const row = entry.row;
    if (!row) return { refused: 'unknown' };
    const expected = Buffer.from(row.hash);
    const actual = hashSecret(row.salt, secret);
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual))
      return { refused: 'unknown' };
    if (row.revokedAt) return { refused: 'revoked' };
    if (row.expiresAt && row.expiresAt.getTime() <= now) return { refused: 'expired' };
    entry.principal ??= new Principal(`key:${row.id}`, row.name, [
      { role: row.role, namespaces: row.namespaces },
    ]);
    return { principal: entry.principal };
  }

  /**
   * Whether any key was ever created (revoked ones included: revoking the last key must not open the server).
   * Once true it stays true; "none yet" is read again at most every NO_KEY_RECHECK_MS, so a key made by another
   * process (the CLI on PostgreSQL) closes the server within that time.
   */
  async anyKey(): Promise<boolean> {
    const now = this.#now();
    if (this.#anyKey === true) return true;
    // The embedded store is this process's alone: only this server makes keys there, and it says so
    // (invalidate), so "none" need not be read again.
    const recheck = this.#anyKey === undefined || (this.#shared && now - this.#anyKey > NO_KEY_RECHECK_MS);
    if (recheck) {
      const previous = this.#anyKey;
      try {
        this.#anyKey = (await anyApiKey(this.#db)) ? true : now;
      } catch (error) {
        // The store is away: "none" as last read holds, since a key can only be made in the store. Never
        // read: the request waits for the store like any other (503).
        if (previous === undefined) throw error;
      }
    }
    return this.#anyKey === true;
  }

  /** Forgets what was read (after this server created or revoked a key). */
  invalidate(): void {
    this.#cache.clear();
    this.#anyKey = undefined;
  }
}
