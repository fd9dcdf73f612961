import { createHash, timingSafeEqual } from 'node:crypto';
import type { Db } from '../store/db.js';
import { readReplicaSecret } from '../store/queries/replication.js';
import { Principal } from './access.js';

/**
 * How replicas of one store authenticate to each other. A follower that consumes from Kafka forwards the events
 * to the writer's batch endpoint with no caller behind them, so it sends `Authorization: Bearer hwr_<secret>`,
 * the secret being one row of the store they share (migration 014). Nothing needs configuring, and a replica
 * without the store's secret cannot be one anyway.
 *
 * The credential is worth no more than the batch endpoint: the writer takes it there only, as a writer of every
 * namespace (what Kafka ingest on the writer itself may write), and refuses it on every other route.
 */
export const REPLICA_TOKEN_PREFIX = 'hwr_';

/** The one path a replica credential is good for. */
export const REPLICA_PATH = '/api/v1/lineage/batch';

/** Who a forwarded batch comes from: the audit log and the rate limit see `replica`. */
export const REPLICA_PRINCIPAL = new Principal('replica', 'a replica of this store', [
  { role: 'writer', namespaces: ['*'] },
]);

/** The store's replica secret, read once and kept (it never changes). */
export class ReplicaCredential {
  readonly #db: Db;
  #secret: Promise<string> | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The Authorization header a replica sends. */
  async header(): Promise<string> {
    return `Bearer ${REPLICA_TOKEN_PREFIX}${await this.#read()}`;
  }

  /** Whether `token` (without "Bearer ") is this store's replica credential. */
  async verify(token: string): Promise<boolean> {
    if (!token.startsWith(REPLICA_TOKEN_PREFIX)) return false;
    // Hashing both sides gives equal lengths, which timingSafeEqual needs, without leaking the secret's length.
    const digest = (text: string) => createHash('sha256').update(text).digest();
    return timingSafeEqual(digest(token.slice(REPLICA_TOKEN_PREFIX.length)), digest(await this.#read()));
  }

  #read(): Promise<string> {
    this.#secret ??= readReplicaSecret(this.#db)
      .then((secret) => {
        if (secret === undefined) throw new Error('the store has no replica secret (migration 014)');
        return secret;
      })
      .catch((error: unknown) => {
        // A store that was away is asked again next time.
        this.#secret = undefined;
        throw error;
      });
    return this.#secret;
  }
}
