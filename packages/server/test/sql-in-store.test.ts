/**
 * SQL is written in src/store/ only (mostly store/queries/): every other folder of the server calls a named
 * function there. This reads every source file outside store/ (tests aside) and fails, naming file and line, on
 * a call of `.query(...)` or `.copyRows(...)`, and on a string or template literal that starts as a statement
 * does (SELECT, INSERT INTO, UPDATE ... SET, DELETE FROM, WITH ... AS, CREATE, ALTER, DROP, LISTEN, NOTIFY, ...)
 * or names an advisory lock or a notification function anywhere. Comments and prose are not literals, and a
 * keyword must be in capitals, as every statement of the project writes it, so "select a dataset" passes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sourceDir = path.join(serverDir, 'src');

/** How a statement starts, in capitals; leading white space is skipped. */
const STATEMENT_START = new RegExp(
  '^(?:' +
    [
      String.raw`SELECT\b`,
      String.raw`INSERT\s+INTO\b`,
      String.raw`UPDATE\s+\S+\s+SET\b`,
      String.raw`DELETE\s+FROM\b`,
      String.raw`WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\b`,
      String.raw`(?:CREATE|ALTER|DROP)\s+[A-Z]+\b`,
      String.raw`TRUNCATE\b`,
      String.raw`(?:UN)?LISTEN\b`,
      String.raw`NOTIFY\b`,
      String.raw`COPY\s`,
      String.raw`(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|VACUUM|ANALYZE)\b`,
      String.raw`SET\s+(?:LOCAL|SESSION)\b`,
      String.raw`LOCK\s+TABLE\b`,
    ].join('|') +
    ')',
);

/** Functions only SQL calls, wherever in a literal they stand. */
const SQL_FUNCTION = /\bpg_(?:try_)?advisory_|\bpg_notify\b/;

/** The methods of the store that take SQL text. */
const SQL_METHODS = new Set(['query', 'copyRows']);

/** Where `text` (the source of `fileName`) writes or runs SQL: `line: what`, in order. */
function sqlIn(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push(`${line + 1}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      SQL_METHODS.has(node.expression.name.text)
    ) {
      report(node, `calls .${node.expression.name.text}()`);
    }
    // A template's head is its text up to the first ${...}: where a statement's keyword stands.
    const literal =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isTemplateExpression(node)
          ? [node.head.text, ...node.templateSpans.map((span) => span.literal.text)]
          : undefined;
    if (literal !== undefined) {
      const parts = Array.isArray(literal) ? literal : [literal];
      if (STATEMENT_START.test(parts[0]!.trimStart()) || parts.some((part) => SQL_FUNCTION.test(part)))
        report(node, `SQL in a literal: ${JSON.stringify(parts.join('${…}').trim().slice(0, 60))}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every .ts file under `dir` but store/ and tests, relative to the server package. */
function sourcesOutsideStore(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((entry) => path.join(dir, entry))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.endsWith('.d.ts'))
    .filter((file) => !file.startsWith(path.join(dir, 'store') + path.sep))
    .map((file) => path.relative(serverDir, file))
    .sort();
}

describe('SQL outside src/store', () => {
  it('finds statements and store calls, and passes prose, comments and other calls', () => {
    const found = sqlIn(
      'example.ts',
      [
        "const a = await db.query<{ id: number }>('SELECT id FROM jobs WHERE is_hidden');",
        'await this.#db.query(`',
        '  DELETE FROM commit_feed WHERE seq < ${last}`);',
        'const b = `WITH seen AS (SELECT 1) SELECT * FROM seen`;',
        "const c = 'UPDATE api_keys SET revoked_at = $2';",
        'const d = `${x} AND pg_try_advisory_lock($1)`;',
        "const e = ['x', '  INSERT INTO tags (name) VALUES ($1)'];",
        "await db.copyRows('x', take);",
        "await client.query('LISTEN commits');",
        '// SELECT id FROM jobs: a comment, not SQL that runs',
        "const f = 'select a dataset to see its lineage';",
        "const g = 'Select the run, then UPDATE its tags';",
        'const h = request.query.limit;',
        "const i = 'CREATED'; const j = 'COMPLETE'; const k = `WITH ${n} jobs`;",
        'lenientQuery(schema)?.(query);',
      ].join('\n'),
    );
    expect(found).toEqual([
      '1: calls .query()',
      '1: SQL in a literal: "SELECT id FROM jobs WHERE is_hidden"',
      '2: calls .query()',
      '2: SQL in a literal: "DELETE FROM commit_feed WHERE seq < ${…}"',
      '4: SQL in a literal: "WITH seen AS (SELECT 1) SELECT * FROM seen"',
      '5: SQL in a literal: "UPDATE api_keys SET revoked_at = $2"',
      '6: SQL in a literal: "${…} AND pg_try_advisory_lock($1)"',
      '7: SQL in a literal: "INSERT INTO tags (name) VALUES ($1)"',
      '8: calls .copyRows()',
      '9: calls .query()',
      '9: SQL in a literal: "LISTEN commits"',
    ]);
  });

  it('finds none in the server outside store/', () => {
    const files = sourcesOutsideStore(sourceDir);
    // The walk must see the tree: an empty list would pass whatever the tree held.
    expect(files).toContain(path.join('src', 'read-model', 'lineage-graph.ts'));
    const found = files.flatMap((file) =>
      sqlIn(file, readFileSync(path.join(serverDir, file), 'utf8')).map((where) => `${file}:${where}`),
    );
    expect(found, 'move these into a function of src/store/queries/ and call it').toEqual([]);
  });
});
