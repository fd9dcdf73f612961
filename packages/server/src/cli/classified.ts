import type { ClassificationJson } from '../analysis/classification.js';
import { CliError, DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const options = { 'fail-on': { type: 'string' } } as const;

/** `headwater classified --help`. */
export const classifiedHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'classified',
    usage: [`classified TAG [--fail-on coarse|any] [--json] [--url ${DEFAULT_SERVER_URL}]`],
    description:
      'Every column a tag (pii) reaches from where it was put, through column lineage: its distance, the\n' +
      'column one hop back and the job between; coarse where a job has no column lineage; and the masking\n' +
      'edges it does not cross.',
    flags: {
      'fail-on': {
        value: 'coarse|any',
        default: 'off',
        text: 'exit 1 when a column is reached only coarsely, or when the tag reaches anything beyond its seeds',
      },
      ...clientFlags,
    },
    examples: ['classified pii --fail-on coarse'],
  },
);

const usage = formatHelp(classifiedHelp).trimEnd();

/**
 * `headwater classified TAG`: GET /api/v1/compliance/classified as a table (or JSON). Returns 1 when --fail-on
 * matches or the server cannot answer, 2 for usage errors, else 0.
 */
export function classifiedCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('classified', usage, args, io, options, 1, async (context) => {
    const failOn = context.values['fail-on'];
    if (failOn !== undefined && failOn !== 'coarse' && failOn !== 'any') {
      throw new CliError(`--fail-on must be coarse or any; got ${JSON.stringify(failOn)}.`, 2);
    }
    const result = await getJson<ClassificationJson>(context.url, '/api/v1/compliance/classified', {
      tag: context.positionals[0],
    });
    const out = context.io.stdout;
    if (context.json) writeJson(context.io, result);
    else if (result.seeds.length === 0) out.write(`Nothing carries the tag ${result.tag}.\n`);
    else {
      out.write(
        formatTable(
          ['DIST', 'COLUMN', 'HOW', 'FROM', 'JOB'],
          result.columns.map((column) => [
            String(column.distance),
            shortId(column.nodeId),
            column.distance === 0
              ? 'seed'
              : column.coarse
                ? 'coarse'
                : column.transformations.map((t) => `${t.type}/${t.subtype}`).join(', ') || '-',
            column.via ? shortId(column.via) : '-',
            column.jobs.map(shortId).join(', ') || '-',
          ]),
        ),
      );
      for (const stop of result.stopped)
        out.write(
          `Stopped: ${shortId(stop.from)} -> ${shortId(stop.to)} (${stop.reason} by ${stop.jobs.map(shortId).join(', ')})\n`,
        );
      const coarse = result.columns.filter((column) => column.coarse).length;
      out.write(
        `\n${result.tag} reaches ${result.columns.length} columns in ${result.datasets.length} datasets ` +
          `(${coarse} coarse) from ${result.seeds.length} seeds.\n`,
      );
    }
    const beyond = result.columns.filter((column) => column.distance > 0);
    if (failOn === 'coarse' && result.columns.some((column) => column.coarse)) {
      context.io.stderr.write(
        `headwater classified: ${result.tag} reaches columns coarsely, through jobs without column lineage (--fail-on coarse).\n`,
      );
      return 1;
    }
    if (failOn === 'any' && beyond.length > 0) {
      context.io.stderr.write(
        `headwater classified: ${result.tag} reaches ${beyond.length} columns beyond its seeds (--fail-on any).\n`,
      );
      return 1;
    }
    return 0;
  });
}
