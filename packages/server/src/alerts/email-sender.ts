/**
 * Sends e-mail over SMTP with nodemailer, one connection per message (incidents are rare; a pool would hold a
 * connection open for nothing), and classifies the outcome as the HTTP senders do: SMTP 4xx replies and network
 * errors retry, 5xx replies and configuration errors (authentication, TLS) fail. E-mail has no `gone`: a 550 for
 * one mailbox says nothing about the channel.
 */
import nodemailer from 'nodemailer';
import type { EmailChannel } from './config.js';
import type { DeliveryResult, SendOptions } from './delivery-result.js';
import type { EmailMessage } from './email-message.js';

/** Sends one e-mail channel's messages. */
export interface EmailSender {
  send(message: EmailMessage, options?: SendOptions): Promise<DeliveryResult>;
  /** Releases the transport. */
  close(): void;
}

/** Options of {@link createEmailSender}. */
export interface EmailSenderOptions {
  /**
   * How long connecting, the greeting and each later wait on the server may take.
   * @default 10000
   */
  readonly timeoutMs?: number;
  /** The name this side gives in EHLO. @default the host's name */
  readonly clientName?: string;
}

const RETRY_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'EPROXY', 'EABORT', 'EPROTOCOL']);

/** The result of a nodemailer error: see the module comment. */
export function classifySmtpError(error: unknown, what: string): DeliveryResult {
  const { code, responseCode, response } = error as {
    code?: unknown;
    responseCode?: unknown;
    response?: unknown;
  };
  const reply =
    typeof response === 'string' ? response : error instanceof Error ? error.message : String(error);
  const described = `${what}: ${typeof code === 'string' ? `${code} ` : ''}${reply}`;
  if (typeof responseCode === 'number') {
    if (responseCode >= 400 && responseCode < 500)
      return {
        status: 'retry',
        error: new Error(`${described}; the server will be asked again.`, { cause: error }),
        statusCode: responseCode,
      };
    return {
      status: 'failed',
      error: new Error(
        `${described}; the server refused the message. Check the channel's settings and addresses.`,
        { cause: error },
      ),
      statusCode: responseCode,
    };
  }
  if (typeof code === 'string' && !RETRY_CODES.has(code))
    return {
      status: 'failed',
      error: new Error(
        `${described}. Check the channel's SMTP settings (host, port, secure, user, password).`,
        { cause: error },
      ),
    };
  return { status: 'retry', error: new Error(`${described}; it will be tried again.`, { cause: error }) };
}

/**
 * Creates the sender of an e-mail channel.
 * @example
 * ```ts
 * const sender = createEmailSender(channel);
 * const result = await sender.send(renderEmail(notice, { from: channel.from, to: channel.to }));
 * sender.close();
 * ```
 */
export function createEmailSender(channel: EmailChannel, options: EmailSenderOptions = {}): EmailSender {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const what = `email channel ${channel.name} (${channel.smtp.host}:${channel.smtp.port})`;
  const transport = nodemailer.createTransport({
    host: channel.smtp.host,
    port: channel.smtp.port,
    secure: channel.smtp.secure,
    ...(channel.smtp.user === undefined
      ? {}
      : {
          auth: {
            user: channel.smtp.user,
            ...(channel.smtp.password === undefined ? {} : { pass: channel.smtp.password }),
          },
        }),
    ...(options.clientName === undefined ? {} : { name: options.clientName }),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return {
    async send(message, sendOptions = {}) {
      if (message.to.length === 0)
        return {
          status: 'failed',
          error: new Error(`${what}: the message has no recipients; nothing was sent.`),
        };
      try {
        const info = await transport.sendMail({
          from: message.from,
          to: [...message.to],
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: `<${message.messageId}>`,
          ...(message.inReplyTo === undefined ? {} : { inReplyTo: `<${message.inReplyTo}>` }),
          ...(message.references === undefined
            ? {}
            : { references: message.references.map((id) => `<${id}>`) }),
          headers: { ...message.headers },
          ...(sendOptions.now === undefined ? {} : { date: new Date(sendOptions.now()) }),
          ...(sendOptions.signal === undefined ? {} : { signal: sendOptions.signal }),
        });
        const rejected = info.rejected.map(String);
        return rejected.length === 0
          ? { status: 'delivered', detail: info.response }
          : { status: 'delivered', detail: `${info.response}; refused for ${rejected.join(', ')}` };
      } catch (error) {
        return classifySmtpError(error, what);
      }
    },
    close: () => transport.close(),
  };
}
