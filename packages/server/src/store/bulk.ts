import type { Queryable } from './db.js';

/** A column of a bulk statement: its name and the PostgreSQL type of its parameter array. */
export interface BulkColumn {
  readonly name: string;
  readonly type: 'int' | 'bigint' | 'smallint' | 'text' | 'uuid' | 'timestamptz' | 'boolean' | 'jsonb';
}

/**
 * Writes many rows with ONE statement: every column travels as one array parameter and `unnest` turns them
 * back into rows. A batch of events thus costs a fixed number of statements, whatever its size.
 * `conflict` is the ON CONFLICT clause (e.g. `(id) DO UPDATE SET ...`), or undefined for a plain insert.
 * jsonb values are passed as JSON text.
 */
export async function bulkInsert(
  tx: Queryable,
  table: string,
  columns: readonly BulkColumn[],
  rows: readonly (readonly unknown[])[],
  conflict?: string,
  returning?: string,
): Promise<Record<string, unknown>[]> {
  if (rows.length === 0) return [];
  const arrays = columns.map((_, index) => rows.map((row) => row[index] ?? null));
  const params = columns.map((column, index) =>
    column.type === 'jsonb' ? arrays[index]!.map(toJsonText) : arrays[index]!,
  );
  const unnestArgs = columns
    .map((column, index) => `$${index + 1}::${column.type === 'jsonb' ? 'text' : column.type}[]`)
    .join(', ');
  const names = columns.map((column) => column.name).join(', ');
  const select = columns
    .map((column) => (column.type === 'jsonb' ? `${column.name}::jsonb` : column.name))
    .join(', ');
  const sql =
    `INSERT INTO ${table} AS t (${names}) SELECT ${select} FROM unnest(${unnestArgs}) AS u(${names})` +
    (conflict ? ` ON CONFLICT ${conflict}` : '') +
    (returning ? ` RETURNING ${returning}` : '');
  return tx.query(sql, params);
}

/** An ON CONFLICT ... DO UPDATE that takes the new value of every listed column. */
export function updateAll(key: string, columns: readonly string[]): string {
  return `(${key}) DO UPDATE SET ${columns.map((column) => `${column} = EXCLUDED.${column}`).join(', ')}`;
}

function toJsonText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // jsonb cannot hold U+0000; producers occasionally send it inside strings. Keep the rest of the facet.
  return text.includes('\\u0000') ? text.replaceAll('\\u0000', '\\ufffd') : text;
}

/** A timestamptz parameter from ms since the epoch. */
export function ts(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
