import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../config/server-config.js';
import { writeBackup } from '../store/backup.js';
import { openEmbeddedDb, openPostgresDb } from '../store/db.js';
import { CliError, errorMessageOf, request, resolveServerUrl } from './http.js';
import { defineHelp, formatHelp, storeFlags } from './help.js';

const options = {
  out: { type: 'string' },
  url: { type: 'string' },
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** `headwater backup --help`. */
export const backupHelp = defineHelp(options, {
  name: 'backup',
  usage: [
    'backup --out FILE --url http://127.0.0.1:5000      (a running server; HEADWATER_API_KEY)',
    'backup --out FILE [--data-dir ./.headwater | --database-url URL]   (a store no server runs on)',
  ],
  description:
    'Writes a backup of the whole store to FILE (NDJSON), taken in one snapshot: through a running server, it is\n' +
    'consistent while the server goes on ingesting (needs the admin role over every namespace when auth is on). The\n' +
    "embedded store is the server's alone while it runs, so back it up through the server. Restore with\n" +
    '`headwater restore --in FILE --data-dir NEW_DIR`. On PostgreSQL, pg_dump and pg_basebackup are the usual tools.',
  flags: {
    out: { value: 'FILE', text: 'where to write the backup (written aside, renamed once complete); needed' },
    url: {
      value: 'URL',
      text: 'back up through this running server (HEADWATER_API_KEY: an admin over every namespace)',
    },
    ...storeFlags,
  },
  examples: ['backup --out backup.ndjson --url http://127.0.0.1:5000'],
});

const usage = formatHelp(backupHelp).trimEnd();

/** `headwater backup`: a backup of the store, through a running server or straight from a store at rest. */
export async function backupCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (!values.out) throw new CliError(`--out FILE is needed.\n\n${usage}`, 2);
  // Written aside and renamed once complete, so FILE is never a backup cut short.
  const partial = `${values.out}.partial`;
  try {
    if (values.url !== undefined) {
      const base = resolveServerUrl(values.url, process.env);
      const response = await request(`${base}/api/v1/backup`);
      if (!response.ok || !response.body)
        throw new CliError(`the server refused the backup: ${await errorMessageOf(response)}`);
      await pipeline(Readable.fromWeb(response.body as never), createWriteStream(partial));
    } else {
      const config = resolveConfig({
        'data-dir': values['data-dir'],
        'database-url': values['database-url'],
      });
      const db = config.databaseUrl
        ? await openPostgresDb(config.databaseUrl)
        : await openEmbeddedDb(config.dataDir, { engine: config.embeddedEngine });
      const file = createWriteStream(partial);
      try {
        await writeBackup(db, async (text) => {
          if (!file.write(text)) await once(file, 'drain');
        });
      } finally {
        await db.close();
        file.end();
        await once(file, 'close');
      }
    }
    await rename(partial, values.out);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  process.stderr.write(`headwater: backup written to ${values.out}\n`);
  return 0;
}
