import { mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { HeadwaterError } from '../errors.js';
import { startEmbeddedWorker } from './embedded-db.js';

/** Something that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  /**
   * Runs one statement with `$1`-style parameters and returns its rows. A `name` lets PostgreSQL keep the
   * statement prepared per connection (its text must then never change); the embedded store ignores it.
   */
  query<Row = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
    name?: string,
  ): Promise<Row[]>;
}

/**
 * The lineage store's connection: the embedded PGlite database or a PostgreSQL server, behind one interface.
 * Both run the same SQL and migrations. Type parsing is aligned: int8 comes back as a JavaScript number (ids
 * and counts stay far below 2^53), timestamptz as Date, jsonb as parsed JSON.
 */
export interface Db extends Queryable {
  readonly kind: 'embedded' | 'postgres';
  /** Runs `fn` in one transaction; commits if it resolves, rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Resolves when the store answers and this process may write to it (for PostgreSQL: the writer lock is held,
   * re-taken if its connection was lost); rejects otherwise.
   */
  probe(): Promise<void>;
  /**
   * Resolves if a write may be tried now; rejects with a STORE_UNAVAILABLE-class error if it would fail (the
   * embedded store's disk is nearly full: PGlite must never meet a full disk, which can wedge it).
   */
  checkWritable(): Promise<void>;
  /** Registers a listener told when the store is lost without a statement failing (the writer lock's connection). */
  onLost(listener: (error: unknown) => void): void;
  /** Releases the connection(s) and locks. */
  close(): Promise<void>;
}

const INT8_OID = 20;
/** Key of the advisory lock held by the one writing server of a PostgreSQL database. */
const WRITER_LOCK_KEY = 0x4857_5452; // 'HWTR'

/**
 * Opens (creating if needed) the embedded store in `dataDir`, running on a thread of its own (see
 * embedded-worker.ts). Only one process may use a data dir at a time: a lock file with the owner's pid guards
 * it, because two PGlite instances on one folder corrupt it.
 */
export async function openEmbeddedDb(dataDir: string): Promise<Db> {
  const pgDir = path.join(dataDir, 'pg');
  await mkdir(pgDir, { recursive: true });
  const releaseLock = await lockDataDir(dataDir);
  let db: Db;
  try {
    db = await startEmbeddedWorker(pgDir);
  } catch (error) {
    await releaseLock();
    throw new HeadwaterError('STORE_UNAVAILABLE', `Could not open the embedded store in ${pgDir}.`, {
      cause: error,
    });
  }
  return {
    ...db,
    close: async () => {
      await db.close();
      await releaseLock();
    },
  };
}

async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = path.join(dataDir, 'headwater.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new HeadwaterError(
          'STORE_UNAVAILABLE',
          `The data dir ${dataDir} is in use by process ${owner}. Stop that server or pass another --data-dir.`,
        );
      }
      // The owner died without cleaning up (e.g. SIGKILL): the lock is stale.
      await rm(lockPath, { force: true });
    }
  }
  throw new HeadwaterError('STORE_UNAVAILABLE', `Could not lock the data dir ${dataDir}.`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Connects to the PostgreSQL server at `url` with a small pool, and takes a session advisory lock on a
 * dedicated connection so that only one Headwater server writes to a database (the writer assigns ids itself).
 *
 * Connections that go away (a restart, a failover, a terminated backend) never take the process down: the pool
 * replaces its clients on the next checkout, and the lock's connection is re-opened and the lock re-taken by
 * {@link Db.probe}. Between losing the lock and taking it again the store reports itself lost (see
 * {@link Db.onLost}), and the writer writes nothing.
 */
export async function openPostgresDb(url: string, poolSize = 8): Promise<Db> {
  const typeParser = new pg.TypeOverrides();
  typeParser.setTypeParser(INT8_OID, 'text', (value: string) => Number(value));
  const connection = {
    connectionString: url,
    types: typeParser,
    // A store that stops answering (frozen, partitioned) must not hold requests forever.
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
  };
  const pool = new pg.Pool({ ...connection, max: poolSize });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on the next checkout.
  });
  const lostListeners: ((error: unknown) => void)[] = [];
  let lockClient: pg.Client | undefined;
  let closed = false;

  /** Opens the lock's own connection and takes the writer lock, or throws STORE_UNAVAILABLE. */
  const takeLock = async (): Promise<void> => {
    const client = new pg.Client(connection);
    client.on('error', (error) => {
      // The connection holding the lock is gone, and the lock with it.
      if (lockClient !== client) return;
      lockClient = undefined;
      if (!closed) for (const listener of lostListeners) listener(error);
    });
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw new HeadwaterError(
        'STORE_UNAVAILABLE',
        `Could not connect to PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}. Check --database-url.`,
        { cause: error },
      );
    }
    const locked = await client
      .query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [WRITER_LOCK_KEY])
      .catch(async (error: unknown) => {
        await client.end().catch(() => undefined);
        throw error;
      });
    if (locked.rows[0]?.locked !== true) {
      await client.end().catch(() => undefined);
      throw new HeadwaterError(
        'STORE_UNAVAILABLE',
        `Another Headwater server is writing to ${redactUrl(url)}. Stop it, or point this one at another database.`,
      );
    }
    lockClient = client;
  };

  try {
    await takeLock();
  } catch (error) {
    await pool.end();
    throw error;
  }
  const run = async <Row>(
    q: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
    name?: string,
  ) =>
    (
      await (name === undefined
        ? q.query(sql, params as unknown[] | undefined)
        : q.query({ name, text: sql, values: (params ?? []) as unknown[] }))
    ).rows as Row[];
  return {
    kind: 'postgres',
    query: (sql, params, name) => run(pool, sql, params, name),
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({ query: (sql, params) => run(client, sql, params) });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    // PostgreSQL answers a full disk with an error (53100) and carries on; nothing to check ahead.
    checkWritable: () => Promise.resolve(),
    async probe() {
      if (lockClient === undefined) await takeLock();
      await lockClient!.query('SELECT 1');
      await pool.query('SELECT 1');
    },
    onLost(listener) {
      lostListeners.push(listener);
    },
    close: async () => {
      closed = true;
      await lockClient?.end().catch(() => undefined);
      await pool.end();
    },
  };
}

/** Hides the password of a connection URL for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable database url>';
  }
}
