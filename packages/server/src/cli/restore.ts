import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../config/server-config.js';
import { HeadwaterError } from '../core/errors.js';
import { restoreBackup } from '../store/backup.js';
import { openEmbeddedDb, openPostgresDb, redactUrl } from '../store/db.js';
import { CliError } from './http.js';
import { defineHelp, formatHelp } from './help.js';

const options = {
  in: { type: 'string' },
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/** `headwater restore --help`. */
export const restoreHelp = defineHelp(options, {
  name: 'restore',
  usage: ['restore --in FILE (--data-dir NEW_DIR | --database-url URL) [--force]'],
  description:
    'Restores a backup made by `headwater backup` into a store no server runs on: the embedded store of a new data\n' +
    'dir (NEW_DIR), or a PostgreSQL database (URL), which is how a store moves from the embedded default to replicas\n' +
    "on one PostgreSQL, or back. The target must hold no events (--force replaces what it holds). Only the backup's\n" +
    'tables are emptied and filled; the role needs the right to load rows with foreign-key checks off (a superuser,\n' +
    'or GRANT SET ON PARAMETER session_replication_role). A backup from an older Headwater is migrated after its\n' +
    'rows are in; one from a newer Headwater is refused.',
  flags: {
    in: { value: 'FILE', text: 'the backup to restore; needed' },
    'data-dir': { value: 'DIR', text: 'restore into the embedded store of this (new) data dir' },
    'database-url': { value: 'URL', text: 'restore into this PostgreSQL database (never DATABASE_URL)' },
    force: { default: 'off', text: 'replace what the target holds' },
  },
  examples: ['restore --in backup.ndjson --data-dir ./restored'],
});

const usage = formatHelp(restoreHelp).trimEnd();

/** `headwater restore`: a backup into a store at rest, embedded or PostgreSQL. */
export async function restoreCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (!values.in || (values['data-dir'] === undefined) === (values['database-url'] === undefined))
    throw new CliError(
      `--in FILE and one of --data-dir DIR or --database-url URL are needed.\n\n${usage}`,
      2,
    );
  await access(values.in).catch(() => {
    throw new CliError(`cannot read the backup ${values.in}.`, 2);
  });
  // The target is the flag given, never a store named by the environment (DATABASE_URL).
  const config = resolveConfig({ 'data-dir': values['data-dir'], 'database-url': values['database-url'] });
  const url = values['database-url'] === undefined ? undefined : config.databaseUrl!;
  const db =
    url !== undefined
      ? await openPostgresDb(url)
      : await openEmbeddedDb(config.dataDir, { engine: config.embeddedEngine });
  const target = url !== undefined ? redactUrl(url) : config.dataDir;
  try {
    const lines = createInterface({ input: createReadStream(values.in), crlfDelay: Infinity });
    const result = await restoreBackup(db, lines, { force: values.force === true });
    process.stderr.write(
      `headwater: restored ${result.rows.toLocaleString('en-US')} rows of ${result.tables} tables into ` +
        `${target}${result.migrated.length > 0 ? `, then migrated (${result.migrated.join(', ')})` : ''}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof HeadwaterError) throw new CliError(error.message, 2, { cause: error });
    throw error;
  } finally {
    await db.close();
  }
}
