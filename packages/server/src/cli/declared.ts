import type { DeclaredLineageResult } from '../analysis/declared.js';
import { CliError, DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const options = { at: { type: 'string' }, 'fail-on': { type: 'string' } } as const;

/** `headwater declared --help`. */
export const declaredHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'declared',
    usage: [`declared JOB [--at TIME] [--fail-on any] [--json] [--url ${DEFAULT_SERVER_URL}]`],
    description:
      "Declared against observed lineage: the inputs and outputs JOB's latest JobEvent declares (a pipeline pushed\n" +
      'with `kedro openlineage push`) that its latest completed run did not touch, and those it touched that were\n' +
      'never declared. For a pipeline job, each of its node jobs against its own latest completed run. JOB is\n' +
      'job:<namespace>:<name>.',
    flags: {
      at: {
        value: 'TIME',
        default: 'now',
        text: 'compare what was declared and run up to this time (ISO 8601)',
      },
      'fail-on': {
        value: 'any',
        default: 'off',
        text: 'exit 1 when anything differs: use it in CI after a push',
      },
      ...clientFlags,
    },
    examples: ["declared 'job:acme-airflow:daily_etl.load_orders'"],
  },
);

const usage = formatHelp(declaredHelp).trimEnd();

/**
 * `headwater declared JOB`: GET /api/v1/analysis/declared-lineage as tables (or JSON). Returns 1 when --fail-on
 * matches or the server cannot answer, 2 for usage errors, else 0.
 */
export function declaredCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('declared', usage, args, io, options, 1, async (context) => {
    const failOn = context.values['fail-on'];
    if (failOn !== undefined && failOn !== 'any') {
      throw new CliError(`--fail-on must be any; got ${JSON.stringify(failOn)}.`, 2);
    }
    const result = await getJson<DeclaredLineageResult>(context.url, '/api/v1/analysis/declared-lineage', {
      nodeId: context.positionals[0],
      at: context.values.at,
    });
    const differs = result.declaredNotObserved.length + result.observedNotDeclared.length;
    if (context.json) writeJson(context.io, result);
    else {
      const out = context.io.stdout;
      out.write(`Declared against observed lineage of ${result.job} at ${result.at}\n\n`);
      out.write(
        formatTable(
          [
            'JOB',
            'DECLARED AT',
            'LATEST COMPLETED RUN',
            'DECLARED',
            'OBSERVED',
            'NOT OBSERVED',
            'UNDECLARED',
          ],
          result.jobs.map((job) => [
            shortId(job.job),
            job.declaredAt ?? 'never',
            job.run ? `${job.run.id} (${job.run.startedAt ?? '?'})` : 'never',
            String(job.declared),
            String(job.observed),
            String(job.notObserved),
            String(job.undeclared),
          ]),
        ),
      );
      for (const [title, edges] of [
        ['Declared, not touched by the latest completed run', result.declaredNotObserved],
        ['Observed, never declared', result.observedNotDeclared],
      ] as const) {
        out.write(`\n${title}:\n`);
        if (edges.length === 0) out.write('  none\n');
        else {
          out.write(
            formatTable(
              ['JOB', 'EDGE', 'DATASET'],
              edges.map((edge) => [shortId(edge.job), edge.direction, shortId(edge.dataset)]),
            ),
          );
        }
      }
    }
    if (failOn === 'any' && differs > 0) {
      context.io.stderr.write(`headwater declared: ${differs} edges differ (--fail-on any).\n`);
      return 1;
    }
    return 0;
  });
}
