import type { RootCauseResult } from '../analysis/root-cause.js';
import { DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const options = { at: { type: 'string' } } as const;

/** `headwater root-cause --help`. */
export const rootCauseHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'root-cause',
    usage: [`root-cause NODE [--at TIME] [--json] [--url ${DEFAULT_SERVER_URL}]`],
    description:
      'Why a dataset or column may be wrong: walks upstream and lists, nearest first, failed or aborted runs,\n' +
      'failing quality assertions, stale datasets and schema changes, with the path from NODE; what follows\n' +
      'from a failed run upstream (FOLLOWS FROM) comes after the causes nothing explains.\n' +
      'NODE is dataset:<namespace>:<name>, datasetField:<namespace>:<dataset>:<field> or job:<namespace>:<name>.',
    flags: {
      at: {
        value: 'TIME',
        default: 'the newest event in the store',
        text: '"now", for staleness (ISO 8601)',
      },
      ...clientFlags,
    },
    examples: ["root-cause 'dataset:looker://acme:dashboards.revenue'"],
  },
);

const usage = formatHelp(rootCauseHelp).trimEnd();

/**
 * `headwater root-cause NODE`: GET /api/v1/analysis/root-cause as a table (or the JSON answer with --json).
 * Returns 0, 1 when the server cannot answer, 2 for usage errors.
 */
export function rootCauseCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('root-cause', usage, args, io, options, 1, async (context) => {
    const result = await getJson<RootCauseResult>(context.url, '/api/v1/analysis/root-cause', {
      nodeId: context.positionals[0],
      at: context.values.at,
    });
    if (context.json) {
      writeJson(context.io, result);
      return 0;
    }
    const out = context.io.stdout;
    out.write(
      `Root cause of ${result.target} at ${result.at}\n` +
        `Last completed write: ${result.lastGoodRunAt ?? 'never'}; checked ${result.checked.datasets} datasets ` +
        `and ${result.checked.jobs} jobs upstream.\n\n`,
    );
    if (result.causes.length === 0) {
      out.write('No failed runs, failing assertions, stale datasets or schema changes upstream.\n');
      return 0;
    }
    out.write(
      formatTable(
        ['DIST', 'KIND', 'NODE', 'FOLLOWS FROM', 'WHAT'],
        result.causes.map((cause) => [
          String(cause.distance),
          cause.kind,
          shortId(cause.nodeId),
          cause.explainedBy === null ? '-' : shortId(cause.explainedBy),
          cause.message,
        ]),
      ),
    );
    out.write('\nPaths:\n');
    for (const cause of result.causes) out.write(`  ${cause.path.map(shortId).join(' <- ')}\n`);
    return 0;
  });
}
