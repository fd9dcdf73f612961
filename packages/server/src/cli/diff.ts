import type { GraphDiffResult } from '../analysis/graph-diff.js';
import type { DatasetDiff, FlippedAssertion, NumberChange, RunDiffResult } from '../analysis/run-diff.js';
import type { SchemaChange } from '../analysis/schema.js';
import { CliError, DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import {
  commonOptions,
  formatTable,
  getJson,
  runClientCommand,
  shortId,
  writeJson,
  type CommandContext,
} from './table.js';

const change = (value: NumberChange, unit = ''): string =>
  value.from === null && value.to === null
    ? '-'
    : `${value.from ?? '?'}${unit} -> ${value.to ?? '?'}${unit}` +
      (value.change === null ? '' : ` (${value.change >= 0 ? '+' : ''}${value.change}${unit})`);

const schemaText = (c: SchemaChange): string => {
  const parts = [
    ...c.added.map((x) => `+${x.name}`),
    ...c.removed.map((x) => `-${x.name}`),
    ...c.typeChanged.map((x) => `~${x.name}`),
  ];
  return `${parts.join(' ') || 'new version, same columns'}${c.breaking ? ' (breaking)' : ''}`;
};

const schema = (diff: DatasetDiff): string => {
  if (diff.status === 'added' || diff.status === 'removed') return diff.status;
  if (!diff.schemaChange) return diff.status === 'unchanged' ? 'same version' : '-';
  return schemaText(diff.schemaChange);
};

function writeAssertions(
  out: CommandIo['stdout'],
  assertions: readonly FlippedAssertion[],
  from: string,
  to: string,
) {
  if (assertions.length === 0) {
    out.write('\nNo assertion flipped.\n');
    return;
  }
  out.write('\nAssertions that flipped:\n');
  out.write(
    formatTable(
      ['DATASET', 'ASSERTION', 'COLUMN', from, to],
      assertions.map((a) => [
        shortId(a.dataset),
        a.assertion,
        a.column || '-',
        a.from ? 'pass' : 'FAIL',
        a.to ? 'pass' : 'FAIL',
      ]),
    ),
  );
}

const DIFF_OPTIONS = {
  from: { type: 'string' },
  to: { type: 'string' },
  direction: { type: 'string' },
  depth: { type: 'string' },
} as const;

/** `headwater diff --help`. */
export const diffHelp = defineHelp(
  { ...DIFF_OPTIONS, ...commonOptions },
  {
    name: 'diff',
    usage: [
      `diff RUN_A RUN_B [--json] [--url ${DEFAULT_SERVER_URL}]`,
      'diff NODE --from TIME [--to TIME] [--direction upstream|downstream|both] [--depth 20]',
    ],
    description:
      'What differs between two runs: the dataset versions they read and wrote and the schema changes between them,\n' +
      'quality assertions that flipped, duration and row counts, datasets added and removed.\n' +
      'With a dataset or job NODE: its lineage at two event times compared: nodes and edges added and removed,\n' +
      'dataset versions and schemas, latest runs, assertions that flipped.',
    flags: {
      from: { value: 'TIME', text: 'with NODE: the earlier time (ISO 8601)' },
      to: { value: 'TIME', default: 'the newest event', text: 'with NODE: the later time (ISO 8601)' },
      direction: { value: 'upstream|downstream|both', default: 'both', text: 'with NODE: which lineage' },
      depth: { value: 'N', default: '20', text: 'with NODE: how many hops at most' },
      ...clientFlags,
    },
    examples: [
      "diff 'dataset:looker://acme:dashboards.revenue' --from 2025-03-13T12:00:00Z --direction upstream",
    ],
  },
);

const usage = formatHelp(diffHelp).trimEnd();

/** `headwater diff NODE --from T1 --to T2`: GET /api/v1/analysis/graph-diff as tables (or JSON). */
async function graphDiffCommand(context: CommandContext): Promise<number> {
  const { from, to, direction = 'both', depth = '20' } = context.values;
  if (from === undefined) {
    throw new CliError('a graph diff needs --from TIME (and optionally --to TIME).', 2);
  }
  if (!['upstream', 'downstream', 'both'].includes(direction)) {
    throw new CliError(
      `--direction must be upstream, downstream or both; got ${JSON.stringify(direction)}.`,
      2,
    );
  }
  if (!/^\d+$/.test(depth))
    throw new CliError(`--depth must be a whole number; got ${JSON.stringify(depth)}.`, 2);
  const result = await getJson<GraphDiffResult>(context.url, '/api/v1/analysis/graph-diff', {
    nodeId: context.positionals[0],
    from,
    ...(to !== undefined ? { to } : {}),
    direction,
    depth,
  });
  if (context.json) {
    writeJson(context.io, result);
    return 0;
  }
  const out = context.io.stdout;
  out.write(`Lineage of ${result.nodeId} (${result.direction}, depth ${result.depth})\n`);
  out.write(`A: ${result.from}\nB: ${result.to}\n\n`);
  const { nodes, edges } = result;
  out.write(
    `Nodes: ${nodes.added.length} added, ${nodes.removed.length} removed, ${nodes.unchanged} in both. ` +
      `Edges: ${edges.added.length} added, ${edges.removed.length} removed, ${edges.unchanged} in both.\n`,
  );
  const changes = [
    ...nodes.added.map((id) => ['+', 'node', shortId(id)]),
    ...nodes.removed.map((id) => ['-', 'node', shortId(id)]),
    ...edges.added.map((e) => ['+', 'edge', `${shortId(e.origin)} -> ${shortId(e.destination)}`]),
    ...edges.removed.map((e) => ['-', 'edge', `${shortId(e.origin)} -> ${shortId(e.destination)}`]),
  ];
  if (changes.length > 0) out.write(`\n${formatTable(['', 'WHAT', 'NODE OR EDGE'], changes)}`);
  if (result.datasets.length > 0) {
    out.write('\nDatasets that changed:\n');
    out.write(
      formatTable(
        ['DATASET', 'SCHEMA', 'ROWS'],
        result.datasets.map((d) => [
          shortId(d.dataset),
          d.schemaChange ? schemaText(d.schemaChange) : 'same version',
          change(d.rowCount),
        ]),
      ),
    );
  }
  if (result.jobs.length > 0) {
    out.write('\nJobs whose latest run changed:\n');
    const run = (r: GraphDiffResult['jobs'][number]['from']) =>
      r ? `${r.state} ${r.startedAt ?? '?'}` : '-';
    out.write(
      formatTable(
        ['JOB', 'A', 'B', 'DURATION'],
        result.jobs.map((j) => [shortId(j.job), run(j.from), run(j.to), change(j.duration, 'ms')]),
      ),
    );
  }
  writeAssertions(out, result.assertions, 'A', 'B');
  return 0;
}

/**
 * `headwater diff RUN_A RUN_B`: GET /api/v1/analysis/run-diff as tables (or JSON); `headwater diff NODE --from T`:
 * the graph diff.
 */
export function diffCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('diff', usage, args, io, DIFF_OPTIONS, [1, 2], async (context) => {
    if (context.positionals.length === 1) return graphDiffCommand(context);
    if (context.values.from !== undefined || context.values.to !== undefined) {
      throw new CliError('--from and --to compare a node at two times: give one NODE, not two runs.', 2);
    }
    const result = await getJson<RunDiffResult>(context.url, '/api/v1/analysis/run-diff', {
      from: context.positionals[0],
      to: context.positionals[1],
    });
    if (context.json) {
      writeJson(context.io, result);
      return 0;
    }
    const out = context.io.stdout;
    const run = (label: string, r: RunDiffResult['from']) =>
      `${label} ${r.id} ${shortId(r.job)} ${r.state} ${r.startedAt ?? '?'} -> ${r.endedAt ?? '?'}\n`;
    out.write(run('A', result.from) + run('B', result.to));
    if (!result.sameJob) out.write('(the runs belong to different jobs)\n');
    out.write(`Duration: ${change(result.duration, 'ms')}\n\n`);
    const rows = [
      ...result.inputs.map((d) => ['input', shortId(d.dataset), schema(d), change(d.rowCount)]),
      ...result.outputs.map((d) => ['output', shortId(d.dataset), schema(d), change(d.rowCount)]),
    ];
    out.write(
      rows.length === 0
        ? 'Neither run named a dataset.\n'
        : formatTable(['IO', 'DATASET', 'SCHEMA', 'ROWS'], rows),
    );
    writeAssertions(out, result.assertions, 'A', 'B');
    return 0;
  });
}
