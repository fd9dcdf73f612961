/**
 * SQL read closely enough to tell two versions of a query apart the way a reviewer does: is it the same query
 * once layout, comments, case and the preview's table names are set aside, and if not, did a clause that
 * decides which rows come out (WHERE, JOIN ... ON, GROUP BY, HAVING, QUALIFY, LIMIT, DISTINCT, UNION) change?
 *
 * Written here rather than with a SQL parser: a job's SQL comes in every warehouse's dialect (and after Jinja),
 * which the parsers for JavaScript each cover in part and refuse the rest of; this needs only tokens and the
 * clause keywords common to all of them, and never refuses a query.
 */

/** One token: a word (keywords lower-cased), a dotted name (unquoted), a literal, or punctuation. */
type Token = string;

const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;
const NUMBER = /[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?/y;

/** Splits SQL into tokens: comments and layout dropped, keywords and unquoted names lower-cased. */
export function sqlTokens(sql: string, rename: (name: string) => string = (name) => name): Token[] {
  const tokens: Token[] = [];
  // The parts of the dotted name being read, and whether a dot joined the last part to the next.
  let name: string[] | undefined;
  let joined = false;
  const endName = () => {
    if (name) tokens.push(rename(name.join('.')));
    name = undefined;
    joined = false;
  };
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      if (!joined) endName();
      i++;
      continue;
    }
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      continue;
    }
    if (c === "'") {
      endName();
      let j = i + 1;
      while (j < sql.length && !(sql[j] === "'" && sql[j + 1] !== "'")) j += sql[j] === "'" ? 2 : 1;
      tokens.push(sql.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    // A name part: quoted ("x", `x`, [x]) or a word; parts joined by dots make one dotted name.
    let part: string | undefined;
    if (c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      const end = sql.indexOf(close, i + 1);
      part = sql.slice(i + 1, end < 0 ? sql.length : end);
      i = end < 0 ? sql.length : end + 1;
    } else {
      WORD.lastIndex = i;
      const word = WORD.exec(sql);
      if (word) {
        part = word[0].toLowerCase();
        i += word[0].length;
      }
    }
    if (part !== undefined) {
      if (name && joined) name.push(part);
      else {
        endName();
        name = [part];
      }
      joined = sql[i] === '.' && /["`[A-Za-z_]/.test(sql[i + 1] ?? '');
      if (joined) i++;
      continue;
    }
    endName();
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(sql);
    if (number) {
      tokens.push(number[0]);
      i += number[0].length;
      continue;
    }
    const two = sql.slice(i, i + 2);
    if (['<=', '>=', '<>', '!=', '||', '::'].includes(two)) {
      tokens.push(two);
      i += 2;
      continue;
    }
    tokens.push(c);
    i++;
  }
  endName();
  return tokens;
}

/** Words that open a clause: where one ends and the next begins, at the same depth of parentheses. */
const CLAUSE_WORDS = new Set([
  'select',
  'from',
  'where',
  'join',
  'on',
  'using',
  'group',
  'having',
  'qualify',
  'window',
  'order',
  'limit',
  'offset',
  'fetch',
  'union',
  'intersect',
  'except',
  'with',
  'distinct',
]);

/** The clauses that decide which rows a query gives (not how its columns are computed). */
const ROW_CLAUSES = new Set([
  'where',
  'on',
  'using',
  'group',
  'having',
  'qualify',
  'limit',
  'offset',
  'fetch',
  'distinct',
  'union',
  'intersect',
  'except',
  'join',
]);

/**
 * The row-deciding clauses of a query, each as its text of tokens, sorted: equal for two queries that keep the
 * same rows (as far as their text tells), whatever else changed.
 */
export function rowClauses(tokens: readonly Token[]): string[] {
  const clauses: string[] = [];
  // One open clause per depth of parentheses.
  const open: { word: string; tokens: Token[] }[] = [{ word: '', tokens: [] }];
  const close = (depth: number) => {
    const clause = open[depth];
    if (clause && ROW_CLAUSES.has(clause.word)) clauses.push(`${clause.word} ${clause.tokens.join(' ')}`);
  };
  for (const token of tokens) {
    const depth = open.length - 1;
    if (token === '(') {
      open[depth]!.tokens.push(token);
      open.push({ word: '', tokens: [] });
      continue;
    }
    if (token === ')' && depth > 0) {
      close(depth);
      open.pop();
      open[depth - 1]!.tokens.push(token);
      continue;
    }
    if (CLAUSE_WORDS.has(token)) {
      close(depth);
      open[depth] = { word: token, tokens: [] };
      continue;
    }
    open[depth]!.tokens.push(token);
  }
  for (let depth = open.length - 1; depth >= 0; depth--) close(depth);
  return clauses.sort();
}

/** How two versions of a query differ: not at all, in the rows they give, or only in how columns are computed. */
export function compareSql(
  before: string,
  after: string,
  rename: (name: string) => string,
): 'same' | 'rows' | 'expressions' {
  const from = sqlTokens(before);
  const to = sqlTokens(after, rename);
  if (from.join(' ') === to.join(' ')) return 'same';
  const rowsFrom = rowClauses(from).join('\n');
  const rowsTo = rowClauses(to).join('\n');
  return rowsFrom === rowsTo ? 'expressions' : 'rows';
}
