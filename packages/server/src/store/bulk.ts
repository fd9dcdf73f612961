import type { Queryable } from './db.js';

/** A column of a bulk statement: its name and the PostgreSQL type of its parameter array. */
export interface BulkColumn {
  readonly name: string;
  readonly type: 'int' | 'bigint' | 'smallint' | 'text' | 'uuid' | 'timestamptz' | 'boolean' | 'jsonb';
}

/**
 * Writes many rows with ONE statement: the rows travel as one JSON document that `json_to_recordset` turns back
 * into typed rows. A batch of events thus costs a fixed number of statements, whatever its size. JSON beats
 * array parameters by 3-4x here: both drivers build array literals by escaping every character in JavaScript,
 * while PostgreSQL's JSON parser is native code. `conflict` is the ON CONFLICT clause (e.g. `(id) DO UPDATE
 * SET ...`), or undefined for a plain insert. jsonb values are given as objects.
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
  const names = columns.map((column) => column.name);
  const objects = rows.map((row) => {
    const object: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) object[names[i]!] = row[i] ?? null;
    return object;
  });
  const definitions = columns.map((column) => `${column.name} ${column.type}`).join(', ');
  const sql =
    `INSERT INTO ${table} AS t (${names.join(', ')}) SELECT ${names.join(', ')} ` +
    `FROM json_to_recordset($1::json) AS u(${definitions})` +
    (conflict ? ` ON CONFLICT ${conflict}` : '') +
    (returning ? ` RETURNING ${returning}` : '');
  return tx.query(sql, [withoutNul(JSON.stringify(objects))]);
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000, which producers occasionally send inside strings; it becomes
 * U+FFFD. Only real escapes count: `\\u0000` (an escaped backslash, then text) is left alone.
 */
function withoutNul(json: string): string {
  return json.includes('\\u0000') ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : json;
}

/** An ON CONFLICT ... DO UPDATE that takes the new value of every listed column. */
export function updateAll(key: string, columns: readonly string[]): string {
  return `(${key}) DO UPDATE SET ${columns.map((column) => `${column} = EXCLUDED.${column}`).join(', ')}`;
}

/** A timestamptz parameter from ms since the epoch. */
export function ts(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
