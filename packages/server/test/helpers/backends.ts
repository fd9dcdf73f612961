import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { resolveConfig, type ServerConfig } from '../../src/config/server-config.js';
import { openEmbeddedDb, openPostgresDb, type Db } from '../../src/store/db.js';
import { createServer, type HeadwaterServer } from '../../src/servers/server.js';
import { inProcess, overSocket, type Send } from './api.js';

/** A store the suite runs against: the embedded one always, PostgreSQL when DATABASE_URL is set. */
export interface Backend {
  readonly name: 'embedded' | 'postgres';
  /** Creates a fresh, empty store and returns the config pointing at it and a cleanup function. */
  fresh(): Promise<{
    config: Partial<ServerConfig> & Pick<ServerConfig, 'dataDir'>;
    cleanup: () => Promise<void>;
  }>;
}

const embedded: Backend = {
  name: 'embedded',
  async fresh() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-test-'));
    await cp(inject('embeddedTemplateDir'), dir, { recursive: true });
    return {
      config: { dataDir: dir, databaseUrl: undefined },
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
};

function postgres(adminUrl: string): Backend {
  return {
    name: 'postgres',
    async fresh() {
      const name = `headwater_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'headwater-test-pg-'));
      return {
        config: { dataDir, databaseUrl: url.toString() },
        cleanup: async () => {
          const client = new pg.Client({ connectionString: adminUrl });
          await client.connect();
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await client.end();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}

/**
 * The backends to run storage tests against. In CI PostgreSQL is required: a missing DATABASE_URL fails the
 * run instead of silently testing less.
 */
export function backends(): Backend[] {
  const url = process.env.DATABASE_URL;
  if (!url) {
    if (process.env.CI === 'true')
      throw new Error('CI=true but DATABASE_URL is not set: PostgreSQL tests must run in CI.');
    console.warn(
      'DATABASE_URL is not set: skipping the PostgreSQL backend (set it to run the suite against PostgreSQL).',
    );
    return [embedded];
  }
  return [embedded, postgres(url)];
}

/** Opens a Db on a fresh store of `backend` (for store-level tests). */
export async function freshDb(backend: Backend): Promise<{ db: Db; cleanup: () => Promise<void> }> {
  const { config, cleanup } = await backend.fresh();
  const db = config.databaseUrl
    ? await openPostgresDb(config.databaseUrl)
    : await openEmbeddedDb(config.dataDir);
  return {
    db,
    cleanup: async () => {
      await db.close();
      await cleanup();
    },
  };
}

/** The frozen config of a test server on `storeConfig`: silent, on a free port. */
function testConfig(storeConfig: Partial<ServerConfig>, overrides: Partial<ServerConfig>): ServerConfig {
  return Object.freeze({
    ...resolveConfig({}, {}),
    port: 0,
    logLevel: 'silent' as const,
    ...storeConfig,
    ...overrides,
  });
}

/** A server on a fresh store, with the way to send it requests. */
export interface TestServer {
  readonly server: HeadwaterServer;
  readonly config: ServerConfig;
  /** Sends a request to the API: in-process for {@link startApp}, over the socket for {@link startServer}. */
  readonly request: Send;
  /** Closes the server and removes its store. */
  stop(): Promise<void>;
}

/**
 * Builds a server on a fresh store of `backend` that answers in-process (`app.inject()`) and listens on no
 * socket: for tests of the API's requests and answers. Of what `listen()` starts, only the column graph's load
 * is done (Kafka ingest, forwarding and retention passes are not started).
 */
export async function startApp(backend: Backend, overrides: Partial<ServerConfig> = {}): Promise<TestServer> {
  const { config: storeConfig, cleanup } = await backend.fresh();
  const config = testConfig(storeConfig, overrides);
  const server = await createServer(config);
  // As listen() does: loaded now, the column graph is then built from the commits, as a server's that started
  // before its events. Left to the first request that needs it, it would be loaded from the store after them.
  await server.columnGraph.load(server.db);
  return {
    server,
    config,
    request: inProcess(server.app),
    stop: async () => {
      await server.close();
      await cleanup();
    },
  };
}

/**
 * Starts a server on a fresh store of `backend`, listening on a free loopback port: for tests of what needs a
 * socket (clients and commands that connect to `url`, streams, several processes). Others use {@link startApp}.
 */
export async function startServer(
  backend: Backend,
  overrides: Partial<ServerConfig> = {},
): Promise<TestServer & { url: string }> {
  const { config: storeConfig, cleanup } = await backend.fresh();
  const config = testConfig(storeConfig, overrides);
  const server = await createServer(config);
  const url = await server.listen();
  return {
    server,
    url,
    config,
    request: overSocket(url),
    stop: async () => {
      await server.close();
      await cleanup();
    },
  };
}
