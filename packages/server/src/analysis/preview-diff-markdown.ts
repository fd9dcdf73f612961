/**
 * A preview's diff as a pull request comment (GitHub-flavoured Markdown): a summary table, then each change
 * that reaches someone with its consumers and their owners, then the rest in one list.
 */
import type { PreviewChange, PreviewDiff } from './preview-diff.js';

const ICON: Record<PreviewChange['category'], string> = {
  breaking: '🔴 breaking',
  partial: '🟠 partial',
  'non-breaking': '🟢 non-breaking',
};

/** Text for a table cell: no pipes or line breaks. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

/** The diff as Markdown. */
export function previewDiffMarkdown(diff: PreviewDiff): string {
  const lines: string[] = [];
  const { summary } = diff;
  lines.push(`### Lineage preview \`${diff.preview}\` against production \`${diff.baseNamespace}\``, '');
  lines.push('| | changes |', '|---|---:|');
  lines.push(`| 🔴 breaking | ${summary.breaking} |`);
  lines.push(`| 🟠 partial | ${summary.partial} |`);
  lines.push(`| 🟢 non-breaking | ${summary.nonBreaking} |`);
  lines.push(`| production nodes reached | ${summary.consumers} |`, '');
  if (diff.changes.length === 0) lines.push('No change to production lineage.', '');
  const reaching = diff.changes.filter((change) => change.category !== 'non-breaking');
  for (const change of reaching) {
    lines.push(`#### ${ICON[change.category]}: ${cell(change.detail)}`, '');
    lines.push(
      `\`${change.reason}\` on ${code(change.node)}${change.column ? `, column ${code(change.column)}` : ''}`,
    );
    if (change.consumers.length === 0) {
      lines.push('', 'No production consumer reads it.', '');
      continue;
    }
    lines.push('', '| consumer | distance | owners | breaking columns |', '|---|---:|---|---|');
    for (const consumer of change.consumers) {
      const owners = consumer.owners.map((owner) => owner.name).join(', ') || '—';
      const columns =
        consumer.breakingColumns.map((column) => code(column.split(':').pop() ?? column)).join(', ') ||
        (consumer.coarse ? 'may read it (no column lineage)' : '—');
      lines.push(`| ${code(consumer.nodeId)} | ${consumer.distance} | ${cell(owners)} | ${columns} |`);
    }
    lines.push('');
  }
  const quiet = diff.changes.filter((change) => change.category === 'non-breaking');
  if (quiet.length > 0) {
    lines.push('<details><summary>Non-breaking changes</summary>', '');
    for (const change of quiet) lines.push(`- \`${change.reason}\`: ${cell(change.detail)}`);
    lines.push('', '</details>', '');
  }
  if (diff.mappingCoverage.unmapped.length > 0) {
    lines.push(
      `Preview datasets with no production counterpart (new, or missing from the preview's mapping): ` +
        diff.mappingCoverage.unmapped.map(code).join(', '),
      '',
    );
  }
  return lines.join('\n');
}
