/**
 * The JSON a webhook channel receives, in the envelope Standard Webhooks recommends (`type`, `timestamp`, `data`).
 * Its body depends on the notice alone, not on the channel, so that one `webhook-id` always names the same bytes.
 */
import type { IncidentNotice, NoticeLinks } from './notice.js';
import { byDepth, noticeHeadline, noticeLinks, webhookId } from './notice.js';

/** The body of a webhook message. */
export interface WebhookPayload {
  /** `incident.opened`, `incident.updated`, `incident.acknowledged` or `incident.resolved`. */
  readonly type: `incident.${IncidentNotice['transition']['kind']}`;
  /** When the transition happened, ISO 8601. */
  readonly timestamp: string;
  readonly data: {
    /** The same as the `webhook-id` header, for receivers that log bodies alone. */
    readonly id: string;
    readonly headline: string;
    readonly incident: {
      readonly id: string;
      readonly signal: IncidentNotice['signal'];
      readonly openedAt: string;
    };
    readonly transition: IncidentNotice['transition'];
    readonly rootCause: IncidentNotice['rootCause'];
    readonly impacted: IncidentNotice['impacted'];
    readonly recipients: IncidentNotice['recipients'];
    readonly links: NoticeLinks;
  };
}

/** The payload of a notice, impacted nodes nearest first. */
export function webhookPayload(notice: IncidentNotice, explorerUrl?: string): WebhookPayload {
  return {
    type: `incident.${notice.transition.kind}`,
    timestamp: notice.transition.at,
    data: {
      id: webhookId(notice),
      headline: noticeHeadline(notice),
      incident: { id: notice.incidentId, signal: notice.signal, openedAt: notice.openedAt },
      transition: notice.transition,
      rootCause: notice.rootCause,
      impacted: { datasets: byDepth(notice.impacted.datasets), jobs: byDepth(notice.impacted.jobs) },
      recipients: notice.recipients,
      links: noticeLinks(notice, explorerUrl),
    },
  };
}

/** A webhook message ready to sign and send: its id and its body, serialised once so every attempt signs the same. */
export interface WebhookMessage {
  readonly id: string;
  readonly body: string;
}

/** The webhook message of a notice. */
export function renderWebhookMessage(notice: IncidentNotice, explorerUrl?: string): WebhookMessage {
  return { id: webhookId(notice), body: JSON.stringify(webhookPayload(notice, explorerUrl)) };
}
