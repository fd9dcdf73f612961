import type { PreviewDiff } from '../analysis/preview-diff.js';
import { previewDiffMarkdown } from '../analysis/preview-diff-markdown.js';
import { parsePreviewMapping } from '../model/previews.js';
import { CliError, DEFAULT_SERVER_URL, errorMessageOf, request, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

const options = {
  base: { type: 'string' },
  'job-namespace': { type: 'string' },
  map: { type: 'string', multiple: true },
  pr: { type: 'string' },
  sha: { type: 'string' },
  ttl: { type: 'string' },
  'fail-on': { type: 'string' },
  format: { type: 'string' },
} as const;

/** `headwater preview --help`. */
export const previewHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'preview',
    usage: [
      'preview create NAME --base NS --job-namespace NS [--map FROM=TO]... [--pr N] [--sha SHA] [--ttl 14d]',
      'preview diff NAME [--fail-on breaking|any] [--format table|markdown|json]',
      `preview list | show NAME | delete NAME [--json] [--url ${DEFAULT_SERVER_URL}]`,
    ],
    description:
      "A preview runs a pull request's pipeline apart from production: events whose job namespace is the\n" +
      "preview's (or whose sourceCodeLocation names --pr or --sha) go to it, and production never sees them.\n" +
      "`diff` compares its lineage with production's: each change with its category (breaking, partial,\n" +
      'non-breaking), a reason, and the production consumers it reaches with their owners. `--map` says which\n' +
      "production name a preview dataset or job name stands for ('*' matches any text; 'NS::NAME' names a\n" +
      'namespace too). Creating and deleting need the write role in the job namespace.',
    flags: {
      base: { value: 'NS', text: "the production job namespace the preview's jobs stand in for" },
      'job-namespace': { value: 'NS', text: "the namespace the preview's producers send their jobs with" },
      map: { value: 'FROM=TO', text: "a name mapping, as many as needed: 'db.pr_42.*=db.analytics.*'" },
      pr: {
        value: 'N',
        text: 'the pull request: events whose sourceCodeLocation names it are the preview’s too',
      },
      sha: {
        value: 'SHA',
        text: 'the commit: events whose sourceCodeLocation version is it are the preview’s too',
      },
      ttl: { value: 'DURATION', default: 'none', text: 'remove the preview after this long (14d, 12h)' },
      'fail-on': {
        value: 'breaking|any',
        default: 'off',
        text: 'diff: exit 1 when a breaking change (or any change) is found',
      },
      format: {
        value: 'table|markdown|json',
        default: 'table',
        text: 'diff: a table, a pull request comment, or the JSON answer (as --json)',
      },
      ...clientFlags,
    },
    examples: [
      "preview create pr-42 --base analytics --job-namespace analytics-pr-42 --map 'db.pr_42.*=db.analytics.*' --pr 42 --ttl 14d",
      'preview diff pr-42 --fail-on breaking --format markdown > comment.md',
      'preview delete pr-42',
    ],
  },
);

const usage = formatHelp(previewHelp).trimEnd();

interface PreviewJson {
  name: string;
  jobNamespace: string;
  baseNamespace: string;
  pullRequest: number | null;
  commitSha: string | null;
  expiresAt: string | null;
}

const previewPath = (name: string) => `/api/v1/previews/${encodeURIComponent(name)}`;

/**
 * `headwater preview create|list|show|delete|diff`. Returns 0; 1 when the server refuses or cannot answer, or
 * when `diff --fail-on` finds what it names; 2 for usage errors.
 */
export function previewCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('preview', usage, args, io, options, [1, 2], async (context) => {
    const [action, name] = context.positionals;
    const out = context.io.stdout;
    const needName = () => {
      if (name === undefined)
        throw new CliError(`preview ${action} takes the preview's NAME.\n\n${usage}`, 2);
      return name;
    };
    const describe = (preview: PreviewJson) =>
      `${preview.name}: jobs of ${preview.jobNamespace} stand in for ${preview.baseNamespace}` +
      (preview.pullRequest !== null ? `, pull request ${preview.pullRequest}` : '') +
      (preview.commitSha !== null ? `, commit ${preview.commitSha}` : '') +
      (preview.expiresAt !== null ? `; expires ${preview.expiresAt}` : '');
    switch (action) {
      case 'list': {
        const result = await getJson<{ previews: PreviewJson[] }>(context.url, '/api/v1/previews', {});
        if (context.json) writeJson(context.io, result);
        else if (result.previews.length === 0) out.write('No previews.\n');
        else
          out.write(
            formatTable(
              ['NAME', 'JOB NAMESPACE', 'BASE', 'PR', 'EXPIRES'],
              result.previews.map((preview) => [
                preview.name,
                preview.jobNamespace,
                preview.baseNamespace,
                preview.pullRequest === null ? '-' : String(preview.pullRequest),
                preview.expiresAt ?? '-',
              ]),
            ),
          );
        return 0;
      }
      case 'show': {
        const result = await getJson<PreviewJson>(context.url, previewPath(needName()), {});
        if (context.json) writeJson(context.io, result);
        else out.write(`${describe(result)}\n`);
        return 0;
      }
      case 'create': {
        const base = context.values.base;
        const jobNamespace = context.values['job-namespace'];
        if (base === undefined || jobNamespace === undefined)
          throw new CliError(`preview create needs --base and --job-namespace.\n\n${usage}`, 2);
        const mappings = context.lists.map!.map((text) => {
          const mapping = parsePreviewMapping(text);
          if (!mapping)
            throw new CliError(`--map takes FROM=TO (name patterns); got ${JSON.stringify(text)}.`, 2);
          return mapping;
        });
        const pr = context.values.pr;
        if (pr !== undefined && !/^[1-9][0-9]*$/.test(pr))
          throw new CliError(`--pr takes a pull request number; got ${JSON.stringify(pr)}.`, 2);
        const response = await request(`${context.url}/api/v1/previews`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            name: needName(),
            jobNamespace,
            baseNamespace: base,
            pullRequest: pr === undefined ? null : Number(pr),
            commitSha: context.values.sha ?? null,
            mappings,
            ttl: context.values.ttl ?? null,
          }),
        });
        if (!response.ok) throw new CliError(await errorMessageOf(response));
        const created = (await response.json()) as PreviewJson;
        if (context.json) writeJson(context.io, created);
        else out.write(`Created preview ${describe(created)}.\n`);
        return 0;
      }
      case 'delete': {
        const response = await request(`${context.url}${previewPath(needName())}`, { method: 'DELETE' });
        if (!response.ok) throw new CliError(await errorMessageOf(response));
        if (context.json) writeJson(context.io, await response.json());
        else out.write(`Deleted preview ${name} and every event it held.\n`);
        return 0;
      }
      case 'diff': {
        const failOn = context.values['fail-on'];
        if (failOn !== undefined && failOn !== 'breaking' && failOn !== 'any')
          throw new CliError(`--fail-on must be breaking or any; got ${JSON.stringify(failOn)}.`, 2);
        const format = context.json ? 'json' : (context.values.format ?? 'table');
        if (format !== 'table' && format !== 'markdown' && format !== 'json')
          throw new CliError(`--format must be table, markdown or json; got ${JSON.stringify(format)}.`, 2);
        const diff = await getJson<PreviewDiff>(context.url, `${previewPath(needName())}/diff`, {});
        if (format === 'json') writeJson(context.io, diff);
        else if (format === 'markdown') out.write(`${previewDiffMarkdown(diff)}\n`);
        else writeDiffTable(out, diff);
        const { breaking, partial, nonBreaking } = diff.summary;
        if (failOn === 'breaking' && breaking > 0) {
          context.io.stderr.write(
            `headwater preview: ${breaking} breaking change${breaking === 1 ? '' : 's'} (--fail-on breaking).\n`,
          );
          return 1;
        }
        if (failOn === 'any' && breaking + partial + nonBreaking > 0) {
          context.io.stderr.write(`headwater preview: ${diff.changes.length} changes (--fail-on any).\n`);
          return 1;
        }
        return 0;
      }
      default:
        throw new CliError(
          `unknown preview action ${JSON.stringify(action)}; use create, list, show, diff or delete.\n\n${usage}`,
          2,
        );
    }
  });
}

function writeDiffTable(out: CommandIo['stdout'], diff: PreviewDiff): void {
  if (diff.changes.length === 0) {
    out.write(`Preview ${diff.preview} changes nothing in production's lineage.\n`);
    return;
  }
  out.write(
    formatTable(
      ['CATEGORY', 'REASON', 'NODE', 'COLUMN', 'CONSUMERS'],
      diff.changes.map((change) => [
        change.category,
        change.reason,
        shortId(change.node),
        change.column ?? '-',
        change.consumers.map((consumer) => shortId(consumer.nodeId)).join(', ') || '-',
      ]),
    ),
  );
  const { breaking, partial, nonBreaking, consumers } = diff.summary;
  out.write(
    `\n${breaking} breaking, ${partial} partial, ${nonBreaking} non-breaking; ${consumers} production nodes reached.\n`,
  );
  if (diff.mappingCoverage.unmapped.length > 0)
    out.write(`No production counterpart: ${diff.mappingCoverage.unmapped.map(shortId).join(', ')}\n`);
}
