import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { CopyTextParser, type TextRow } from './copy-text.js';
import { backoffDelayMs, sleep, type BackoffPolicy } from '../core/backoff.js';
import { HeadwaterError } from '../core/errors.js';
import { startEmbeddedWorker } from './embedded-db.js';
import {
  cannotRunOn,
  findPostgresBinaries,
  processRuns,
  startEmbeddedPostgres,
  type EmbeddedPostgresLog,
  type PostgresBinaries,
} from './embedded-postgres.js';
import { freeSpaceGuard } from './disk-space.js';

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
  /**
   * Streams the rows of a SELECT without parameters through `COPY (...) TO STDOUT`, a batch of rows at a time,
   * as text (see CopyTextParser): how start-up reads whole tables fast. PostgreSQL only; PGlite has no COPY to a
   * stream, and its loads read in pages instead (see readAll).
   */
  copyRows?(select: string, take: (rows: TextRow[]) => void): Promise<void>;
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
   * Resolves when the store answers (and, while this process is the writer, its writer lock's connection does);
   * rejects otherwise.
   */
  probe(): Promise<void>;
  /**
   * Tries to become, or stay, the one server that writes (see migration 010): resolves with the epoch this
   * process writes with, or undefined while another server holds the writer lock. Taking the lock raises the
   * lease's epoch and records `url` as where the writer takes requests. The embedded store has one server:
   * it always leads.
   */
  lead(url: string | undefined): Promise<number | undefined>;
  /** The epoch of the writer lease while this process holds the writer lock; undefined otherwise. */
  readonly epoch: number | undefined;
  /**
   * Calls `listener` with the payload of each notification on `channel` (PostgreSQL's LISTEN), and once more,
   * without one, each time the listening connection is re-established after a loss (notifications sent
   * meanwhile are gone), until the returned function is called. The embedded store has no other process to hear
   * from and never calls.
   */
  listen(channel: string, listener: (payload?: string) => void): () => Promise<void>;
  /**
   * Resolves if a write may be tried now; rejects with a STORE_UNAVAILABLE-class error if it would fail (the
   * embedded store's disk is nearly full: PGlite must never meet a full disk, which can wedge it).
   */
  checkWritable(): Promise<void>;
  /** Registers a listener told when the writer lock's connection is lost (the lock with it). */
  onLost(listener: (error: unknown) => void): void;
  /** Releases the connection(s) and locks. */
  close(): Promise<void>;
}

const INT8_OID = 20;
/** Key of the advisory lock held by the one writing server of a PostgreSQL database. */
export const WRITER_LOCK_KEY = 0x4857_5452; // 'HWTR'

/**
 * Waits between attempts to open a LISTEN connection again: soon after a blip, yet no more than every 5 s
 * while PostgreSQL is away (what was notified meanwhile is looked for once it listens again).
 */
export const LISTEN_RECONNECT_BACKOFF: Required<BackoffPolicy> = { baseDelayMs: 200, maxDelayMs: 5_000 };

/** The engine of the embedded store: PostgreSQL from npm-installed binaries, or PGlite (PostgreSQL in WASM). */
export type EmbeddedEngine = 'postgres' | 'pglite';

/** How to open the embedded store. */
export interface EmbeddedOptions {
  /** `auto` (the default): see {@link chooseEmbeddedEngine}. */
  readonly engine?: EmbeddedEngine | 'auto';
  /** Where the engine's own messages go. @default stderr */
  readonly log?: EmbeddedPostgresLog;
}

/** The embedded store, with the engine it runs on. */
export type EmbeddedDb = Db & {
  readonly engine: EmbeddedEngine;
  readonly engineVersion: string | undefined;
  /** Where the embedded PostgreSQL server takes connections (its socket); undefined on PGlite. */
  readonly connectionUrl: string | undefined;
};

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

/**
 * A log for what happens before (and beneath) the app's logger, such as the embedded store's PostgreSQL, which
 * starts first and outlives it: lines go to stderr from `level` up.
 */
export function stderrLog(level: (typeof LEVELS)[number] = 'debug'): EmbeddedPostgresLog {
  const at = (wanted: (typeof LEVELS)[number]) => LEVELS.indexOf(level) <= LEVELS.indexOf(wanted);
  return {
    warn: (message) => {
      if (at('warn')) process.stderr.write(`headwater: ${message}\n`);
    },
    info: (message) => {
      if (at('info')) process.stderr.write(`headwater: ${message}\n`);
    },
  };
}

/** What a store runs on: external PostgreSQL, or the embedded store with its engine and the engine's version. */
export function storeEngine(db: Db): {
  kind: 'embedded' | 'postgres';
  engine?: EmbeddedEngine;
  version?: string;
} {
  const { engine, engineVersion } = db as Partial<EmbeddedDb>;
  if (engine === undefined) return { kind: db.kind };
  return engineVersion === undefined
    ? { kind: 'embedded', engine }
    : { kind: 'embedded', engine, version: engineVersion };
}

/**
 * The engine for the embedded store in `dataDir` when none is asked for: the one that already holds its data;
 * for a new store PostgreSQL, when npm installed its binaries for this platform (see BENCHMARKS.md, "The
 * embedded store": it holds a million events in a fraction of PGlite's memory and disk), else PGlite.
 */
export async function chooseEmbeddedEngine(
  dataDir: string,
  asked: EmbeddedEngine | 'auto' = 'auto',
  log: EmbeddedPostgresLog = stderrLog(),
): Promise<{ engine: EmbeddedEngine; binaries: PostgresBinaries | undefined }> {
  const binaries = asked === 'pglite' ? undefined : await findPostgresBinaries();
  if (asked === 'postgres' && !binaries) {
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      `--embedded-engine postgres: no PostgreSQL binaries are installed for ${process.platform}-${process.arch} ` +
        '(the optional dependency @embedded-postgres/<platform> is missing). Reinstall with optional ' +
        'dependencies, or use --embedded-engine pglite.',
    );
  }
  const has = (engineDir: string) => existsSync(path.join(dataDir, engineDir, 'PG_VERSION'));
  if (asked === 'auto' && has('pg') && !has('postgres')) return { engine: 'pglite', binaries: undefined };
  if (asked === 'pglite' || !binaries) return { engine: 'pglite', binaries: undefined };
  const why = await cannotRunOn(path.join(dataDir, 'postgres'));
  if (why === undefined) return { engine: 'postgres', binaries };
  if (asked === 'postgres') {
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      `--embedded-engine postgres cannot run in ${dataDir}: ${why}. Choose a --data-dir it can reach, run ` +
        'Headwater as another user than root, or use --embedded-engine pglite.',
    );
  }
  log.warn(
    `the embedded store uses PGlite, not PostgreSQL: ${why}. Choose a --data-dir it can reach, or run ` +
      'Headwater as another user than root, for the PostgreSQL engine.',
  );
  return { engine: 'pglite', binaries: undefined };
}

/**
 * Opens (creating if needed) the embedded store in `dataDir`: a PostgreSQL server of its own in
 * `dataDir/postgres` (embedded-postgres.ts), or PGlite in `dataDir/pg` on a thread of its own
 * (embedded-worker.ts). Only one process may use a data dir at a time: a lock file with the owner's pid guards
 * it (two PGlite instances on one folder corrupt it; two servers would fight over one PostgreSQL).
 */
export async function openEmbeddedDb(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedDb> {
  await mkdir(dataDir, { recursive: true });
  const releaseLock = await lockDataDir(dataDir);
  try {
    const { engine, binaries } = await chooseEmbeddedEngine(dataDir, options.engine, options.log);
    if (engine === 'postgres') return await openEmbeddedPostgres(dataDir, binaries!, options, releaseLock);
    return await openPglite(dataDir, releaseLock);
  } catch (error) {
    await releaseLock();
    throw error;
  }
}

async function openEmbeddedPostgres(
  dataDir: string,
  binaries: PostgresBinaries,
  options: EmbeddedOptions,
  releaseLock: () => Promise<void>,
): Promise<EmbeddedDb> {
  const dir = path.join(dataDir, 'postgres');
  const server = await startEmbeddedPostgres(dir, binaries, options.log ?? stderrLog());
  let db: Db;
  try {
    db = await openPostgresDb(server.url, { what: `the embedded store's PostgreSQL in ${dir}` });
  } catch (error) {
    await server.stop();
    throw error;
  }
  const checkWritable = freeSpaceGuard(dir);
  const probe = db.probe.bind(db);
  const close = db.close.bind(db);
  // Assigned onto db itself, which keeps its epoch getter.
  return Object.assign(db, {
    engine: 'postgres' as const,
    engineVersion: server.version,
    connectionUrl: server.url,
    // PostgreSQL answers a full disk with an error and carries on, but it may have to stop to do so (a WAL
    // write that fails is a PANIC and a restart): the store refuses writes a little before the disk is full.
    checkWritable,
    async probe() {
      await checkWritable();
      await probe();
    },
    async close() {
      try {
        await close();
      } finally {
        await server.stop();
        await releaseLock();
      }
    },
  });
}

async function openPglite(dataDir: string, releaseLock: () => Promise<void>): Promise<EmbeddedDb> {
  const pgDir = path.join(dataDir, 'pg');
  await mkdir(pgDir, { recursive: true });
  let db: Omit<Db, 'lead' | 'epoch' | 'listen'>;
  try {
    db = await startEmbeddedWorker(pgDir);
  } catch (error) {
    throw new HeadwaterError('STORE_UNAVAILABLE', `Could not open the embedded store in ${pgDir}.`, {
      cause: error,
    });
  }
  let epoch: number | undefined;
  return {
    ...db,
    engine: 'pglite',
    engineVersion: undefined,
    connectionUrl: undefined,
    listen: () => () => Promise.resolve(),
    get epoch() {
      return epoch;
    },
    async lead(url) {
      epoch ??= await takeLease(db, url);
      return epoch;
    },
    close: async () => {
      await db.close();
      await releaseLock();
    },
  };
}

/** Raises the writer lease's epoch for a new writer and records where it takes requests. */
async function takeLease(q: Queryable, url: string | undefined): Promise<number> {
  const [row] = await q.query<{ epoch: number }>(
    'UPDATE writer_lease SET epoch = epoch + 1, leader_url = $1, since = now() WHERE id = 1 RETURNING epoch',
    [url ?? null],
  );
  return row!.epoch;
}

/** Records where the writer with `epoch` takes requests (known once it listens). */
export async function advertiseLeader(q: Queryable, epoch: number, url: string): Promise<void> {
  await q.query('UPDATE writer_lease SET leader_url = $2 WHERE id = 1 AND epoch = $1', [epoch, url]);
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
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processRuns(owner)) {
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

/**
 * Connects to the PostgreSQL server at `url` with a small pool. Any number of servers may share a database; the
 * one that writes (the writer assigns ids itself) holds a session advisory lock on a dedicated connection,
 * taken by {@link Db.lead}.
 *
 * Connections that go away (a restart, a failover, a terminated backend) never take the process down: the pool
 * replaces its clients on the next checkout. When the lock's connection goes, the lock goes with it: listeners
 * of {@link Db.onLost} are told, {@link Db.epoch} is undefined until {@link Db.lead} takes it again, and writes
 * made with the old epoch are refused by the store once another server has taken over (fencing).
 */
export async function openPostgresDb(
  url: string,
  options: {
    poolSize?: number;
    what?: string;
    /**
     * A schema of its own for this store, created if need be (a preview's: see src/servers/previews.ts). Its
     * tables are found before public's, which holds the extensions (pg_trgm); its writer lock is its own.
     */
    schema?: string;
  } = {},
): Promise<Db> {
  const poolSize = options.poolSize ?? 8;
  const { schema } = options;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new HeadwaterError('BAD_REQUEST', `${JSON.stringify(schema)} cannot name a store's schema.`);
  const what = options.what ?? `PostgreSQL at ${redactUrl(url)}`;
  const hint = options.what === undefined ? ' Check --database-url.' : '';
  const typeParser = new pg.TypeOverrides();
  typeParser.setTypeParser(INT8_OID, 'text', (value: string) => Number(value));
  const connection = {
    connectionString: url,
    types: typeParser,
    // A store that stops answering (frozen, partitioned) must not hold requests forever.
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    // The store's statements are short, but some (start-up loads, as-of walks) are estimated costly enough for
    // PostgreSQL to JIT-compile them, which took longer than running them (a third of a second at start).
    options: schema === undefined ? '-c jit=off' : `-c jit=off -c search_path=${schema},public`,
  };
  // The writer lock of a store in a schema of its own: the two-key form, a key space apart from the one-key lock.
  const lockSql =
    schema === undefined
      ? { text: 'SELECT pg_try_advisory_lock($1) AS locked', values: [WRITER_LOCK_KEY] }
      : {
          text: 'SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked',
          values: [WRITER_LOCK_KEY, schema],
        };
  const pool = new pg.Pool({ ...connection, max: poolSize });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on the next checkout.
  });
  const lostListeners: ((error: unknown) => void)[] = [];
  let lockClient: pg.Client | undefined;
  let epoch: number | undefined;
  let closed = false;

  /**
   * Opens the lock's own connection and tries the writer lock: true if taken, false if another server holds
   * it; throws STORE_UNAVAILABLE if the store cannot be reached.
   */
  const takeLock = async (): Promise<boolean> => {
    const client = new pg.Client(connection);
    client.on('error', (error) => {
      // The connection holding the lock is gone, and the lock with it.
      if (lockClient !== client) return;
      lockClient = undefined;
      epoch = undefined;
      void client.end().catch(() => undefined);
      if (!closed) for (const listener of lostListeners) listener(error);
    });
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw new HeadwaterError(
        'STORE_UNAVAILABLE',
        `Could not connect to ${what}: ${(error as Error).message}.${hint}`,
        { cause: error },
      );
    }
    const locked = await client
      .query<{ locked: boolean }>(lockSql.text, lockSql.values)
      .catch(async (error: unknown) => {
        await client.end().catch(() => undefined);
        throw error;
      });
    if (locked.rows[0]?.locked !== true) {
      await client.end().catch(() => undefined);
      return false;
    }
    lockClient = client;
    return true;
  };
  try {
    if (schema === undefined) await pool.query('SELECT 1');
    else await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } catch (error) {
    await pool.end();
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      `Could not connect to ${what}: ${(error as Error).message}.${hint}`,
      { cause: error },
    );
  }
  const run = async <Row>(
    q: pg.Pool | pg.PoolClient | pg.Client,
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
    async copyRows(select, take) {
      const client = await pool.connect();
      let failed: unknown;
      try {
        const parser = new CopyTextParser();
        for await (const chunk of client.query(copyTo(`COPY (${select}) TO STDOUT`)) as AsyncIterable<Buffer>)
          take(parser.push(chunk));
        parser.end();
      } catch (error) {
        failed = error;
        throw error;
      } finally {
        // A connection left inside a COPY cannot be used again.
        client.release(failed instanceof Error ? failed : undefined);
      }
    },
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
    get epoch() {
      return epoch;
    },
    async lead(leaderUrl) {
      if (lockClient !== undefined && epoch !== undefined) return epoch;
      if (lockClient === undefined && !(await takeLock())) return undefined;
      const client = lockClient!;
      try {
        epoch = await takeLease({ query: (sql, params) => run(client, sql, params) }, leaderUrl);
      } catch (error) {
        // Without a new epoch the lock is no use: let it go, another server may take it.
        if (lockClient === client) lockClient = undefined;
        await client.end().catch(() => undefined);
        throw error;
      }
      return epoch;
    },
    async probe() {
      await pool.query('SELECT 1');
      if (lockClient !== undefined) await lockClient.query('SELECT 1');
    },
    listen(channel, listener) {
      let client: pg.Client | undefined;
      let stopped = false;
      const stopping = new AbortController();
      /** Connections refused in a row; a listening connection starts the count again. */
      let failures = 0;
      const connect = async (): Promise<void> => {
        while (!stopped && !closed) {
          const next = new pg.Client(connection);
          next.on('error', () => {
            if (client !== next) return;
            client = undefined;
            void next.end().catch(() => undefined);
            void connect();
          });
          next.on('notification', (message) => {
            if (message.channel === channel) listener(message.payload);
          });
          try {
            await next.connect();
            await next.query(`LISTEN ${pg.Client.prototype.escapeIdentifier(channel)}`);
            if (stopped || closed) {
              await next.end().catch(() => undefined);
              return;
            }
            client = next;
            failures = 0;
            // What was sent while nobody listened is lost: the listener looks for itself.
            listener();
            return;
          } catch {
            await next.end().catch(() => undefined);
            await sleep(backoffDelayMs(++failures, LISTEN_RECONNECT_BACKOFF), stopping.signal);
          }
        }
      };
      void connect();
      return async () => {
        stopped = true;
        stopping.abort();
        await client?.end().catch(() => undefined);
      };
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
