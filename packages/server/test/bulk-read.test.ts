import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyTextParser } from '../src/store/copy-text.js';
import type { Db, Queryable } from '../src/store/db.js';
import { readAll, readPaged, selectColumns, type BulkColumn } from '../src/store/paged-read.js';
import { backends, freshDb } from './helpers/backends.js';

/** Text that COPY must escape, and text that only looks escaped. */
const AWKWARD = ['tab\there', 'line\nbreak', 'back\\slash', '\\N', 'cr\rlf', 'é € 𝄞 mixed', '', ' '];

interface Row {
  a: number;
  b: string;
  label: string | null;
  flag: boolean;
  at: number | null;
}

const COLUMNS: readonly BulkColumn[] = [
  ['a', 'number'],
  ['b', 'text'],
  ['label', 'text'],
  ['flag', 'boolean'],
  ['at', 'number', 'trunc(extract(epoch FROM at) * 1000)::float8'],
];

describe('CopyTextParser', () => {
  it('reads rows split anywhere across chunks, with escapes, NULLs and multi-byte characters', () => {
    const text = 'a\\tb\t\\N\tx\\\\y\n€𝄞\t\\n\t\\\\N\n';
    const bytes = new TextEncoder().encode(text);
    const parser = new CopyTextParser();
    const rows = [];
    // One byte at a time: every boundary, inside escapes and inside UTF-8 sequences, is met.
    for (const byte of bytes) rows.push(...parser.push(Uint8Array.of(byte)));
    parser.end();
    expect(rows).toEqual([
      ['a\tb', null, 'x\\y'],
      ['€𝄞', '\n', '\\N'],
    ]);
  });

  it('refuses output that ends inside a row', () => {
    const parser = new CopyTextParser();
    parser.push(new TextEncoder().encode('1\t2\n3\t'));
    expect(() => parser.end()).toThrow(/inside a row/);
  });
});

describe.each(backends())('bulk reads at start ($name)', (backend) => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let expected: Row[];
  const read = {
    ...selectColumns<Row>(COLUMNS, 'bulk_read_probe'),
    key: ['a', 'b'],
    keyOf: (row: Row) => [row.a, row.b],
  };

  beforeAll(async () => {
    ({ db, cleanup } = await freshDb(backend));
    await db.query(
      'CREATE TABLE bulk_read_probe (a int, b text, label text, flag boolean, at timestamptz, PRIMARY KEY (a, b))',
    );
    // 12,345 rows: pages of 1,000 end inside a run of equal `a`, so the keyset must follow both key columns.
    await db.query(
      `INSERT INTO bulk_read_probe
       SELECT i / 7, 'k' || (i % 7) || ($1::text[])[1 + i % 8], CASE WHEN i % 5 = 0 THEN NULL ELSE ($1::text[])[1 + i % 8] END,
              i % 3 = 0, CASE WHEN i % 11 = 0 THEN NULL ELSE timestamptz '2025-01-01' + i * interval '1.5 ms' END
       FROM generate_series(0, 12344) AS i`,
      [AWKWARD],
    );
    expected = await db.query<Row>(`${read.select} ORDER BY a, b`);
  });
  afterAll(() => cleanup());

  it('the probe holds what the test means', () => {
    expect(expected).toHaveLength(12_345);
    expect(new Set(expected.map((row) => row.label))).toEqual(new Set([...AWKWARD, null]));
    expect(expected.some((row) => row.at === null) && expected.some((row) => row.flag)).toBe(true);
  });

  it('reads in pages by keyset what one query reads', async () => {
    const rows: Row[] = [];
    let pages = 0;
    await readPaged(db, { ...read, pageRows: 1000 }, (page) => {
      pages++;
      rows.push(...page);
    });
    expect(pages).toBe(13);
    expect(rows).toEqual(expected);
  });

  it('reads through COPY what one query reads', async () => {
    expect(typeof db.copyRows).toBe('function');
    const rows: Row[] = [];
    await readAll(db, read, (batch) => rows.push(...batch));
    expect(rows).toEqual(expected);
  });

  it('reads in pages where the store has no COPY (PGlite), with conditions written in', async () => {
    const noCopy: Queryable = { query: (sql, params) => db.query(sql, params) };
    const rows: Row[] = [];
    await readAll(noCopy, { ...read, where: 'flag', pageRows: 700 }, (batch) => rows.push(...batch));
    expect(rows).toEqual(expected.filter((row) => row.flag));
  });

  it('gives the connection back after a COPY that fails', async () => {
    await expect(db.copyRows!('SELECT 1 / 0', () => undefined)).rejects.toThrow(/division by zero/);
    const rows: Row[] = [];
    await readAll(db, { ...read, where: 'a < 3' }, (batch) => rows.push(...batch));
    expect(rows).toEqual(expected.filter((row) => row.a < 3));
  });
});
