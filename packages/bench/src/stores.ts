import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { StoreName } from './options.js';

/** A fresh, empty store for one benchmark run, and how to point `headwater serve` at it. */
export interface BenchStore {
  readonly name: StoreName;
  /** What the table heading says about the store. */
  readonly description: string;
  readonly serveArgs: readonly string[];
  /** The PostgreSQL database the server writes to, for write statistics; undefined for the embedded store. */
  readonly databaseUrl: string | undefined;
  /** Removes the data dir or drops the database. Safe to call twice. */
  cleanup(): Promise<void>;
}

/** Why a store was skipped, when it cannot be prepared (PostgreSQL unreachable). */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/**
 * A new temp data dir for the embedded store, on the default engine (PostgreSQL from npm) or the one named; the
 * server creates the store in it on start.
 */
export async function prepareEmbeddedStore(engine?: 'postgres' | 'pglite'): Promise<BenchStore> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-bench-'));
  return {
    name: 'embedded',
    description: `embedded store (${engine ?? 'default engine'}) in a fresh data dir ${dir}`,
    serveArgs: ['--data-dir', dir, ...(engine ? ['--embedded-engine', engine] : [])],
    databaseUrl: undefined,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * A new database on the PostgreSQL server at `adminUrl`, dropped again by cleanup. A fresh database per run keeps
 * runs comparable and never touches data the caller cares about.
 */
export async function preparePostgresStore(adminUrl: string): Promise<BenchStore> {
  const name = `headwater_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let version: string;
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  try {
    await admin.connect();
    version =
      (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    throw new StoreUnavailableError(
      `PostgreSQL at ${redact(adminUrl)} is unusable (${(error as Error).message}); set DATABASE_URL to a server ` +
        'where the role may CREATE DATABASE.',
      { cause: error },
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // The server also wants a data dir (for its lock file); give it a throwaway one.
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'headwater-bench-pg-'));
  let dropped = false;
  return {
    name: 'postgres',
    description: `PostgreSQL ${version}, fresh database ${name} on ${url.host}`,
    serveArgs: ['--database-url', url.toString(), '--data-dir', dataDir],
    databaseUrl: url.toString(),
    async cleanup() {
      await rm(dataDir, { recursive: true, force: true });
      if (dropped) return;
      const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        dropped = true;
      } finally {
        await client.end();
      }
    },
  };
}

/** Hides the password of a connection URL for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable DATABASE_URL>';
  }
}
