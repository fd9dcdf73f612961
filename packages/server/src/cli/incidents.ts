/**
 * `headwater incidents list|show|ack|resolve` and `headwater alerts dry-run|check`: the incidents API from a
 * terminal or a CI job, and the alerts configuration checked before a server is started with it.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { readAlertsConfig } from '../alerts/config.js';
import { hopsPhrase } from '../alerts/notice.js';
import type { IncidentDetailJson, IncidentJson, IncidentRecipientJson } from '../api/schemas/incidents.js';
import { HeadwaterError } from '../core/errors.js';
import { CliError, DEFAULT_SERVER_URL, errorMessageOf, request, type CommandIo } from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';
import { commonOptions, formatTable, getJson, runClientCommand, shortId, writeJson } from './table.js';

/** The flags of `incidents` besides --url, --json and --help. */
const incidentFlags = {
  status: { type: 'string' },
  note: { type: 'string' },
  'fail-on': { type: 'string' },
} as const;
const incidentOptions = { ...commonOptions, ...incidentFlags } as const;

/** `headwater incidents --help`. */
export const incidentsHelp = defineHelp(incidentOptions, {
  name: 'incidents',
  usage: [
    `incidents list [--status open|acknowledged|resolved|unresolved] [--fail-on unresolved] [--json] [--url ${DEFAULT_SERVER_URL}]`,
    'incidents show ID [--json] [--url URL]',
    'incidents ack ID [--note TEXT] [--url URL]',
    'incidents resolve ID [--note TEXT] [--url URL]',
  ],
  description:
    'The incidents a server started with --alerts-config opened: one per root cause (a failed run, failing\n' +
    'assertions) with what it breaks downstream and who was told. `show` prints one with its signals and\n' +
    'timeline; `ack` and `resolve` tell its recipients and are audited (the writer role in its namespace).\n' +
    '`list --fail-on unresolved` exits 1 when any incident is open or acknowledged, for a CI gate.',
  flags: {
    ...clientFlags,
    status: { value: 'STATE', text: 'only incidents in this state (unresolved: open or acknowledged)' },
    note: { value: 'TEXT', text: 'a note sent with the acknowledgement or resolution' },
    'fail-on': { value: 'unresolved', text: 'exit 1 when an unresolved incident is listed' },
  },
  examples: ['incidents list --status unresolved', 'incidents list --fail-on unresolved --json'],
});

const incidentsUsage = formatHelp(incidentsHelp).trimEnd();

const recipientLine = (recipient: IncidentRecipientJson): string => {
  const address = 'channel' in recipient.address ? recipient.address.channel : recipient.address.email;
  return `  ${address}: ${recipient.why.join('; ')}`;
};

/** One incident in words: its headline, root cause, what it breaks and who was told. */
function describeIncident(incident: IncidentJson): string {
  const lines = [`${incident.headline} (${incident.status}, opened ${incident.openedAt})`];
  const root = incident.rootCause;
  if (root.kind === 'job') {
    lines.push(`Root cause: ${shortId(incident.root)}${root.runId ? `, run ${root.runId}` : ''}`);
    if (root.errorMessage) lines.push(`Error: ${root.errorMessage.split('\n')[0]}`);
  } else {
    lines.push(
      `Root cause: ${root.assertion.name}${root.assertion.column ? ` on ${root.assertion.column}` : ''} of ${shortId(incident.root)}`,
    );
  }
  const impacted = [
    ...incident.impacted.datasets.map((node) => ({ node, type: 'dataset' })),
    ...incident.impacted.jobs.map((node) => ({ node, type: 'job' })),
  ].sort((a, b) => a.node.depth - b.node.depth);
  if (impacted.length > 0) {
    lines.push('Impacted:');
    for (const { node, type } of impacted)
      lines.push(
        `  ${type} ${node.namespace}:${node.name} (${hopsPhrase(node.depth)})${node.columns ? `, columns ${node.columns.join(', ')}` : ''}`,
      );
  }
  lines.push(incident.recipients.length === 0 ? 'Told: nobody (no owner or rule names an address)' : 'Told:');
  lines.push(...incident.recipients.map(recipientLine));
  return `${lines.join('\n')}\n`;
}

/**
 * `headwater incidents list|show|ack|resolve`. Returns 0; 1 when the server refuses or cannot answer, or when
 * `--fail-on unresolved` finds one; 2 for usage errors.
 */
export function incidentsCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('incidents', incidentsUsage, args, io, incidentFlags, [1, 2], async (context) => {
    const [action, id] = context.positionals;
    const out = context.io.stdout;
    const needsId = () => {
      if (id === undefined)
        throw new CliError(`incidents ${action} takes an incident id.\n\n${incidentsUsage}`, 2);
      return id;
    };
    if (action === 'list') {
      const failOn = context.values['fail-on'];
      if (failOn !== undefined && failOn !== 'unresolved')
        throw new CliError(`--fail-on takes unresolved; got ${JSON.stringify(failOn)}.`, 2);
      const result = await getJson<{ incidents: IncidentJson[]; totalCount: number }>(
        context.url,
        '/api/v1/incidents',
        { status: context.values.status, limit: 1000 },
      );
      if (context.json) writeJson(context.io, result);
      else if (result.incidents.length === 0) out.write('No incidents.\n');
      else
        out.write(
          formatTable(
            ['ID', 'STATUS', 'OPENED', 'WHAT', 'IMPACTED'],
            result.incidents.map((incident) => [
              incident.id,
              incident.status,
              incident.openedAt,
              incident.headline,
              String(incident.impacted.datasets.length + incident.impacted.jobs.length),
            ]),
          ),
        );
      return failOn !== undefined && result.incidents.some((incident) => incident.status !== 'resolved')
        ? 1
        : 0;
    }
    if (action === 'show') {
      const detail = await getJson<IncidentDetailJson>(
        context.url,
        `/api/v1/incidents/${encodeURIComponent(needsId())}`,
        {},
      );
      if (context.json) {
        writeJson(context.io, detail);
        return 0;
      }
      out.write(describeIncident(detail.incident));
      out.write('Signals:\n');
      for (const signal of detail.signals)
        out.write(`  ${signal.kind} ${shortId(signal.node)} at ${signal.at}\n`);
      out.write('Timeline:\n');
      for (const t of detail.timeline) {
        const sent = t.throttled
          ? 'throttled'
          : t.deliveries
              .map((d) => `${d.channel} ${d.state}${d.attempts > 1 ? ` after ${d.attempts} attempts` : ''}`)
              .join(', ') || 'sent to nobody';
        out.write(
          `  ${t.at} ${t.kind}${t.by ? ` by ${t.by}` : ''}${t.note ? `: ${t.note}` : ''} (${sent})\n`,
        );
      }
      return 0;
    }
    if (action === 'ack' || action === 'resolve') {
      const note = context.values.note;
      const response = await request(
        `${context.url}/api/v1/incidents/${encodeURIComponent(needsId())}/${action === 'ack' ? 'acknowledge' : 'resolve'}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(note === undefined ? {} : { note }),
        },
      );
      if (!response.ok) throw new CliError(await errorMessageOf(response));
      const incident = (await response.json()) as IncidentJson;
      if (context.json) writeJson(context.io, incident);
      else out.write(`${incident.id} is ${incident.status}; its recipients are told.\n`);
      return 0;
    }
    throw new CliError(
      `unknown incidents action ${JSON.stringify(action)}; use list, show, ack or resolve.\n\n${incidentsUsage}`,
      2,
    );
  });
}

/** `headwater alerts --help`. */
export const alertsHelp = defineHelp(commonOptions, {
  name: 'alerts',
  usage: [
    `alerts apply FILE [--json] [--url ${DEFAULT_SERVER_URL}]`,
    'alerts dry-run [--json] [--url URL]',
    'alerts check FILE',
  ],
  description:
    '`apply` puts the configuration in FILE in force on a running server at once (the admin role over every\n' +
    "namespace; ${ENV_VAR} references are resolved in the server's environment, and it stays in force until a\n" +
    'server starts with --alerts-config again). `dry-run` asks a running server who it would tell of what is\n' +
    'broken now, and why, without sending\n' +
    'anything (the admin role over every namespace). `check` reads an alerts configuration file as\n' +
    '`serve --alerts-config FILE` would and prints every problem with its line, or that it is fine.',
  flags: clientFlags,
  examples: ['alerts check alerts.yaml', 'alerts apply alerts.yaml', 'alerts dry-run --json'],
});

const alertsUsage = formatHelp(alertsHelp).trimEnd();

interface DryRunGroupJson {
  root: string;
  signal: string;
  signals: string[];
  incident: string | null;
  rules: string[];
  recipients: IncidentRecipientJson[];
  channels: string[];
  unroutable: { recipient: IncidentRecipientJson; reason: string }[];
}

/** `headwater alerts dry-run|check`. Returns 0; 1 when the server refuses, or the file has problems; 2 for usage. */
export function alertsCommand(args: string[], io?: CommandIo): Promise<number> {
  return runClientCommand('alerts', alertsUsage, args, io, {}, [1, 2], async (context) => {
    const [action, file] = context.positionals;
    const out = context.io.stdout;
    if (action === 'check') {
      if (file === undefined) throw new CliError(`alerts check takes a file.\n\n${alertsUsage}`, 2);
      try {
        const config = readAlertsConfig(file, { env: context.io.env });
        out.write(
          `${file} is fine: ${Object.keys(config.channels).length} channels, ${Object.keys(config.owners).length} owners, ${config.rules.length} rules.\n`,
        );
        return 0;
      } catch (error) {
        if (!(error instanceof HeadwaterError)) throw error;
        throw new CliError(error.details?.join('\n') ?? error.message);
      }
    }
    if (action === 'apply') {
      if (file === undefined) throw new CliError(`alerts apply takes a file.\n\n${alertsUsage}`, 2);
      let document: unknown;
      try {
        document = parseYaml(await readFile(file, 'utf8'), { maxAliasCount: 100 });
      } catch (error) {
        throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
      }
      const response = await request(`${context.url}/api/v1/alerts/config`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(document ?? {}),
      });
      if (!response.ok) throw new CliError(`${file}: ${await errorMessageOf(response)}`);
      const applied = (await response.json()) as { updatedAt: string; updatedBy: string };
      if (context.json) writeJson(context.io, applied);
      else out.write(`${file} is in force since ${applied.updatedAt} (set by ${applied.updatedBy}).\n`);
      return 0;
    }
    if (action === 'dry-run') {
      const result = await getJson<{ groups: DryRunGroupJson[] }>(context.url, '/api/v1/alerts/dry-run', {});
      if (context.json) writeJson(context.io, result);
      else if (result.groups.length === 0) out.write('Nothing is broken: no one would be told anything.\n');
      else
        for (const group of result.groups) {
          out.write(
            `${group.signal} ${shortId(group.root)}: ${group.signals.length} signal${group.signals.length === 1 ? '' : 's'}, ` +
              `${group.incident === null ? 'would open an incident' : `in incident ${group.incident}`}, ` +
              `rules ${group.rules.join(', ') || 'none'}, channels ${group.channels.join(', ') || 'none'}\n`,
          );
          for (const recipient of group.recipients) out.write(`${recipientLine(recipient)}\n`);
          for (const { recipient, reason } of group.unroutable)
            out.write(`${recipientLine(recipient)} — not reached: ${reason}\n`);
        }
      return 0;
    }
    throw new CliError(
      `unknown alerts action ${JSON.stringify(action)}; use apply, dry-run or check.\n\n${alertsUsage}`,
      2,
    );
  });
}
