import { HeadwaterError } from '../core/errors.js';
import { WRITER_LOCK_KEY, type Db, type Queryable } from './db.js';
import { migrate, migrationFiles, migrationTables } from './migrate.js';

/**
 * A backup of a store: every table's rows as they stood in one snapshot, as NDJSON, so it is taken while the
 * server goes on ingesting and restored by {@link restoreBackup}. Written here rather than with pg_dump: the
 * embedded engine ships without it (the npm package has the server alone), PGlite has none, and the same text
 * then serves both engines.
 *
 * Lines, in order:
 * - a header object: `format`, `version`, `createdAt`, the `migrations` the store has applied (its schema),
 *   each sequence's value, and the `tables` that follow;
 * - per table, `["table", name]`, then one JSON object per row (`row_to_json`: every PostgreSQL type has a JSON
 *   text that `json_populate_recordset` reads back), then `["end", name, rows]`;
 * - `["done", rows]`, so that a cut-off file is refused rather than restored in part.
 */
export const BACKUP_FORMAT = 'headwater-backup';
const BACKUP_VERSION = 1;

/** Rows read per query while writing a backup (keyset pages by ctid, inside the snapshot). */
const PAGE_ROWS = 2_000;

/** Rows inserted per statement while restoring. */
const INSERT_ROWS = 1_000;

export interface BackupHeader {
  readonly format: typeof BACKUP_FORMAT;
  readonly version: number;
  readonly createdAt: string;
  readonly migrations: readonly string[];
  readonly sequences: readonly { readonly name: string; readonly value: number | null }[];
  /** The tables the backup holds (absent from the backups of the first version that had backups). */
  readonly tables?: readonly string[];
}

/** What a restore did. */
export interface RestoreResult {
  readonly tables: number;
  readonly rows: number;
  /** Migrations this code has that the backup lacked, applied after its rows were in. */
  readonly migrated: readonly string[];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Writes a backup of `db` through `write` (which may wait, for back-pressure): every table of the public schema
 * in one REPEATABLE READ, READ ONLY transaction, so the backup is the store at one instant whatever commits
 * meanwhile. On PostgreSQL the writer goes on beside it; PGlite runs one transaction at a time, so there ingest
 * waits until the backup is written. Returns the number of rows written.
 */
export async function writeBackup(db: Db, write: (text: string) => Promise<void> | void): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const migrations = (
      await tx.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')
    ).map((row) => row.name);
    const tables = await tablesOf(tx, migrations);
    // The sequences of Headwater's tables only (a serial column's): another table's is not ours to set.
    const sequences = (
      await tx.query<{ name: string; value: string | number | null; owner: string | null }>(
        `SELECT ps.sequencename AS name, ps.last_value AS value, t.relname AS owner
         FROM pg_sequences ps
         JOIN pg_class s ON s.relname = ps.sequencename AND s.relkind = 'S'
         JOIN pg_namespace n ON n.oid = s.relnamespace AND n.nspname = ps.schemaname
         LEFT JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass
           AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
         LEFT JOIN pg_class t ON t.oid = d.refobjid
         WHERE ps.schemaname = 'public'
         ORDER BY ps.sequencename`,
      )
    ).filter((row) => row.owner !== null && tables.includes(row.owner));
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      createdAt: new Date().toISOString(),
      migrations,
      sequences: sequences.map((row) => ({
        name: row.name,
        value: row.value === null ? null : Number(row.value),
      })),
      tables,
    };
    await write(`${JSON.stringify(header)}\n`);
    let total = 0;
    for (const table of tables) {
      await write(`${JSON.stringify(['table', table])}\n`);
      let rows = 0;
      let after = '(0,0)';
      for (;;) {
        const page = await tx.query<{ row: string; at: string }>(
          `SELECT row_to_json(t)::text AS row, t.ctid::text AS at FROM ${quote(table)} t
           WHERE t.ctid > $1::tid ORDER BY t.ctid LIMIT ${PAGE_ROWS}`,
          [after],
        );
        if (page.length === 0) break;
        await write(`${page.map((row) => row.row).join('\n')}\n`);
        rows += page.length;
        after = page.at(-1)!.at;
      }
      await write(`${JSON.stringify(['end', table, rows])}\n`);
      total += rows;
    }
    await write(`${JSON.stringify(['done', total])}\n`);
    return total;
  });
}

/**
 * The tables a backup of a store with `migrations` holds: Headwater's own that the store has, not the migrations'
 * record, and not any other table of the database.
 */
async function tablesOf(db: Queryable, migrations: readonly string[]): Promise<string[]> {
  const ours = new Set(await migrationTables(migrations));
  return (
    await db.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    )
  )
    .map((row) => row.name)
    .filter((name) => ours.has(name));
}

const invalid = (message: string) => new HeadwaterError('BAD_REQUEST', message);

/**
 * Restores a backup (its lines, in order) into `db`, a store that is new or whose schema is not newer than the
 * backup's, and that holds no events unless `force`: the embedded store of a new data dir, or a PostgreSQL
 * database (the way from the embedded store to replicas on one PostgreSQL). The store is first brought to the
 * backup's schema (exactly the backup's migrations), the rows go in, and then the migrations this code has beyond
 * them run on them, as on any upgrade. A backup that names a migration this code does not have comes from a newer
 * Headwater and is refused. The rows go in in one transaction with foreign-key triggers off (tables are loaded in
 * name order, not in dependency order), so a failed restore leaves no rows behind; sequences get their backed-up
 * values, so ids are never issued twice. Only the backup's tables are emptied and filled: other tables of the
 * database are left alone. A store a server writes to (it holds the writer lock) is refused.
 */
export async function restoreBackup(
  db: Db,
  lines: AsyncIterable<string>,
  options: { readonly force?: boolean } = {},
): Promise<RestoreResult> {
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  const header = (first.done ? undefined : parseLine(first.value)) as Partial<BackupHeader> | undefined;
  if (
    header?.format !== BACKUP_FORMAT ||
    header.version !== BACKUP_VERSION ||
    !Array.isArray(header.migrations) ||
    (header.tables !== undefined &&
      !(Array.isArray(header.tables) && header.tables.every((name) => typeof name === 'string')))
  )
    throw invalid(`This is not a Headwater backup (format ${BACKUP_FORMAT}, version ${BACKUP_VERSION}).`);
  const migrations: readonly string[] = header.migrations;
  const backedUp = new Set(migrations);
  const known = new Set(await migrationFiles());
  const unknown = migrations.filter((name) => !known.has(name));
  if (unknown.length > 0)
    throw invalid(
      `The backup comes from a newer Headwater: it has migrations this one lacks (${unknown.join(', ')}). ` +
        'Restore it with that version or a later one.',
    );
  const [{ present } = { present: false }] = await db.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  const applied = present
    ? (await db.query<{ name: string }>('SELECT name FROM schema_migrations')).map((row) => row.name)
    : [];
  const newer = applied.filter((name) => !backedUp.has(name));
  if (newer.length > 0)
    throw invalid(
      `The target store's schema is newer than the backup's (it has ${newer.join(', ')}): the backup's rows ` +
        'would miss what those migrations did. Restore into a new --data-dir.',
    );
  // Refused before anything is written: migrating a store that a server runs on would change it under that server.
  await refuseWhileWritten(db);
  await migrate(db, backedUp);
  const [{ events } = { events: 0 }] = await db.query<{ events: number }>(
    'SELECT count(*)::int AS events FROM (SELECT 1 FROM events LIMIT 1) e',
  );
  if (events > 0 && !options.force)
    throw invalid(
      'The target store already holds events; restore into an empty one, or pass --force to replace it.',
    );
  const existing = new Set(await tablesOf(db, migrations));
  const tables = new Set(header.tables ?? existing);
  const missing = [...tables].filter((name) => !existing.has(name));
  if (missing.length > 0) throw invalid(`The backup has tables this store lacks: ${missing.join(', ')}.`);
  const result = await db.transaction(async (tx) => {
    // Held until the rows are in: a server that starts meanwhile waits to write.
    await refuseWhileWritten(tx);
    // Rows go in table by table in name order; the foreign keys hold again once every table is in.
    await tx.query("SET LOCAL session_replication_role = 'replica'").catch((error: unknown) => {
      throw invalid(
        `The target store refused to load rows with foreign-key checks off (${(error as Error).message}): ` +
          'restore as a superuser, or grant the role that right (PostgreSQL 15 or later: ' +
          'GRANT SET ON PARAMETER session_replication_role TO <role>).',
      );
    });
    await tx.query(`TRUNCATE ${[...tables].map(quote).join(', ')}`);
    let table: string | undefined;
    let batch: string[] = [];
    let tablesDone = 0;
    let rows = 0;
    let done = false;
    const flush = async () => {
      if (batch.length === 0) return;
      await tx.query(
        `INSERT INTO ${quote(table!)} SELECT * FROM json_populate_recordset(NULL::${quote(table!)}, $1::json)`,
        [`[${batch.join(',')}]`],
      );
      rows += batch.length;
      batch = [];
    };
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const line = next.value;
      if (line.length === 0) continue;
      if (line.startsWith('{')) {
        if (table === undefined) throw invalid('The backup has a row outside any table.');
        batch.push(line);
        if (batch.length >= INSERT_ROWS) await flush();
        continue;
      }
      const marker = parseLine(line) as unknown[];
      if (marker[0] === 'table' && typeof marker[1] === 'string') {
        if (!tables.has(marker[1]))
          throw invalid(
            existing.has(marker[1])
              ? `The backup holds a table its header does not name: ${marker[1]}.`
              : `The backup has a table this store lacks: ${marker[1]}.`,
          );
        table = marker[1];
      } else if (marker[0] === 'end' && marker[1] === table) {
        await flush();
        tablesDone++;
        table = undefined;
      } else if (marker[0] === 'done') {
        if (marker[1] !== rows) throw invalid(`The backup says ${String(marker[1])} rows but holds ${rows}.`);
        done = true;
        break;
      } else throw invalid(`The backup has a line that is neither a row nor a marker: ${line.slice(0, 100)}`);
    }
    if (!done) throw invalid('The backup ends before its last line: it was cut off; nothing was restored.');
    // Only the store's own (a backup of an older version could name another table's sequence).
    const ownSequences = new Set(
      (
        await tx.query<{ name: string }>(
          "SELECT sequencename AS name FROM pg_sequences WHERE schemaname = 'public'",
        )
      ).map((row) => row.name),
    );
    for (const { name, value } of header.sequences ?? [])
      if (value !== null && ownSequences.has(name))
        await tx.query('SELECT setval($1::regclass, $2, true)', [quote(name), value]);
    return { tables: tablesDone, rows };
  });
  const migrated = await migrate(db);
  return { ...result, migrated };
}

/**
 * Refuses a store a server writes to: that server holds the writer lock for as long as it runs, and this
 * transaction-level try conflicts with it (inside a transaction it is then held until the transaction ends).
 */
async function refuseWhileWritten(q: Queryable): Promise<void> {
  const [lock] = await q.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS free', [
    WRITER_LOCK_KEY,
  ]);
  if (lock?.free !== true)
    throw invalid(
      'A Headwater server is writing to the target store: stop every server on it, then restore.',
    );
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw invalid(`The backup has a line that is not JSON: ${line.slice(0, 100)}`);
  }
}
