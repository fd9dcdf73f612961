import type { JourneyJson } from '../analysis/journey.js';
import { journeyCsv, journeyHtml, journeyMarkdown } from '../analysis/journey-render.js';
import { CliError, DEFAULT_SERVER_URL, errorMessageOf, request, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, runClientCommand, writeJson } from './table.js';

const options = {
  from: { type: 'string' },
  to: { type: 'string' },
  direction: { type: 'string' },
  depth: { type: 'string' },
  tags: { type: 'string' },
  jurisdiction: { type: 'string', multiple: true },
  format: { type: 'string' },
} as const;

/** `headwater journey --help`. */
export const journeyHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'journey',
    usage: [
      'journey NODE [--from TIME] [--to TIME] [--direction downstream|upstream] [--depth 20] [--tags pii,gdpr]',
      `        [--jurisdiction PATTERN=NAME]... [--format markdown|json|csv|html] [--url ${DEFAULT_SERVER_URL}]`,
    ],
    description:
      'The data journey of a dataset or column (dataset:<namespace>:<name>, datasetField:<namespace>:<name>:<field>)\n' +
      'over a window: each hop a run in the window made, with the job, its versions and SQL, the\n' +
      'transformations (masking too), the runs and the ids of the events that prove them; each node with its\n' +
      'owners over the window, jurisdiction, tags and retention evidence; and the SHA-256 of the report.',
    flags: {
      from: { value: 'TIME', default: '90 days before --to', text: 'the window’s start (RFC 3339)' },
      to: { value: 'TIME', default: 'the latest event', text: 'the window’s end' },
      direction: {
        value: 'downstream|upstream',
        default: 'downstream',
        text: 'where the data went, or came from',
      },
      depth: { value: 'N', default: '20', text: 'hops at most' },
      tags: { value: 'TAGS', text: 'comma-separated tags to report on each node' },
      jurisdiction: {
        value: 'PATTERN=NAME',
        text: "storage namespaces ('*' any text) and their jurisdiction, as many as needed: 's3://eu-*=EU'",
      },
      format: {
        value: 'markdown|json|csv|html',
        default: 'markdown',
        text: 'the report: Markdown, the JSON answer (as --json), one CSV row per hop, or printable HTML',
      },
      ...clientFlags,
    },
    examples: [
      "journey 'datasetField:s3://acme-eu-raw:customers:email' --from 2026-01-01T00:00:00Z --to 2026-04-01T00:00:00Z --jurisdiction 's3://acme-eu-*=EU' --format html > journey.html",
    ],
  },
);

const usage = formatHelp(journeyHelp).trimEnd();

/** `headwater journey NODE`: GET /api/v1/compliance/journey, rendered. Returns 0; 1 when the server refuses; 2 for usage. */
export function journeyCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('journey', usage, args, io, options, 1, async (context) => {
    const format = context.json ? 'json' : (context.values.format ?? 'markdown');
    if (!['markdown', 'json', 'csv', 'html'].includes(format))
      throw new CliError(`--format must be markdown, json, csv or html; got ${JSON.stringify(format)}.`, 2);
    const params = new URLSearchParams({ nodeId: context.positionals[0]! });
    for (const key of ['from', 'to', 'direction', 'depth', 'tags'] as const) {
      const value = context.values[key];
      if (value !== undefined) params.set(key, value);
    }
    for (const entry of context.lists.jurisdiction!) params.append('jurisdiction', entry);
    const response = await request(`${context.url}/api/v1/compliance/journey?${params.toString()}`);
    if (!response.ok) throw new CliError(await errorMessageOf(response));
    const report = (await response.json()) as JourneyJson;
    if (format === 'json') writeJson(context.io, report);
    else
      context.io.stdout.write(
        format === 'csv'
          ? journeyCsv(report)
          : format === 'html'
            ? journeyHtml(report)
            : journeyMarkdown(report),
      );
    return 0;
  });
}
