import type { ColumnPath, ColumnPathsResult } from '../analysis/column-paths.js';
import { CliError, DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const options = {
  direction: { type: 'string' },
  depth: { type: 'string' },
  'as-of': { type: 'string' },
} as const;

/** `headwater lineage --help`. */
export const lineageHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'lineage',
    usage: [
      'lineage NODE [--direction upstream|downstream|both] [--depth 20] [--as-of TIME]',
      `        [--json] [--url ${DEFAULT_SERVER_URL}]`,
    ],
    description:
      'The lineage of a dataset or job (GET /api/v1/lineage), or of a column\n' +
      '(datasetField:<namespace>:<dataset>:<field>, GET /api/v1/analysis/column-paths) with the\n' +
      'transformations along each path.',
    flags: {
      direction: {
        value: 'upstream|downstream|both',
        default: 'both; upstream for a column',
        text: 'which way to walk (a column: upstream or downstream)',
      },
      depth: { value: 'N', default: '20', text: 'how many hops at most' },
      'as-of': {
        value: 'TIME',
        text: 'the lineage as it was at this event time (ISO 8601; not for columns)',
      },
      ...clientFlags,
    },
    examples: [
      "lineage 'dataset:postgres://warehouse.acme.internal:5432:analytics.marts.revenue_daily' --direction upstream",
    ],
  },
);

const usage = formatHelp(lineageHelp).trimEnd();

interface LineageGraphJson {
  graph: { id: string; type: string; inEdges: { origin: string }[]; outEdges: { destination: string }[] }[];
}

/** Breadth-first distances from `start` along `next`. */
function distances(start: string, next: (id: string) => string[]): Map<string, number> {
  const result = new Map([[start, 0]]);
  let frontier = [start];
  while (frontier.length > 0) {
    const following: string[] = [];
    for (const id of frontier) {
      for (const neighbour of next(id)) {
        if (result.has(neighbour)) continue;
        result.set(neighbour, result.get(id)! + 1);
        following.push(neighbour);
      }
    }
    frontier = following;
  }
  return result;
}

/** `headwater lineage NODE`: a node's lineage as a table of nodes by distance (or the JSON answer). */
export function lineageCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('lineage', usage, args, io, options, 1, async (context) => {
    const nodeId = context.positionals[0]!;
    const depth = context.values.depth ?? '20';
    if (!/^\d+$/.test(depth))
      throw new CliError(`--depth must be a whole number; got ${JSON.stringify(depth)}.`, 2);
    const isColumn = nodeId.startsWith('datasetField:');
    const direction = context.values.direction ?? (isColumn ? 'upstream' : 'both');
    const allowed = isColumn ? ['upstream', 'downstream'] : ['upstream', 'downstream', 'both'];
    if (!allowed.includes(direction)) {
      throw new CliError(`--direction must be ${allowed.join(' or ')}; got ${JSON.stringify(direction)}.`, 2);
    }
    const out = context.io.stdout;
    if (isColumn && context.values['as-of'] !== undefined) {
      throw new CliError('--as-of applies to the lineage of datasets and jobs, not of columns.', 2);
    }
    if (isColumn) {
      const result = await getJson<ColumnPathsResult>(context.url, '/api/v1/analysis/column-paths', {
        nodeId,
        direction,
        depth,
      });
      if (context.json) {
        writeJson(context.io, result);
        return 0;
      }
      out.write(`Columns ${direction} of ${result.start}\n\n`);
      if (result.columns.length === 0) out.write('None.\n');
      else {
        // Each column names the one before it: the hops from the start are found by following `via` back.
        const byId = new Map(result.columns.map((column) => [column.nodeId, column]));
        const along = (column: ColumnPath): string[] => {
          const hop = column.transformations.map((t) => `${t.type}/${t.subtype}`).join('+') || '?';
          const previous = byId.get(column.via);
          return previous ? [...along(previous), hop] : [hop];
        };
        out.write(
          formatTable(
            ['DIST', 'COLUMN', 'TRANSFORMATIONS ALONG THE PATH'],
            result.columns.map((column) => [
              String(column.distance),
              shortId(column.nodeId),
              along(column).join(' > '),
            ]),
          ),
        );
      }
      return 0;
    }
    const asOf = context.values['as-of'];
    const result = await getJson<LineageGraphJson>(context.url, '/api/v1/lineage', {
      nodeId,
      direction,
      depth,
      ...(asOf !== undefined ? { asOf } : {}),
    });
    if (context.json) {
      writeJson(context.io, result);
      return 0;
    }
    const nodes = new Map(result.graph.map((node) => [node.id, node]));
    const up = distances(nodeId, (id) => (nodes.get(id)?.inEdges ?? []).map((edge) => edge.origin));
    const down = distances(nodeId, (id) => (nodes.get(id)?.outEdges ?? []).map((edge) => edge.destination));
    const rows: string[][] = [];
    for (const [label, map] of [
      ['upstream', up],
      ['downstream', down],
    ] as const) {
      if (direction !== 'both' && direction !== label) continue;
      for (const [id, distance] of [...map].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))) {
        if (distance > 0) rows.push([label, String(distance), nodes.get(id)?.type ?? '', shortId(id)]);
      }
    }
    out.write(`Lineage of ${nodeId} (${direction}, depth ${depth}${asOf ? `, as of ${asOf}` : ''})\n\n`);
    out.write(rows.length === 0 ? 'No lineage.\n' : formatTable(['DIRECTION', 'DIST', 'TYPE', 'NODE'], rows));
    return 0;
  });
}
