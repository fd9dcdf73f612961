import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { chooseEmbeddedEngine, openEmbeddedDb } from '../src/store/db.js';
import { cannotRunOn, findPostgresBinaries, type PostgresBinaries } from '../src/store/embedded-postgres.js';
import { migrate } from '../src/store/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    embeddedTemplateDir: string;
  }
}

/**
 * Why the embedded store's PostgreSQL cannot start from where npm installed it, or undefined when it can. Run as
 * root, PostgreSQL (which refuses root) runs as `postgres` or `nobody`, which must be able to enter every folder
 * down to its binaries in node_modules. The store checks the way to the data dir, and falls back to PGlite when it
 * is closed (as `npm start` does for ./.headwater in a root-only folder); the tests keep their data dirs in the
 * system's temporary folder, which is open, so that check passes and the binaries' own folder is what fails,
 * with a bare EACCES from spawn.
 */
export async function embeddedPostgresProblem(
  dataDir: string,
  binaries: PostgresBinaries | undefined = undefined,
): Promise<string | undefined> {
  const { engine } = await chooseEmbeddedEngine(dataDir, 'auto', {
    warn: () => undefined,
    info: () => undefined,
  });
  if (engine !== 'postgres') return undefined;
  binaries ??= await findPostgresBinaries();
  if (!binaries) return undefined;
  const binDir = path.dirname(binaries.initdb);
  // cannotRunOn checks every folder above its argument's parent: here binDir and all above it.
  const why = await cannotRunOn(path.join(binDir, 'initdb', 'postgres'));
  if (why === undefined) return undefined;
  const [, user = 'postgres', folder = binDir] =
    /the `(.+?)` user .* cannot enter (.*) on the way to/.exec(why) ?? [];
  return (
    "The tests cannot start the embedded store's PostgreSQL: they run as root, so PostgreSQL (which refuses " +
    `root) runs as the \`${user}\` user, who cannot enter ${folder} on the way to its binaries in ${binDir}. ` +
    `Do one of: let others enter that folder (\`chmod o+x ${folder}\`), clone the repository into a folder others ` +
    'may enter (such as /srv or /opt), or run `npm test` as a user other than root. (`npm start` falls back to ' +
    'PGlite in this case; the tests do not, since they test the PostgreSQL engine too.)'
  );
}

/**
 * Creates one migrated embedded store that every test copies: the first start of a store (initdb) takes seconds,
 * reopening a copy well under one.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-template-'));
  try {
    const problem = await embeddedPostgresProblem(dir);
    if (problem !== undefined) throw new Error(problem);
    const db = await openEmbeddedDb(dir);
    await migrate(db);
    await db.close();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  project.provide('embeddedTemplateDir', dir);
  return () => rm(dir, { recursive: true, force: true });
}
