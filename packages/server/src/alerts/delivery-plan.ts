/**
 * From a notice to the messages it sends: which channels carry it (one delivery per channel, whatever the number
 * of recipients behind it), what each message is, and one sender for all channels.
 *
 * The intended flow, for the engineer wiring storage: in the event's transaction, `planDeliveries` and
 * `renderDelivery` give one outbox row per delivery (its `key` unique, its message stored as JSON); the worker
 * later sends each row's message with `createChannelSenders(config).send` inside `deliverWithRetry`. Rendering
 * at write time means a retry, or another replica, sends the very bytes first written.
 *
 * Routing: a recipient at a channel goes to that channel; one at an e-mail address goes to the configuration's
 * `emailChannel`. An e-mail channel's own `to` is added when that channel is itself a recipient (named by an owner
 * or a rule). Everyone an e-mail goes to is in one message's `To`, told of each recipient's reasons.
 */
import type { AlertsConfig, Channel } from './config.js';
import type { DeliveryResult, HttpSenderOptions, SendOptions } from './delivery-result.js';
import type { EmailMessage } from './email-message.js';
import { renderEmail } from './email-message.js';
import type { EmailSender, EmailSenderOptions } from './email-sender.js';
import { createEmailSender } from './email-sender.js';
import type { IncidentNotice, Recipient } from './notice.js';
import { sameAddress } from './notice.js';
import type { SlackMessage } from './slack-message.js';
import { renderSlackMessage } from './slack-message.js';
import { createSlackSender } from './slack-sender.js';
import type { WebhookMessage } from './webhook-message.js';
import { renderWebhookMessage } from './webhook-message.js';
import { createWebhookSender } from './webhook-sender.js';

/** One channel's share of a notice. */
export interface PlannedDelivery {
  /** `<incident>/<transition>/<channel>`: unique, and the same however often it is planned (the outbox's key). */
  readonly key: string;
  readonly channel: string;
  /** The recipients told through this channel. */
  readonly recipients: readonly Recipient[];
  /** For an e-mail channel, the addresses of its message; empty otherwise. */
  readonly to: readonly string[];
}

/** A recipient that no channel can reach, and why (for dry runs and logs). */
export interface UnroutableRecipient {
  readonly recipient: Recipient;
  readonly reason: string;
}

/** The deliveries of a notice. */
export interface DeliveryPlan {
  readonly deliveries: readonly PlannedDelivery[];
  readonly unroutable: readonly UnroutableRecipient[];
}

/** The deliveries of a notice under a configuration, in the order of its first recipient for each channel. */
export function planDeliveries(notice: IncidentNotice, config: AlertsConfig): DeliveryPlan {
  const byChannel = new Map<string, { recipients: Recipient[]; to: string[] }>();
  const unroutable: UnroutableRecipient[] = [];
  const share = (channel: string): { recipients: Recipient[]; to: string[] } => {
    let found = byChannel.get(channel);
    if (found === undefined) byChannel.set(channel, (found = { recipients: [], to: [] }));
    return found;
  };
  const addTo = (to: string[], address: string): void => {
    if (!to.some((known) => known.toLowerCase() === address.toLowerCase())) to.push(address);
  };
  const seen: Recipient[] = [];
  for (const recipient of notice.recipients) {
    // Each address once per transition, with the reasons of every entry that named it.
    const earlier = seen.findIndex((other) => sameAddress(other.address, recipient.address));
    if (earlier >= 0) {
      seen[earlier] = {
        address: seen[earlier]!.address,
        reasons: [...seen[earlier]!.reasons, ...recipient.reasons],
      };
    } else seen.push(recipient);
  }
  for (const recipient of seen) {
    const address = recipient.address;
    if ('channel' in address) {
      const channel = Object.hasOwn(config.channels, address.channel)
        ? config.channels[address.channel]
        : undefined;
      if (channel === undefined) {
        unroutable.push({ recipient, reason: `there is no channel ${address.channel} in the configuration` });
        continue;
      }
      const part = share(channel.name);
      part.recipients.push(recipient);
      if (channel.type === 'email') for (const to of channel.to) addTo(part.to, to);
    } else {
      if (config.emailChannel === undefined) {
        unroutable.push({ recipient, reason: 'no emailChannel is configured to send e-mail through' });
        continue;
      }
      const part = share(config.emailChannel);
      part.recipients.push(recipient);
      addTo(part.to, address.email);
    }
  }
  const deliveries = [...byChannel].map(([channel, part]): PlannedDelivery => ({
    key: `${notice.incidentId}/${notice.transition.id}/${channel}`,
    channel,
    recipients: part.recipients,
    to: part.to,
  }));
  return { deliveries, unroutable };
}

/** A rendered message for one channel: what an outbox row stores, as JSON. */
export type OutboundMessage =
  | { readonly type: 'webhook'; readonly channel: string; readonly message: WebhookMessage }
  | { readonly type: 'slack'; readonly channel: string; readonly message: SlackMessage }
  | { readonly type: 'email'; readonly channel: string; readonly message: EmailMessage };

/**
 * The message of one planned delivery.
 * @throws Error when the delivery's channel is not in the configuration (plan and render with the same one).
 */
export function renderDelivery(
  notice: IncidentNotice,
  delivery: PlannedDelivery,
  config: AlertsConfig,
): OutboundMessage {
  const channel = channelOf(config, delivery.channel);
  if (channel === undefined)
    throw new Error(
      `renderDelivery: there is no channel ${delivery.channel}; plan and render with the same configuration.`,
    );
  const explorerUrl = config.explorerUrl;
  switch (channel.type) {
    case 'webhook':
      return { type: 'webhook', channel: channel.name, message: renderWebhookMessage(notice, explorerUrl) };
    case 'slack':
      return {
        type: 'slack',
        channel: channel.name,
        message: renderSlackMessage(notice, { recipients: delivery.recipients, explorerUrl }),
      };
    case 'email':
      return {
        type: 'email',
        channel: channel.name,
        message: renderEmail(notice, {
          from: channel.from,
          to: delivery.to,
          recipients: delivery.recipients,
          explorerUrl,
        }),
      };
  }
}

/** Sends rendered messages through the configuration's channels. */
export interface ChannelSenders {
  /** Sends one message; `failed` when its channel is no longer configured, or is of another type now. */
  send(message: OutboundMessage, options?: SendOptions): Promise<DeliveryResult>;
  /** Releases the e-mail transports. */
  close(): void;
}

/** Options of {@link createChannelSenders}. */
export interface ChannelSendersOptions extends HttpSenderOptions, EmailSenderOptions {}

/** One sender per channel, made on first use. */
export function createChannelSenders(
  config: AlertsConfig,
  options: ChannelSendersOptions = {},
): ChannelSenders {
  const emailSenders = new Map<string, EmailSender>();
  return {
    send(outbound, sendOptions = {}) {
      const channel = channelOf(config, outbound.channel);
      if (channel === undefined || channel.type !== outbound.type)
        return Promise.resolve({
          status: 'failed',
          error: new Error(
            `The ${outbound.type} channel ${outbound.channel} is ${channel === undefined ? 'no longer configured' : `now a ${channel.type} channel`}; ` +
              'the message was not sent.',
          ),
        });
      switch (outbound.type) {
        case 'webhook':
          return createWebhookSender(channel as Extract<Channel, { type: 'webhook' }>, options).send(
            outbound.message,
            sendOptions,
          );
        case 'slack':
          return createSlackSender(channel as Extract<Channel, { type: 'slack' }>, options).send(
            outbound.message,
            sendOptions,
          );
        case 'email': {
          let sender = emailSenders.get(channel.name);
          if (sender === undefined) {
            sender = createEmailSender(channel as Extract<Channel, { type: 'email' }>, options);
            emailSenders.set(channel.name, sender);
          }
          return sender.send(outbound.message, sendOptions);
        }
      }
    },
    close() {
      for (const sender of emailSenders.values()) sender.close();
      emailSenders.clear();
    },
  };
}

const channelOf = (config: AlertsConfig, name: string): Channel | undefined =>
  Object.hasOwn(config.channels, name) ? config.channels[name] : undefined;
