/**
 * A data journey (journey.ts) for people: Markdown, CSV (one row per hop) and a printable HTML report for an
 * auditor. Each carries the report's bounds and its SHA-256, so that a copy can be checked against the store.
 */
import type { JourneyHop, JourneyJson, JourneyNode } from './journey.js';

const ownersText = (node: JourneyNode | undefined): string =>
  node === undefined || node.owners.length === 0
    ? '—'
    : node.owners
        .map(
          (period) =>
            `${period.owners.map((owner) => owner.name).join(', ') || 'nobody'} (from ${period.from})`,
        )
        .join('; ');

const how = (hop: JourneyHop): string =>
  hop.transformations.length === 0
    ? '—'
    : hop.transformations.map((t) => `${t.type}/${t.subtype}${t.masking ? ' (masked)' : ''}`).join(', ');

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** The journey as Markdown: its bounds, the nodes with their owners and tags, then a table of hops. */
export function journeyMarkdown(report: JourneyJson): string {
  const { bounds } = report;
  const lines = [
    `### Data journey of \`${report.start}\``,
    '',
    `${bounds.direction} from ${bounds.from} to ${bounds.to}, at most ${bounds.depth} hops` +
      (bounds.tags.length > 0 ? `; tags ${bounds.tags.join(', ')}` : '') +
      `. ${report.nodes.length - 1} nodes reached by ${report.hops.length} hops; ${report.transfers} between jurisdictions.`,
    '',
    '| node | distance | jurisdiction | owners | tags |',
    '|---|---:|---|---|---|',
    ...report.nodes.map(
      (node) =>
        `| \`${node.nodeId}\` | ${node.distance} | ${node.jurisdiction ?? '—'} | ${cell(ownersText(node))} | ${node.tags.join(', ') || '—'} |`,
    ),
    '',
    '| from | to | job | how | runs | first | last | transfer |',
    '|---|---|---|---|---:|---|---|---|',
    ...report.hops.map(
      (hop) =>
        `| \`${hop.from}\` | \`${hop.to}\` | \`${hop.job}\` | ${how(hop)} | ${hop.runs.count} | ${hop.runs.first} | ` +
        `${hop.runs.last} | ${hop.transfer ? 'yes' : ''} |`,
    ),
    '',
    `SHA-256 of the report: \`${report.sha256}\``,
  ];
  return `${lines.join('\n')}\n`;
}

const csvField = (value: string | number | boolean): string => {
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** The hops as CSV, with the owners and jurisdictions of both ends and the evidence of each. */
export function journeyCsv(report: JourneyJson): string {
  const nodes = new Map(report.nodes.map((node) => [node.nodeId, node]));
  const header = [
    'distance',
    'from',
    'to',
    'job',
    'transformations',
    'masked',
    'runs',
    'first',
    'last',
    'sample_runs',
    'event_ids',
    'job_versions',
    'from_jurisdiction',
    'to_jurisdiction',
    'transfer',
    'to_owners',
    'to_tags',
  ];
  const rows = report.hops.map((hop) => {
    const to = nodes.get(hop.to) ?? nodes.get(hop.from);
    return [
      hop.distance,
      hop.from,
      hop.to,
      hop.job,
      how(hop),
      hop.masked,
      hop.runs.count,
      hop.runs.first,
      hop.runs.last,
      hop.runs.samples.map((sample) => sample.runId).join(' '),
      hop.runs.samples
        .flatMap((sample) => [sample.readEventId, sample.writeEventId])
        .filter((id) => id !== null)
        .join(' '),
      hop.jobVersions.join(' '),
      nodes.get(hop.from)?.jurisdiction ?? '',
      nodes.get(hop.to)?.jurisdiction ?? '',
      hop.transfer,
      ownersText(to),
      to?.tags.join(' ') ?? '',
    ].map(csvField);
  });
  return `${[header, ...rows].map((row) => row.join(',')).join('\n')}\n# sha256 ${report.sha256}\n`;
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A self-contained HTML page for printing: bounds, nodes, hops with their evidence, and the hash. */
export function journeyHtml(report: JourneyJson): string {
  const { bounds } = report;
  const e = escapeHtml;
  const nodeRows = report.nodes
    .map(
      (node) =>
        `<tr><td><code>${e(node.nodeId)}</code></td><td>${node.distance}</td><td>${e(node.jurisdiction ?? '—')}</td>` +
        `<td>${e(ownersText(node))}</td><td>${e(node.tags.join(', ') || '—')}</td>` +
        `<td>${e(node.retention.map((item) => `${item.facet} at ${item.at}`).join('; ') || '—')}</td></tr>`,
    )
    .join('\n');
  const hopRows = report.hops
    .map(
      (hop) =>
        `<tr${hop.transfer ? ' class="transfer"' : ''}><td>${hop.distance}</td><td><code>${e(hop.from)}</code></td>` +
        `<td><code>${e(hop.to)}</code></td><td><code>${e(hop.job)}</code></td><td>${e(how(hop))}</td>` +
        `<td>${hop.runs.count}<br><small>${e(hop.runs.first)} – ${e(hop.runs.last)}</small></td>` +
        `<td><small>${e(hop.runs.samples.map((s) => `${s.runId} (events ${s.readEventId ?? '?'}, ${s.writeEventId ?? '?'})`).join('; '))}</small></td>` +
        `<td><small>${e([...hop.jobVersions, ...hop.sourceCode].join('; ') || '—')}</small></td>` +
        `<td>${hop.transfer ? 'yes' : ''}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Data journey of ${e(report.start)}</title>
<style>
body { font: 12px/1.4 system-ui, sans-serif; margin: 2em; color: #111; }
table { border-collapse: collapse; width: 100%; margin: 1em 0 2em; }
th, td { border: 1px solid #999; padding: 4px 6px; text-align: left; vertical-align: top; }
th { background: #eee; }
tr.transfer td { background: #fde8e8; }
code { font-size: 11px; word-break: break-all; }
@media print { body { margin: 0; } tr { break-inside: avoid; } }
</style></head>
<body>
<h1>Data journey of <code>${e(report.start)}</code></h1>
<p>${e(bounds.direction)} from ${e(bounds.from)} to ${e(bounds.to)}, at most ${bounds.depth} hops${
    bounds.tags.length > 0 ? `; tags ${e(bounds.tags.join(', '))}` : ''
  }. ${report.nodes.length - 1} nodes reached by ${report.hops.length} hops; ${report.transfers} between jurisdictions.</p>
<h2>Nodes</h2>
<table><thead><tr><th>node</th><th>distance</th><th>jurisdiction</th><th>owners</th><th>tags</th><th>retention</th></tr></thead>
<tbody>
${nodeRows}
</tbody></table>
<h2>Hops</h2>
<table><thead><tr><th>#</th><th>from</th><th>to</th><th>job</th><th>how</th><th>runs</th><th>evidence</th><th>versions</th><th>transfer</th></tr></thead>
<tbody>
${hopRows}
</tbody></table>
<p>SHA-256 of the report's canonical JSON: <code>${e(report.sha256)}</code></p>
</body></html>
`;
}
