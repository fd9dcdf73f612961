import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { PolicyReport } from '../analysis/policies.js';
import { CliError, DEFAULT_SERVER_URL, errorMessageOf, request, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, runClientCommand, shortId, writeJson } from './table.js';

const options = { file: { type: 'string', short: 'f' }, 'fail-on': { type: 'string' } } as const;

/** `headwater policy --help`. */
export const policyHelp = defineHelp(
  { ...options, ...commonOptions },
  {
    name: 'policy',
    usage: [`policy check -f policies.yaml [--fail-on any] [--json] [--url ${DEFAULT_SERVER_URL}]`],
    description:
      'Checks policies about where a tag (pii) reaches and who reads it against the lineage now:\n' +
      '  policies:\n' +
      '    - name: pii-not-public\n' +
      '      tag: pii\n' +
      "      neverReaches: ['s3://acme-public-*']   # storage namespaces (or namespace:name); unless masked\n" +
      '    - name: pii-readers-have-a-purpose\n' +
      '      tag: pii\n' +
      '      readersNeedTag: purpose                # on every job reading what pii reaches',
    flags: {
      file: { value: 'FILE', text: 'the policies, in YAML (or JSON)' },
      'fail-on': { value: 'any', default: 'off', text: 'exit 1 when a policy is broken' },
      ...clientFlags,
    },
    examples: ['policy check -f policies.yaml --fail-on any'],
  },
);

const usage = formatHelp(policyHelp).trimEnd();

/**
 * `headwater policy check -f FILE`: POST /api/v1/compliance/policies/check with the file's policies. Returns 1
 * when --fail-on any finds a violation or the server refuses, 2 for usage errors, else 0.
 */
export function policyCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('policy', usage, args, io, options, 1, async (context) => {
    if (context.positionals[0] !== 'check')
      throw new CliError(
        `unknown policy action ${JSON.stringify(context.positionals[0])}; use check.\n\n${usage}`,
        2,
      );
    const file = context.values.file;
    if (file === undefined) throw new CliError(`policy check needs -f FILE.\n\n${usage}`, 2);
    const failOn = context.values['fail-on'];
    if (failOn !== undefined && failOn !== 'any')
      throw new CliError(`--fail-on takes any; got ${JSON.stringify(failOn)}.`, 2);
    let document: unknown;
    try {
      document = parseYaml(await readFile(file, 'utf8'));
    } catch (error) {
      throw new CliError(`cannot read the policies in ${file}: ${(error as Error).message}`, 2);
    }
    const response = await request(`${context.url}/api/v1/compliance/policies/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(document),
    });
    if (!response.ok) throw new CliError(`${file}: ${await errorMessageOf(response)}`);
    const report = (await response.json()) as PolicyReport;
    const out = context.io.stdout;
    if (context.json) writeJson(context.io, report);
    else {
      for (const policy of report.policies) {
        out.write(
          `${policy.ok ? 'ok  ' : 'FAIL'}  ${policy.name} (${policy.tag}): ${policy.violations.length} violations\n`,
        );
      }
      const violations = report.policies.flatMap((policy) =>
        policy.violations.map((violation) => [
          policy.name,
          violation.rule,
          shortId(violation.node),
          violation.detail,
        ]),
      );
      if (violations.length > 0)
        out.write(`\n${formatTable(['POLICY', 'RULE', 'NODE', 'DETAIL'], violations)}`);
    }
    if (failOn === 'any' && !report.ok) {
      context.io.stderr.write(`headwater policy: ${report.violations} violations (--fail-on any).\n`);
      return 1;
    }
    return 0;
  });
}
