/**
 * Sends webhook messages signed as Standard Webhooks specifies: `webhook-id` (the same on every attempt of one
 * incident transition, so receivers deduplicate), `webhook-timestamp` (seconds, fresh on each attempt) and
 * `webhook-signature`, `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the `whsec_` secret.
 *
 * Signing is the `standardwebhooks` package's, the specification's own reference library, so that the bytes
 * signed and the secret's decoding are exactly what receivers' verifiers (the same library in other languages)
 * expect.
 */
import { Webhook } from 'standardwebhooks';
import type { WebhookChannel } from './config.js';
import type { DeliveryResult, HttpSenderOptions, SendOptions } from './delivery-result.js';
import { postForDelivery } from './delivery-result.js';
import type { WebhookMessage } from './webhook-message.js';

/** Sends one channel's webhook messages. */
export interface WebhookSender {
  send(message: WebhookMessage, options?: SendOptions): Promise<DeliveryResult>;
}

/** The three Standard Webhooks headers of a message sent at `nowMs`, signed with a `whsec_` secret. */
export function webhookHeaders(
  secret: string,
  message: WebhookMessage,
  nowMs: number,
): Record<string, string> {
  const signer = new Webhook(secret);
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(Math.floor(nowMs / 1000)),
    'webhook-signature': signer.sign(message.id, new Date(nowMs), message.body),
  };
}

/**
 * Creates the sender of a webhook channel.
 * @throws Error at once when the channel's secret does not decode (a configuration checked by
 *   `checkAlertsConfig` always does).
 * @example
 * ```ts
 * const sender = createWebhookSender(config.channels.ops as WebhookChannel);
 * const result = await sender.send(renderWebhookMessage(notice, config.explorerUrl));
 * ```
 */
export function createWebhookSender(channel: WebhookChannel, options: HttpSenderOptions = {}): WebhookSender {
  // Decoded once here so that a bad secret fails at construction, not on the first incident.
  new Webhook(channel.secret);
  const what = `webhook channel ${channel.name}`;
  return {
    send(message, sendOptions = {}) {
      const headers = webhookHeaders(channel.secret, message, (sendOptions.now ?? Date.now)());
      return postForDelivery(what, channel.url, message.body, headers, { ...options, ...sendOptions });
    },
  };
}
