import type { Queryable } from './db.js';

/** A column of a bulk statement: its name and the PostgreSQL type of its parameter array. */
export interface BulkColumn {
  readonly name: string;
  readonly type: 'int' | 'bigint' | 'smallint' | 'text' | 'uuid' | 'timestamptz' | 'boolean' | 'jsonb';
}

/** Rows to insert (or upsert) into one table. */
export interface BulkWrite {
  readonly table: string;
  readonly columns: readonly BulkColumn[];
  readonly rows: readonly (readonly unknown[])[];
  /** The ON CONFLICT clause without the keywords, e.g. `(id) DO UPDATE SET ...`. */
  readonly conflict?: string;
  /** A RETURNING list, e.g. `hash::text AS hash`. */
  readonly returning?: string;
  /** Columns computed in SQL from the row's parameters (`u.<column>`), e.g. `{ seq: 'next_seq(u.epoch)' }`. */
  readonly computed?: Readonly<Record<string, string>>;
  /**
   * Parameters of each row that are not columns of the table, for `computed` to read (`u.<name>`); a row holds
   * their values after those of `columns`.
   */
  readonly inputs?: readonly BulkColumn[];
}

/**
 * A write computed from what the first write returned (its CTE is `w0`), e.g. counters of the rows it
 * inserted. It takes no parameter.
 */
export interface DerivedWrite {
  readonly derived: string;
}

/**
 * The INSERT statement of a {@link BulkWrite} whose rows are parameter `$param`. Rows travel as one JSON
 * document that `json_to_recordset` turns back into typed rows. JSON beats array parameters by 3-4x: both
 * drivers build array literals by escaping every character in JavaScript, while PostgreSQL's JSON parser is
 * native code.
 */
function insertSql(write: BulkWrite, param: number): string {
  const computed = Object.entries(write.computed ?? {});
  const names = [...write.columns.map((column) => column.name), ...computed.map(([name]) => name)].join(', ');
  const values = [
    ...write.columns.map((column) => `u.${column.name}`),
    ...computed.map(([, expression]) => expression),
  ].join(', ');
  const definitions = [...write.columns, ...(write.inputs ?? [])]
    .map((column) => `${column.name} ${column.type}`)
    .join(', ');
  return (
    `INSERT INTO ${write.table} AS t (${names}) SELECT ${values} ` +
    `FROM json_to_recordset($${param}::json) AS u(${definitions})` +
    (write.conflict ? ` ON CONFLICT ${write.conflict}` : '') +
    (write.returning ? ` RETURNING ${write.returning}` : '')
  );
}

/** The JSON parameter holding a write's rows. */
function rowsParam(write: BulkWrite): string {
  const names = [...write.columns, ...(write.inputs ?? [])].map((column) => column.name);
  const objects = write.rows.map((row) => {
    const object: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) object[names[i]!] = row[i] ?? null;
    return object;
  });
  return withoutNul(JSON.stringify(objects));
}

/**
 * Performs many writes with ONE statement, each a data-modifying CTE: a batch of events costs one round trip
 * and one parse whatever its size and the number of tables it touches. Foreign keys between the tables hold:
 * PostgreSQL checks them at the end of the statement, when every CTE has run. Returns, for each write in the
 * order given, the rows its RETURNING clause gives (an empty list for a write without one or without rows).
 */
export async function bulkWrite(
  tx: Queryable,
  writes: readonly (BulkWrite | DerivedWrite)[],
  name?: string,
): Promise<Record<string, unknown>[][]> {
  // A named statement keeps every write, empty ones too, so that its text never changes and PostgreSQL plans
  // it once per connection instead of once per batch (planning a dozen CTEs costs about as much as a small
  // batch's writes).
  const [first, ...rest] = writes;
  if (first === undefined || 'derived' in first)
    throw new Error('bulkWrite: the first write must insert rows');
  const present =
    name === undefined
      ? [first, ...rest].filter((write) => 'derived' in write || write.rows.length > 0)
      : writes;
  const returned = writes.map((): Record<string, unknown>[] => []);
  if (present.length === 0 || present[0] !== first) return returned;
  const params: string[] = [];
  const ctes = present.map((write, index) => {
    if ('derived' in write) return `w${index} AS (${write.derived})`;
    params.push(rowsParam(write));
    return `w${index} AS (${insertSql(write, params.length)})`;
  });
  // The rows RETURNING gives for each write that has the clause, as one JSON array each.
  const returning = present.flatMap((write, index) =>
    'returning' in write && write.returning
      ? [`coalesce((SELECT json_agg(w${index}) FROM w${index}), '[]') AS r${index}`]
      : [],
  );
  const [row] = await tx.query<Record<string, Record<string, unknown>[]>>(
    `WITH ${ctes.join(',\n')} SELECT ${returning.length > 0 ? returning.join(', ') : '1'}`,
    params,
    name,
  );
  present.forEach((write, index) => {
    const rows = row?.[`r${index}`];
    if (rows) returned[writes.indexOf(write)] = rows;
  });
  return returned;
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
