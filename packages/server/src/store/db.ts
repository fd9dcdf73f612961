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
 */
export async function openPostgresDb(url: string, poolSize = 8): Promise<Db> {
  const typeParser = new pg.TypeOverrides();
  typeParser.setTypeParser(INT8_OID, 'text', (value: string) => Number(value));
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: typeParser });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on the next checkout.
  });
  let lockClient: pg.PoolClient;
  try {
    lockClient = await pool.connect();
  } catch (error) {
    await pool.end();
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      `Could not connect to PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}. Check --database-url.`,
      { cause: error },
    );
  }
  const locked = await lockClient.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
    WRITER_LOCK_KEY,
  ]);
  if (locked.rows[0]?.locked !== true) {
    lockClient.release();
    await pool.end();
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      `Another Headwater server is writing to ${redactUrl(url)}. Stop it, or point this one at another database.`,
    );
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
    close: async () => {
      lockClient.release();
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
