import type { DatasetDiff, NumberChange, RunDiffResult } from '../analysis/run-diff.js';
import { DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const usage = `Usage: headwater diff RUN_A RUN_B [--json] [--url ${DEFAULT_SERVER_URL}]

What differs between two runs: the dataset versions they read and wrote and the schema changes between them,
quality assertions that flipped, duration and row counts, datasets added and removed.`;

const change = (value: NumberChange, unit = ''): string =>
  value.from === null && value.to === null
    ? '-'
    : `${value.from ?? '?'}${unit} -> ${value.to ?? '?'}${unit}` +
      (value.change === null ? '' : ` (${value.change >= 0 ? '+' : ''}${value.change}${unit})`);

const schema = (diff: DatasetDiff): string => {
  if (diff.status === 'added' || diff.status === 'removed') return diff.status;
  if (!diff.schemaChange) return diff.status === 'unchanged' ? 'same version' : '-';
  const c = diff.schemaChange;
  const parts = [
    ...c.added.map((x) => `+${x.name}`),
    ...c.removed.map((x) => `-${x.name}`),
    ...c.typeChanged.map((x) => `~${x.name}`),
  ];
  return `${parts.join(' ') || 'new version, same columns'}${c.breaking ? ' (breaking)' : ''}`;
};

/** `headwater diff RUN_A RUN_B`: GET /api/v1/analysis/run-diff as tables (or JSON). */
export function diffCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('diff', usage, args, io, {}, 2, async (context) => {
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
    if (result.assertions.length > 0) {
      out.write('\nAssertions that flipped:\n');
      out.write(
        formatTable(
          ['DATASET', 'ASSERTION', 'COLUMN', 'A', 'B'],
          result.assertions.map((a) => [
            shortId(a.dataset),
            a.assertion,
            a.column || '-',
            a.from ? 'pass' : 'FAIL',
            a.to ? 'pass' : 'FAIL',
          ]),
        ),
      );
    } else out.write('\nNo assertion flipped.\n');
    return 0;
  });
}
