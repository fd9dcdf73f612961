import type { SchemaDiffResult } from '../analysis/schema-diff.js';
import { DEFAULT_SERVER_URL, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const options = { from: { type: 'string' }, to: { type: 'string' } } as const;

/** `headwater schema-diff --help`. */
export const schemaDiffHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'schema-diff',
    usage: [`schema-diff DATASET [--from VERSION --to VERSION] [--json] [--url ${DEFAULT_SERVER_URL}]`],
    description:
      'The columns added, removed and type-changed between two versions of a dataset (default: the two newest),\n' +
      'whether that breaks readers, and for a breaking change the downstream columns and owners it reaches.\n' +
      'DATASET is dataset:<namespace>:<name>.',
    flags: {
      from: { value: 'VERSION', default: 'the version before --to', text: 'the older version (its id)' },
      to: { value: 'VERSION', default: 'the newest version', text: 'the newer version (its id)' },
      ...clientFlags,
    },
    examples: ["schema-diff 'dataset:postgres://warehouse.acme.internal:5432:analytics.staging.orders'"],
  },
);

const usage = formatHelp(schemaDiffHelp).trimEnd();

/** `headwater schema-diff DATASET`: GET /api/v1/analysis/schema-diff as tables (or JSON). */
export function schemaDiffCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('schema-diff', usage, args, io, options, 1, async (context) => {
    const result = await getJson<SchemaDiffResult>(context.url, '/api/v1/analysis/schema-diff', {
      dataset: context.positionals[0],
      from: context.values.from,
      to: context.values.to,
    });
    if (context.json) {
      writeJson(context.io, result);
      return 0;
    }
    const out = context.io.stdout;
    out.write(
      `Schema of ${result.dataset}\n` +
        `  from ${result.from.version} (${result.from.createdAt})\n` +
        `  to   ${result.to.version} (${result.to.createdAt})\n\n`,
    );
    const rows = [
      ...result.added.map((c) => ['added', c.name, c.type ?? '']),
      ...result.removed.map((c) => ['removed', c.name, c.type ?? '']),
      ...result.typeChanged.map((c) => ['type changed', c.name, `${c.fromType} -> ${c.toType}`]),
    ];
    out.write(rows.length === 0 ? 'No column changes.\n' : formatTable(['CHANGE', 'COLUMN', 'TYPE'], rows));
    out.write(`\nBreaking: ${result.breaking ? 'yes' : 'no'}\n`);
    if (result.reach.length > 0) {
      out.write('\nDownstream columns reached:\n');
      out.write(
        formatTable(
          ['DIST', 'COLUMN', 'OWNERS'],
          result.reach.map((c) => [
            String(c.distance),
            shortId(c.nodeId),
            c.owners.map((o) => o.name).join(', ') || '-',
          ]),
        ),
      );
      out.write(`\nOwners to tell: ${result.owners.map((o) => o.name).join(', ') || 'none known'}\n`);
    }
    return 0;
  });
}
