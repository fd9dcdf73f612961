import { IMPACT_CHANGES, type ImpactResult } from '../analysis/impact.js';
import { CliError, DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const options = { change: { type: 'string' }, 'fail-on': { type: 'string' } } as const;

/** `headwater impact --help`. */
export const impactHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'impact',
    usage: [
      'impact NODE [--change latest|removed|typeChanged|none] [--fail-on breaking|any]',
      `       [--json] [--url ${DEFAULT_SERVER_URL}]`,
    ],
    description:
      'Everything downstream of a dataset, column or job: distance, impact level (breaking, direct, indirect),\n' +
      'owners and the columns affected. Use --fail-on in CI before deploying a schema change.',
    flags: {
      change: {
        value: IMPACT_CHANGES.join('|'),
        default: 'latest',
        text: 'the change to consider (latest: between the two newest versions of the dataset)',
      },
      'fail-on': {
        value: 'breaking|any',
        default: 'off',
        text: 'exit 1 when a node is breaking, or when anything at all is downstream (any)',
      },
      ...clientFlags,
    },
    examples: [
      "impact 'datasetField:postgres://warehouse.acme.internal:5432:analytics.staging.orders:amount' --change removed --fail-on breaking",
    ],
  },
);

const usage = formatHelp(impactHelp).trimEnd();

/**
 * `headwater impact NODE`: GET /api/v1/analysis/impact as a table (or JSON). Returns 1 when --fail-on matches
 * or the server cannot answer, 2 for usage errors, else 0.
 */
export function impactCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('impact', usage, args, io, options, 1, async (context) => {
    const failOn = context.values['fail-on'];
    if (failOn !== undefined && failOn !== 'breaking' && failOn !== 'any') {
      throw new CliError(`--fail-on must be breaking or any; got ${JSON.stringify(failOn)}.`, 2);
    }
    const change = context.values.change;
    if (change !== undefined && !(IMPACT_CHANGES as readonly string[]).includes(change)) {
      throw new CliError(
        `--change must be one of ${IMPACT_CHANGES.join(', ')}; got ${JSON.stringify(change)}.`,
        2,
      );
    }
    const result = await getJson<ImpactResult>(context.url, '/api/v1/analysis/impact', {
      nodeId: context.positionals[0],
      change,
    });
    const out = context.io.stdout;
    if (context.json) writeJson(context.io, result);
    else {
      out.write(`Impact of ${result.start} (change: ${result.change})\n`);
      for (const considered of result.changes) {
        const parts = [
          ...considered.added.map((c) => `+${c.name}`),
          ...considered.removed.map((c) => `-${c.name}`),
          ...considered.typeChanged.map((c) => `~${c.name}`),
        ];
        out.write(
          `  ${shortId(considered.dataset)}: ${parts.join(' ') || 'no column changes'}` +
            `${considered.breaking ? ' (breaking)' : ''}\n`,
        );
      }
      out.write('\n');
      if (result.nodes.length === 0) out.write('Nothing is downstream.\n');
      else {
        out.write(
          formatTable(
            ['DIST', 'LEVEL', 'NODE', 'OWNERS', 'COLUMNS'],
            result.nodes.map((node) => [
              String(node.distance),
              node.level,
              node.nodeId,
              node.owners.map((owner) => owner.name).join(', ') || '-',
              (node.breakingColumns.length > 0 ? node.breakingColumns : node.columns)
                .map((id) => id.slice(id.lastIndexOf(':') + 1))
                .join(', ') || '-',
            ]),
          ),
        );
        const count = (level: string) => result.nodes.filter((node) => node.level === level).length;
        out.write(
          `\n${result.nodes.length} downstream: ${count('breaking')} breaking, ${count('direct')} direct, ` +
            `${count('indirect')} indirect. Owners: ${result.owners.map((o) => o.name).join(', ') || 'none'}.\n`,
        );
      }
    }
    if (failOn === 'breaking' && result.breaking) {
      context.io.stderr.write(
        'headwater impact: a breaking change reaches downstream nodes (--fail-on breaking).\n',
      );
      return 1;
    }
    if (failOn === 'any' && result.nodes.length > 0) {
      context.io.stderr.write(
        `headwater impact: ${result.nodes.length} nodes are downstream (--fail-on any).\n`,
      );
      return 1;
    }
    return 0;
  });
}
