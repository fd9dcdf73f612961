import { isTrue, numberOrNull, type TextRow } from './copy-text.js';
import type { Queryable } from './db.js';

/** A whole-table read at start, in pages by a key (see {@link readPaged}). */
export interface PagedRead<Row> {
  /** The SELECT list and FROM clause, e.g. `SELECT id, name FROM datasets`. */
  readonly select: string;
  /** A condition on every page, with parameters `$1`... from {@link params}. */
  readonly where?: string;
  readonly params?: readonly unknown[];
  /** Columns that order the rows and are unique together; pages follow them ascending. */
  readonly key: readonly string[];
  /** The key of a row, in the order of {@link key}; by default the row's fields named as the key's columns. */
  readonly keyOf?: (row: Row) => readonly unknown[];
  /** The whole ORDER BY when it must say more than the key (it must start with the key). */
  readonly orderBy?: string;
  /** @default 5000 */
  readonly pageRows?: number;
}

/**
 * Reads rows in pages of a few thousand by keyset on `read.key`, asking for the next page while `take` handles
 * this one, until a page comes back short. Start-up reads tables of hundreds of thousands of rows: read whole,
 * their row objects lived long enough to be promoted to V8's old generation, which cost seconds of full
 * collections and a few hundred MB of RSS that was never given back; a page of a few thousand rows dies young,
 * where collecting it is cheap. The store works on the next page meanwhile, on its own core.
 */
export async function readPaged<Row>(
  db: Queryable,
  read: PagedRead<Row>,
  take: (rows: readonly Row[]) => void,
): Promise<void> {
  const pageRows = read.pageRows ?? 5000;
  const params = read.params ?? [];
  const key = read.key.join(', ');
  const after = read.key.map((_, i) => `$${params.length + i + 1}`).join(', ');
  const order = read.orderBy ?? key;
  const keyOf =
    read.keyOf ?? ((row: Row) => read.key.map((column) => (row as Record<string, unknown>)[column]));
  const page = (last: readonly unknown[] | undefined) => {
    const conditions = [read.where, last && `(${key}) > (${after})`].filter(Boolean);
    return db.query<Row>(
      `${read.select} ${conditions.length ? `WHERE ${conditions.map((c) => `(${c})`).join(' AND ')}` : ''}
       ORDER BY ${order} LIMIT ${pageRows}`,
      last ? [...params, ...last] : params,
    );
  };
  let next = page(undefined);
  for (;;) {
    const rows = await next;
    const last = rows.at(-1);
    const more = last !== undefined && rows.length === pageRows;
    if (more) next = page(keyOf(last));
    try {
      take(rows);
    } catch (error) {
      // The page asked for ahead must not fail unheard once its reader has gone.
      next.catch(() => undefined);
      throw error;
    }
    if (!more) return;
  }
}

/** A whole-table read at start that can also take its rows from COPY's text format (see {@link readAll}). */
export interface BulkRead<Row> extends Omit<PagedRead<Row>, 'params'> {
  /** The row from its fields as text, in the order of the SELECT list (null for NULL). */
  readonly fromText: (fields: TextRow) => Row;
}

/**
 * Reads every row of `read`, in key order: through COPY where the store has it (PostgreSQL), the fastest way
 * to read a large table, or in pages ({@link readPaged}). A COPY takes no parameters, so neither does a bulk
 * read: its conditions are written into `where`.
 */
export async function readAll<Row>(
  db: Queryable,
  read: BulkRead<Row>,
  take: (rows: readonly Row[]) => void,
): Promise<void> {
  if (db.copyRows === undefined) return readPaged(db, read, take);
  const where = read.where ? `WHERE ${read.where}` : '';
  await db.copyRows(`${read.select} ${where} ORDER BY ${read.orderBy ?? read.key.join(', ')}`, (rows) =>
    take(rows.map(read.fromText)),
  );
}

/** A column of a bulk read: its name in the row, its kind, and the SQL that computes it (default: the name). */
export type BulkColumn = readonly [name: string, kind: 'number' | 'text' | 'boolean', sql?: string];

/**
 * The SELECT list of `columns` from `from` and the `fromText` that reads them back, made together so that the
 * two never disagree. Numbers and text may be NULL; a NULL boolean reads as false.
 */
export function selectColumns<Row>(
  columns: readonly BulkColumn[],
  from: string,
): Pick<BulkRead<Row>, 'select' | 'fromText'> {
  const list = columns.map(([name, , sql]) => (sql === undefined ? name : `${sql} AS ${name}`)).join(', ');
  return {
    select: `SELECT ${list} FROM ${from}`,
    fromText: (fields) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) {
        const [name, kind] = columns[i]!;
        const field = fields[i] ?? null;
        row[name] = kind === 'text' ? field : kind === 'number' ? numberOrNull(field) : isTrue(field);
      }
      return row as Row;
    },
  };
}
