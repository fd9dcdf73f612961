import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../config.js';
import { HeadwaterError } from '../errors.js';
import { restoreBackup } from '../store/backup.js';
import { openEmbeddedDb } from '../store/db.js';
import { CliError } from './http.js';

const usage = `Usage: headwater restore --in FILE --data-dir NEW_DIR [--force]

Restores a backup made by \`headwater backup\` into the embedded store at NEW_DIR, with no server running on it:
a new data dir, or one whose store holds no events (--force replaces what it holds). A backup from an older
Headwater is migrated after its rows are in; one from a newer Headwater is refused. PostgreSQL users restore
with their own tools (pg_restore).`;

/** `headwater restore`: a backup into an embedded store at rest. */
export async function restoreCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      in: { type: 'string' },
      'data-dir': { type: 'string' },
      force: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (!values.in || !values['data-dir'])
    throw new CliError(`--in FILE and --data-dir DIR are needed.\n\n${usage}`, 2);
  await access(values.in).catch(() => {
    throw new CliError(`cannot read the backup ${values.in}.`, 2);
  });
  const config = resolveConfig({ 'data-dir': values['data-dir'] });
  const db = await openEmbeddedDb(config.dataDir, { engine: config.embeddedEngine });
  try {
    const lines = createInterface({ input: createReadStream(values.in), crlfDelay: Infinity });
    const result = await restoreBackup(db, lines, { force: values.force === true });
    process.stderr.write(
      `headwater: restored ${result.rows.toLocaleString('en-US')} rows of ${result.tables} tables into ` +
        `${config.dataDir}${result.migrated.length > 0 ? `, then migrated (${result.migrated.join(', ')})` : ''}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof HeadwaterError) throw new CliError(error.message, 2, { cause: error });
    throw error;
  } finally {
    await db.close();
  }
}
