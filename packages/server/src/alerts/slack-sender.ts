/**
 * Sends messages to a Slack incoming webhook. Slack answers 200 `ok`; 410 (`channel_is_archived`) means the
 * channel is gone; 429 carries `Retry-After`; 4xx such as 400 `invalid_payload` or 403 `action_prohibited` fail,
 * with Slack's reason in the error.
 */
import type { SlackChannel } from './config.js';
import type { DeliveryResult, HttpSenderOptions, SendOptions } from './delivery-result.js';
import { postForDelivery } from './delivery-result.js';
import type { SlackMessage } from './slack-message.js';

/** Sends one Slack channel's messages. */
export interface SlackSender {
  send(message: SlackMessage, options?: SendOptions): Promise<DeliveryResult>;
}

/** Creates the sender of a Slack channel. */
export function createSlackSender(channel: SlackChannel, options: HttpSenderOptions = {}): SlackSender {
  const what = `Slack channel ${channel.name}`;
  return {
    send: (message, sendOptions = {}) =>
      postForDelivery(what, channel.url, JSON.stringify(message), {}, { ...options, ...sendOptions }),
  };
}
