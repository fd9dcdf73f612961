import type { ReactNode } from 'react';

const keywords = new Set(
  `select from where group by order having limit offset join left right inner outer full cross on as and or not
  in is null case when then else end with union all distinct insert into values update set delete create table
  view replace merge using matched over partition window between like ilike exists cast interval true false
  asc desc coalesce count sum avg min max nullif date timestamp`.split(/\s+/),
);

// Comments, strings, quoted identifiers, numbers, words, and anything else one character at a time.
const token =
  /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:[^']|'')*')|("(?:[^"]|"")*"|`[^`]*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][\w$]*)|([\s\S])/g;

/**
 * SQL with keywords, strings, numbers and comments coloured. A tokenizer of a few lines instead of a
 * highlighting library: SQL facets are all it shows, and it renders spans, never HTML strings.
 */
export function SqlCode({ sql }: { sql: string }) {
  const parts: ReactNode[] = [];
  let plain = '';
  const flush = () => {
    if (plain) parts.push(plain);
    plain = '';
  };
  for (const match of sql.matchAll(token)) {
    const [text, comment, string, quoted, number, word] = match;
    const className = comment
      ? 'sql-comment'
      : string
        ? 'sql-string'
        : number
          ? 'sql-number'
          : word && keywords.has(word.toLowerCase())
            ? 'sql-keyword'
            : quoted
              ? 'sql-ident'
              : undefined;
    if (!className) {
      plain += text;
      continue;
    }
    flush();
    parts.push(
      <span key={match.index} className={className}>
        {text}
      </span>,
    );
  }
  flush();
  return (
    <pre className="code code--sql" aria-label="SQL">
      <code>{parts}</code>
    </pre>
  );
}
