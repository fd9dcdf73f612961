import type { ImpactChange, ImpactResult } from './analysis.js';

/** A CSV field per RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled. */
export const csvField = (value: string | number): string => {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

const columnName = (fieldNodeId: string) => fieldNodeId.slice(fieldNodeId.lastIndexOf(':') + 1);

/**
 * An impact answer as CSV, one row per downstream node in the server's order. Lists inside a cell are joined
 * with `; ` (owners as `name (type)`), so the file opens as one table in a spreadsheet.
 */
export function impactCsv(result: ImpactResult): string {
  const header = ['nodeId', 'kind', 'distance', 'level', 'via', 'owners', 'columns', 'breakingColumns'];
  const rows = result.nodes.map((node) =>
    [
      node.nodeId,
      node.kind,
      node.distance,
      node.level,
      node.via,
      node.owners.map((o) => (o.type ? `${o.name} (${o.type})` : o.name)).join('; '),
      node.columns.map(columnName).join('; '),
      node.breakingColumns.map(columnName).join('; '),
    ]
      .map(csvField)
      .join(','),
  );
  return [header.join(','), ...rows].join('\r\n') + '\r\n';
}

/** A word for a POSIX shell: single-quoted, with single quotes closed, escaped and reopened. */
export const shellQuote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * The `headwater impact` command that gives the same answer and exits 1 when a change is breaking, for a CI
 * check before a schema change ships.
 */
export function impactCommandLine(nodeId: string, change: ImpactChange, serverUrl: string): string {
  return [
    'headwater impact',
    shellQuote(nodeId),
    ...(change === 'latest' ? [] : ['--change', change]),
    '--fail-on breaking',
    '--url',
    shellQuote(serverUrl),
  ].join(' ');
}
