import { parseNodeId } from '../core/node-id.js';
import { HeadwaterError } from '../core/errors.js';
import { CliError, DEFAULT_SERVER_URL, errorMessageOf, request, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, writeJson } from './table.js';

/** `headwater alias --help`. */
export const aliasHelp = defineHelp(commonOptions, {
  name: 'alias',
  usage: [
    `alias add ALIAS DATASET [--json] [--url ${DEFAULT_SERVER_URL}]`,
    'alias remove ALIAS [--json] [--url URL]',
    'alias list [--json] [--url URL]',
  ],
  description:
    'Dataset aliases repair names that differ for one dataset (a storage path written by Spark and the table\n' +
    'read by dbt): `add` declares that ALIAS is DATASET, and lineage, column lineage and the analyses then go\n' +
    'through DATASET wherever an event named ALIAS; search finds DATASET by either name. `remove` undoes it.\n' +
    'ALIAS and DATASET are dataset:<namespace>:<name>. Needs the admin role over both namespaces when\n' +
    'authentication is on (HEADWATER_API_KEY); every change is in the audit log.',
  flags: clientFlags,
  examples: [
    "alias add 'dataset:s3://bucket:warehouse/orders' 'dataset:hive://metastore:db.orders'",
    'alias list',
  ],
});

const usage = formatHelp(aliasHelp).trimEnd();

interface AliasJson {
  alias: { namespace: string; name: string };
  dataset: { namespace: string; name: string };
  createdAt: string;
}

/** The namespace and name of a dataset nodeId, or a usage error. */
function datasetOf(text: string | undefined): { namespace: string; name: string } {
  try {
    const parsed = parseNodeId(text ?? '');
    if (parsed.type === 'dataset') return { namespace: parsed.namespace, name: parsed.name };
  } catch (error) {
    if (!(error instanceof HeadwaterError)) throw error;
  }
  throw new CliError(`expected a dataset as dataset:<namespace>:<name>; got ${JSON.stringify(text)}.`, 2);
}

const aliasPath = (alias: { namespace: string; name: string }) =>
  `/api/v1/namespaces/${encodeURIComponent(alias.namespace)}/datasets/${encodeURIComponent(alias.name)}/alias`;

const nameOf = (entity: { namespace: string; name: string }) => `${entity.namespace}:${entity.name}`;

/**
 * `headwater alias add|remove|list`: PUT and DELETE .../datasets/{dataset}/alias and GET /api/v1/aliases.
 * Returns 0, 1 when the server refuses or cannot answer, 2 for usage errors.
 */
export function aliasCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('alias', usage, args, io, {}, [1, 3], async (context) => {
    const [action, first, second] = context.positionals;
    const expect = (count: number) => {
      if (context.positionals.length !== count + 1)
        throw new CliError(
          `alias ${action} takes ${count} argument${count === 1 ? '' : 's'}.\n\n${usage}`,
          2,
        );
    };
    const out = context.io.stdout;
    if (action === 'list') {
      expect(0);
      const result = await getJson<{ aliases: AliasJson[]; totalCount: number }>(
        context.url,
        '/api/v1/aliases',
        {
          limit: 10_000,
        },
      );
      if (context.json) writeJson(context.io, result);
      else if (result.aliases.length === 0) out.write('No aliases.\n');
      else {
        out.write(
          formatTable(
            ['ALIAS', 'IS', 'SINCE'],
            result.aliases.map((alias) => [nameOf(alias.alias), nameOf(alias.dataset), alias.createdAt]),
          ),
        );
      }
      return 0;
    }
    if (action !== 'add' && action !== 'remove') {
      throw new CliError(
        `unknown alias action ${JSON.stringify(action)}; use add, remove or list.\n\n${usage}`,
        2,
      );
    }
    expect(action === 'add' ? 2 : 1);
    const alias = datasetOf(first);
    const response = await request(`${context.url}${aliasPath(alias)}`, {
      method: action === 'add' ? 'PUT' : 'DELETE',
      ...(action === 'add'
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(datasetOf(second)) }
        : {}),
    });
    if (!response.ok) throw new CliError(await errorMessageOf(response));
    const result = (await response.json()) as AliasJson;
    if (context.json) writeJson(context.io, result);
    else if (action === 'add')
      out.write(`${nameOf(result.alias)} is now an alias of ${nameOf(result.dataset)}.\n`);
    else out.write(`${nameOf(result.alias)} is no longer an alias of ${nameOf(result.dataset)}.\n`);
    return 0;
  });
}
