/**
 * The message a Slack incoming webhook receives: Block Kit blocks, and a `text` fallback that notifications and
 * clients without blocks show. Only the reasons of the recipients told through this channel are listed, since
 * the people reading a channel want to know why it is told.
 *
 * Slack's limits are kept (a header is at most 150 characters, a section's text 3000) and its mrkdwn escaped:
 * a dataset named `<!channel>` must not ping anyone.
 */
import type { IncidentNotice, Recipient, TransitionKind } from './notice.js';
import {
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

/** A Slack Block Kit block, as far as these messages use them. */
export type SlackBlock =
  | { readonly type: 'header'; readonly text: SlackText }
  | { readonly type: 'section'; readonly text: SlackText }
  | { readonly type: 'context'; readonly elements: readonly SlackText[] }
  | {
      readonly type: 'actions';
      readonly elements: readonly {
        readonly type: 'button';
        readonly text: SlackText;
        readonly url: string;
        readonly action_id: string;
      }[];
    };

/** Text in a block. */
export interface SlackText {
  readonly type: 'plain_text' | 'mrkdwn';
  readonly text: string;
  readonly emoji?: boolean;
}

/** The JSON body POSTed to an incoming webhook. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly SlackBlock[];
}

/** Options of {@link renderSlackMessage}. */
export interface SlackMessageOptions {
  /** The recipients told through this channel, whose reasons the message lists. @default all of the notice's */
  readonly recipients?: readonly Recipient[];
  /** The explorer's base URL; without it the message has no links. */
  readonly explorerUrl?: string | undefined;
  /**
   * How many impacted datasets and jobs are listed; the rest are counted.
   * @default 10
   */
  readonly maxListed?: number;
}

const EMOJI: Readonly<Record<TransitionKind, string>> = {
  opened: ':red_circle:',
  updated: ':large_orange_circle:',
  acknowledged: ':eyes:',
  resolved: ':white_check_mark:',
};

const HEADER_MAX = 150;
const SECTION_MAX = 3000;

/** Escapes text for mrkdwn: Slack reads `<`, `>` and `&` as markup (links, mentions). */
export const slackEscape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const link = (url: string | undefined, label: string): string =>
  url === undefined ? slackEscape(label) : `<${url}|${slackEscape(label)}>`;

/** The Slack message of a notice. */
export function renderSlackMessage(notice: IncidentNotice, options: SlackMessageOptions = {}): SlackMessage {
  const explorerUrl = options.explorerUrl;
  const maxListed = options.maxListed ?? 10;
  const links = noticeLinks(notice, explorerUrl);
  const headline = noticeHeadline(notice);
  const state = transitionLabel(notice.transition);
  const root = notice.rootCause;

  const rootLines = [`*${slackEscape(state)}* · ${slackEscape(rootCauseSentence(notice))}`];
  if (root.errorMessage !== undefined)
    rootLines.push(
      ...cut(root.errorMessage, 1000)
        .split('\n')
        .slice(0, 10)
        .map((line) => `> ${slackEscape(line)}`),
    );
  if (notice.transition.note !== undefined) rootLines.push(`_${slackEscape(notice.transition.note)}_`);

  const impacted = impactedInOrder(notice);
  const blocks: SlackBlock[] = [
    {
      type: 'header',
      text: {
        type: 'plain_text',
        text: cut(`${EMOJI[notice.transition.kind]} ${headline}`, HEADER_MAX),
        emoji: true,
      },
    },
    { type: 'section', text: { type: 'mrkdwn', text: cut(rootLines.join('\n'), SECTION_MAX) } },
  ];
  if (impacted.length > 0) {
    const lines = impacted.slice(0, maxListed).map(({ node, type }) => {
      const columns =
        node.columns === undefined || node.columns.length === 0
          ? ''
          : ` (${node.columns.map(slackEscape).join(', ')})`;
      return `• ${link(nodeLink(explorerUrl, type, node), nodeLabel(node))}${columns} · ${hopsPhrase(node.depth)}`;
    });
    if (impacted.length > maxListed) lines.push(`…and ${impacted.length - maxListed} more`);
    const counts = `${count(notice.impacted.datasets.length, 'dataset')}, ${count(notice.impacted.jobs.length, 'job')}`;
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: cut(`*Impacted downstream:* ${counts}\n${lines.join('\n')}`, SECTION_MAX),
      },
    });
  }
  const reasons = reasonPhrases(options.recipients ?? notice.recipients);
  if (reasons.length > 0)
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: cut(`Told here because ${reasons.map(slackEscape).join('; ')}.`, SECTION_MAX),
        },
      ],
    });
  if (links.incident !== undefined)
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Open incident' },
          url: links.incident,
          action_id: 'open-incident',
        },
      ],
    });
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: slackEscape(
          `Incident ${notice.incidentId} · ${notice.transition.kind} ${notice.transition.at}`,
        ),
      },
    ],
  });

  const impactSummary =
    impacted.length === 0 ? '' : ` (${count(notice.impacted.datasets.length, 'dataset')} downstream)`;
  return { text: slackEscape(`${state}: ${headline}${impactSummary}`), blocks };
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
