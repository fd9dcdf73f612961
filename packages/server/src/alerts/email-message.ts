/**
 * The e-mail of an incident transition: subject, text and HTML bodies, and the headers that thread every
 * transition of one incident into one conversation.
 *
 * Threading: the opening's `Message-ID` is the incident's own (`incident.<id>@<domain>`); each later transition
 * has its own id and names the opening in `In-Reply-To` and `References`, so it threads even for a recipient who
 * was added later. The subject stays the incident's, with `Re:` on later transitions, because some clients
 * (Gmail) also split threads whose subjects differ; the transition is said in the body's first line instead.
 * A resent transition keeps its `Message-ID`, so a mail client shows an at-least-once duplicate once.
 */
import type { IncidentNotice, Recipient } from './notice.js';
import {
  emailMessageId,
  emailThreadId,
  nodeLabel,
  nodeLink,
  noticeHeadline,
  noticeLinks,
  reasonPhrases,
  impactedInOrder,
  hopsPhrase,
  rootCauseSentence,
  transitionLabel,
} from './notice.js';

/** An e-mail ready for SMTP. Message ids are without angle brackets. */
export interface EmailMessage {
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  readonly messageId: string;
  readonly inReplyTo?: string;
  readonly references?: readonly string[];
  /** More headers: `Auto-Submitted` (RFC 3834, so that auto-responders stay quiet) and the incident's id. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Options of {@link renderEmail}. */
export interface EmailOptions {
  /** The sender, `addr` or `Name <addr>`; its domain is the domain of the message ids. */
  readonly from: string;
  readonly to: readonly string[];
  /** The recipients this e-mail goes to, whose reasons it lists. @default all of the notice's */
  readonly recipients?: readonly Recipient[];
  readonly explorerUrl?: string | undefined;
  /** How many impacted datasets and jobs are listed; the rest are counted. @default 25 */
  readonly maxListed?: number;
}

/** The domain of an address (`Name <ann@example.com>` gives `example.com`). */
export function addressDomain(address: string): string {
  const bare = /<([^<>]+)>\s*$/.exec(address)?.[1] ?? address;
  const domain = bare.slice(bare.lastIndexOf('@') + 1).trim();
  return domain === '' ? 'headwater.invalid' : domain;
}

/** Header values on one line: a dataset name with a newline must not start a header of its own. */
const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The e-mail of a notice. */
export function renderEmail(notice: IncidentNotice, options: EmailOptions): EmailMessage {
  const domain = addressDomain(options.from);
  const explorerUrl = options.explorerUrl;
  const maxListed = options.maxListed ?? 25;
  const links = noticeLinks(notice, explorerUrl);
  const headline = noticeHeadline(notice);
  const state = `${transitionLabel(notice.transition)} at ${notice.transition.at}`;
  const root = notice.rootCause;
  const impacted = impactedInOrder(notice);
  const listed = impacted.slice(0, maxListed);
  const more = impacted.length - listed.length;
  const reasons = reasonPhrases(options.recipients ?? notice.recipients);
  const columnsOf = (columns: readonly string[] | undefined): string =>
    columns === undefined || columns.length === 0 ? '' : ` (${columns.join(', ')})`;

  const text: string[] = [state, '', rootCauseSentence(notice)];
  if (root.errorMessage !== undefined)
    text.push('', ...root.errorMessage.split('\n').map((line) => `  ${line}`));
  if (notice.transition.note !== undefined) text.push('', notice.transition.note);
  if (impacted.length > 0) {
    text.push('', `Impacted downstream (${impacted.length}):`);
    for (const { node, type } of listed)
      text.push(`  - ${nodeLabel(node)}${columnsOf(node.columns)}, ${type}, ${hopsPhrase(node.depth)}`);
    if (more > 0) text.push(`  ...and ${more} more`);
  }
  if (reasons.length > 0) text.push('', 'You are told because:', ...reasons.map((reason) => `  - ${reason}`));
  if (links.incident !== undefined) text.push('', `Incident: ${links.incident}`);
  text.push('', `Incident ${notice.incidentId}, opened ${notice.openedAt}.`);

  const html: string[] = [
    `<p><strong>${escapeHtml(state)}</strong></p>`,
    `<p>${escapeHtml(rootCauseSentence(notice))}</p>`,
  ];
  if (root.errorMessage !== undefined) html.push(`<pre>${escapeHtml(root.errorMessage)}</pre>`);
  if (notice.transition.note !== undefined)
    html.push(`<p><em>${escapeHtml(notice.transition.note)}</em></p>`);
  if (impacted.length > 0) {
    html.push(`<p>Impacted downstream (${impacted.length}):</p>`, '<ul>');
    for (const { node, type } of listed) {
      const url = nodeLink(explorerUrl, type, node);
      const label = escapeHtml(nodeLabel(node));
      html.push(
        `<li>${url === undefined ? label : `<a href="${escapeHtml(url)}">${label}</a>`}` +
          `${escapeHtml(columnsOf(node.columns))}, ${type}, ${hopsPhrase(node.depth)}</li>`,
      );
    }
    if (more > 0) html.push(`<li>…and ${more} more</li>`);
    html.push('</ul>');
  }
  if (reasons.length > 0)
    html.push(
      '<p>You are told because:</p>',
      '<ul>',
      ...reasons.map((reason) => `<li>${escapeHtml(reason)}</li>`),
      '</ul>',
    );
  if (links.incident !== undefined)
    html.push(`<p><a href="${escapeHtml(links.incident)}">Open the incident</a></p>`);
  html.push(
    `<p style="color:#666">Incident ${escapeHtml(notice.incidentId)}, opened ${escapeHtml(notice.openedAt)}.</p>`,
  );

  const thread = emailThreadId(notice, domain);
  const opening = notice.transition.kind === 'opened';
  return {
    from: options.from,
    to: [...options.to],
    subject: oneLine(`${opening ? '' : 'Re: '}[Headwater] ${headline}`),
    text: `${text.join('\n')}\n`,
    html: `<!doctype html><html><body>${html.join('\n')}</body></html>`,
    messageId: emailMessageId(notice, domain),
    ...(opening ? {} : { inReplyTo: thread, references: [thread] }),
    headers: { 'Auto-Submitted': 'auto-generated', 'X-Headwater-Incident': oneLine(notice.incidentId) },
  };
}
