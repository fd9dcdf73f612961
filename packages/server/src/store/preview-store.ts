/**
 * Where a preview keeps its events: a store of its own beside production's, so that nothing production reads
 * (its graph, search, statistics, incidents, retention, backups) ever meets them. On PostgreSQL (a database of
 * the user's or the embedded store's own server) that is a schema, `hw_preview_<name>`, with the same tables;
 * on PGlite, which has one connection and so one search path, a database of its own in the data dir.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { HeadwaterError } from '../core/errors.js';
import { openEmbeddedDb, openPostgresDb, type Db, type EmbeddedDb } from './db.js';
import { dropSchema } from './queries/previews.js';

/** A preview's name: lower-case letters, digits and inner dashes, as in a branch or a pull request's slug. */
export const PREVIEW_NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

/** Where production's store is: what a preview's store is opened beside. */
export interface StoreLocation {
  readonly db: Db;
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
}

/** The schema of a preview's store on PostgreSQL. */
export function previewSchema(name: string): string {
  if (!PREVIEW_NAME.test(name))
    throw new HeadwaterError('BAD_REQUEST', `${JSON.stringify(name)} is not a preview name.`);
  return `hw_preview_${name.replace(/-/g, '_')}`;
}

const pgliteDir = (location: StoreLocation, name: string) => path.join(location.dataDir, 'previews', name);

/** Opens (creating if need be) the store of preview `name`. Its migrations are the caller's to run. */
export async function openPreviewStore(location: StoreLocation, name: string): Promise<Db> {
  const schema = previewSchema(name);
  const what = `the store of preview ${name}`;
  if (location.databaseUrl !== undefined)
    return openPostgresDb(location.databaseUrl, { schema, poolSize: 2, what });
  const url = (location.db as Partial<EmbeddedDb>).connectionUrl;
  if (url !== undefined) return openPostgresDb(url, { schema, poolSize: 2, what });
  return openEmbeddedDb(pgliteDir(location, name), { engine: 'pglite' });
}

/** Removes the store of preview `name` (closed first) and everything in it. */
export async function dropPreviewStore(location: StoreLocation, name: string): Promise<void> {
  const schema = previewSchema(name);
  if (location.db.kind === 'postgres' || (location.db as Partial<EmbeddedDb>).connectionUrl !== undefined)
    await dropSchema(location.db, schema);
  else await rm(pgliteDir(location, name), { recursive: true, force: true });
}
