import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './db.js';

const migrationsDir = new URL('../../migrations/', import.meta.url);

/**
 * Applies the SQL files of packages/server/migrations (NNN_name.sql, in order) that the database has not seen,
 * each in its own transaction, and records them in schema_migrations. Returns the names applied. `only` limits
 * them to those named (a restore first builds the schema its backup was taken with).
 *
 * Replicas starting together migrate one at a time: each transaction first takes a transaction-level advisory
 * lock, then looks again at what is applied, so a migration runs once whoever gets there first.
 */
export async function migrate(db: Db, only?: ReadonlySet<string>): Promise<string[]> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
  });
  const done = new Set(
    (await db.query<{ name: string }>('SELECT name FROM schema_migrations')).map((row) => row.name),
  );
  const applied: string[] = [];
  for (const file of await migrationFiles()) {
    if (done.has(file) || (only !== undefined && !only.has(file))) continue;
    const sql = await readFile(new URL(file, migrationsDir), 'utf8');
    const ran = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE name = $1', [file]);
      if (seen.length > 0) return false;
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      return true;
    });
    if (ran) applied.push(file);
  }
  return applied;
}

/** The migrations this code has, by file name, in the order they are applied. */
export async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((file) => /^\d{3}_.+\.sql$/.test(file)).sort();
}

/**
 * The tables the migrations `applied` create and leave, in name order: Headwater's own tables, told apart from
 * any other table a shared database holds (a backup takes only these). Read from the migrations' own statements
 * (`CREATE TABLE name`, `DROP TABLE name`), the one place that knows; a migration that renames a table
 * (`ALTER TABLE ... RENAME TO`) must be taught here first.
 */
export async function migrationTables(applied: Iterable<string>): Promise<string[]> {
  const tables = new Set<string>();
  for (const file of [...applied].sort()) {
    const sql = await readFile(new URL(file, migrationsDir), 'utf8');
    for (const statement of splitStatements(sql)) {
      const match = /^(CREATE|DROP)\s+TABLE\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?([a-z_][a-z0-9_]*)\b/i.exec(
        statement,
      );
      if (!match) continue;
      const name = match[2]!.toLowerCase();
      if (match[1]!.toUpperCase() === 'CREATE') tables.add(name);
      else tables.delete(name);
    }
  }
  return [...tables].sort();
}

/** Key of the advisory lock migrations run under ('HWMG'). */
const MIGRATION_LOCK_KEY = 0x4857_4d47;

/** Splits a migration into statements on `;` at line ends (migrations contain no function bodies). */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((part) =>
      part
        .split('\n')
        .filter((line) => !line.trim().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter((part) => part.length > 0);
}
