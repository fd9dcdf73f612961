import { parseArgs } from 'node:util';
import { createApiKey, migrate, openEmbeddedDb, openPostgresDb, resolveConfig } from './server-internals.js';

/**
 * For `--auth`: creates a writer key over every namespace in the store the server is about to serve (before it
 * starts, as `headwater keys create` would), which turns authentication on; the ingest clients send it.
 */
export async function createBenchKey(serveArgs: readonly string[]): Promise<string> {
  const { values } = parseArgs({
    args: [...serveArgs],
    options: { 'data-dir': { type: 'string' }, 'database-url': { type: 'string' } },
    strict: false,
  });
  const config = resolveConfig(
    {
      'data-dir': values['data-dir'],
      'database-url': values['database-url'],
    },
    {},
  );
  const db = config.databaseUrl
    ? await openPostgresDb(config.databaseUrl)
    : await openEmbeddedDb(config.dataDir);
  try {
    await migrate(db);
    return (await createApiKey(db, { name: 'bench', role: 'writer', namespaces: ['*'] })).token;
  } finally {
    await db.close();
  }
}
