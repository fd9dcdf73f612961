import type { Queryable } from '../db.js';

/**
 * An API key as stored, without its secret (see security/keys.ts). `Role` is the roles of the layer that writes
 * keys: the column is text, and only that layer writes it.
 */
export interface ApiKeyRow<Role extends string = string> {
  readonly id: string;
  readonly name: string;
  readonly role: Role;
  readonly namespaces: readonly string[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** An API key as stored with the salted hash of its secret: what a bearer key is checked against. */
export interface ApiKeySecretRow<Role extends string = string> extends ApiKeyRow<Role> {
  readonly salt: Uint8Array;
  readonly hash: Uint8Array;
}

/** What {@link insertApiKey} writes: a key not yet revoked. */
export type ApiKeyWrite<Role extends string = string> = Omit<ApiKeySecretRow<Role>, 'revokedAt'>;

const RECORD_COLUMNS = `id, name, role, namespaces, created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"`;

/** Stores a new key; returns it as stored (without its secret). */
export async function insertApiKey<Role extends string>(
  db: Queryable,
  key: ApiKeyWrite<Role>,
): Promise<ApiKeyRow<Role>> {
  const [row] = await db.query<ApiKeyRow<Role>>(
    `INSERT INTO api_keys (id, name, role, namespaces, salt, hash, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     RETURNING ${RECORD_COLUMNS}`,
    [key.id, key.name, key.role, key.namespaces, key.salt, key.hash, key.createdAt, key.expiresAt],
  );
  return row!;
}

/** Every key, newest first (revoked and expired ones included). */
export function readApiKeys<Role extends string>(db: Queryable): Promise<ApiKeyRow<Role>[]> {
  return db.query<ApiKeyRow<Role>>(`SELECT ${RECORD_COLUMNS}
     FROM api_keys ORDER BY created_at DESC, id`);
}

/** Revokes the keys not yet revoked whose id or name is `idOrName`, as of `now`; returns them. */
export function revokeApiKeys<Role extends string>(
  db: Queryable,
  idOrName: string,
  now: Date,
): Promise<ApiKeyRow<Role>[]> {
  return db.query<ApiKeyRow<Role>>(
    `UPDATE api_keys SET revoked_at = $2 WHERE (id = $1 OR name = $1) AND revoked_at IS NULL
     RETURNING ${RECORD_COLUMNS}`,
    [idOrName, now],
  );
}

/** Whether the store holds any key (revoked ones included). */
export async function apiKeyExists(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>('SELECT EXISTS (SELECT 1 FROM api_keys) AS found');
  return row?.found === true;
}

/** The key with id `id` and the hash of its secret, or undefined if there is none. */
export async function readApiKeySecret<Role extends string>(
  db: Queryable,
  id: string,
): Promise<ApiKeySecretRow<Role> | undefined> {
  const [row] = await db.query<ApiKeySecretRow<Role>>(
    `SELECT id, name, role, namespaces, salt, hash, created_at AS "createdAt", expires_at AS "expiresAt",
                  revoked_at AS "revokedAt" FROM api_keys WHERE id = $1`,
    [id],
  );
  return row;
}
