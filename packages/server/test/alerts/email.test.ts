import type { AddressObject } from 'mailparser';
import { describe, expect, it } from 'vitest';
import type { AlertsConfig } from '../../src/alerts/config.js';
import { parseAlertsConfig } from '../../src/alerts/config.js';
import { deliverWithRetry } from '../../src/alerts/deliver.js';
import { createChannelSenders, planDeliveries, renderDelivery } from '../../src/alerts/delivery-plan.js';
import type { EmailMessage } from '../../src/alerts/email-message.js';
import { createEmailSender } from '../../src/alerts/email-sender.js';
import type { IncidentNotice } from '../../src/alerts/notice.js';
import { loadOrdersNotice, startSmtp, type Received } from './fixtures.js';

function configFor(port: number): AlertsConfig {
  const yaml = `
explorerUrl: https://lineage.example.com
channels:
  mail:
    type: email
    smtp:
      host: 127.0.0.1
      port: ${port}
      secure: false
      user: alerts
      password: \${SMTP_PASSWORD}
    from: Headwater <alerts@headwater.example>
    to: oncall@example.com
  finance-slack: { type: slack, url: "http://127.0.0.1:9/unused" }
  ops: { type: slack, url: "http://127.0.0.1:9/unused" }
owners:
  team:finance: [finance-slack, finance@example.com]
  user:ann: ann@example.com
rules:
  - { name: everything, on: [run_failed], notify: { channels: [ops] } }
`;
  return parseAlertsConfig(yaml, 'alerts.yml', { env: { SMTP_PASSWORD: 'smtp-secret' } });
}

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(field) ? field : field === undefined ? [] : [field]).flatMap((group) =>
    group.value.map((one) => one.address ?? ''),
  );

async function sendEmailOf(notice: IncidentNotice, config: AlertsConfig) {
  const delivery = planDeliveries(notice, config).deliveries.find((planned) => planned.channel === 'mail');
  if (delivery === undefined) throw new Error('no e-mail delivery planned');
  const outbound = renderDelivery(notice, delivery, config);
  const senders = createChannelSenders(config, { timeoutMs: 5000 });
  try {
    return {
      delivery,
      outbound,
      report: await deliverWithRetry((_, options) => senders.send(outbound, options), {
        baseDelayMs: 5,
        maxDelayMs: 20,
      }),
    };
  } finally {
    senders.close();
  }
}

describe('e-mail over SMTP', () => {
  it('sends each transition to the owners, logged in, threaded under the opening', async () => {
    const smtp = await startSmtp();
    const config = configFor(smtp.port);

    const opened = await sendEmailOf(loadOrdersNotice('opened'), config);
    const resolved = await sendEmailOf(loadOrdersNotice('resolved'), config);

    expect(opened.report.result.status).toBe('delivered');
    expect(resolved.report.result.status).toBe('delivered');
    expect(opened.delivery.key).toBe('inc-7f3a/1/mail');
    expect(smtp.received).toHaveLength(2);
    const [first, second] = smtp.received as [Received, Received];

    // The owners' addresses, each once; the channel's own `to` only when the channel itself is a recipient.
    expect(first.envelopeTo).toEqual(['finance@example.com', 'ann@example.com']);
    expect(addresses(first.mail.to)).toEqual(['finance@example.com', 'ann@example.com']);
    expect(addresses(first.mail.from)).toEqual(['alerts@headwater.example']);
    expect(first.user).toBe('alerts');
    expect(smtp.logins).toEqual(['alerts:smtp-secret', 'alerts:smtp-secret']);

    expect(first.mail.subject).toBe('[Headwater] Run failed: demo/load_orders');
    expect(second.mail.subject).toBe('Re: [Headwater] Run failed: demo/load_orders');
    expect(first.mail.messageId).toBe('<incident.inc-7f3a@headwater.example>');
    expect(first.mail.inReplyTo).toBeUndefined();
    expect(second.mail.messageId).toBe('<incident.inc-7f3a.4@headwater.example>');
    expect(second.mail.inReplyTo).toBe(first.mail.messageId);
    expect(second.mail.references).toBe(first.mail.messageId);
    expect(first.mail.headers.get('auto-submitted')).toBe('auto-generated');
    expect(first.mail.headers.get('x-headwater-incident')).toBe('inc-7f3a');

    expect(first.mail.text).toContain('Opened at 2026-03-01T06:00:05.000Z');
    expect(first.mail.text).toContain(
      'team:finance owns postgres://db:5432/finance.orders (1 hop downstream, columns amount)',
    );
    expect(first.mail.text).toContain(
      'user:ann owns postgres://db:5432/dashboards.revenue (5 hops downstream)',
    );
    // Reasons for the Slack channels are theirs, not this e-mail's.
    expect(first.mail.text).not.toContain('the rule everything');
    expect(first.mail.html).toContain(
      '<a href="https://lineage.example.com/datasets/postgres%3A%2F%2Fdb%3A5432/finance.orders">postgres://db:5432/finance.orders</a>',
    );
    expect(first.mail.html).toContain('column &quot;amount&quot; does not exist');
    expect(second.mail.text).toMatch(/^Resolved at 2026-03-01T07:00:00\.000Z\n/);
    expect(second.mail.text).toContain('The next run of demo/load_orders completed.');
  });

  it("sends to the channel's own `to` when an owner names the channel", async () => {
    const smtp = await startSmtp();
    const config = configFor(smtp.port);
    const notice = loadOrdersNotice('acknowledged', {
      recipients: [
        { address: { channel: 'mail' }, reasons: [{ kind: 'rule', rule: 'everything' }] },
        { address: { email: 'ANN@example.com' }, reasons: [] },
        { address: { email: 'ann@example.com' }, reasons: [] },
      ],
    });
    const sent = await sendEmailOf(notice, config);
    expect(sent.report.result.status).toBe('delivered');
    expect(smtp.received[0]!.envelopeTo).toEqual(['oncall@example.com', 'ANN@example.com']);
    expect(smtp.received[0]!.mail.subject).toBe('Re: [Headwater] Run failed: demo/load_orders');
    expect(smtp.received[0]!.mail.text).toMatch(/^Acknowledged by ann at /);
  });

  it('retries a 4xx refusal, fails on 5xx and a bad login, and reports a partial refusal', async () => {
    const smtp = await startSmtp({ refuse: { 'busy@example.com': 451, 'gone@example.com': 550 } });
    const config = configFor(smtp.port);
    const channel = config.channels.mail;
    if (channel?.type !== 'email') throw new Error('expected the e-mail channel');
    const sender = createEmailSender(channel, { timeoutMs: 5000 });
    const base: EmailMessage = {
      from: channel.from,
      to: [],
      subject: 's',
      text: 't',
      html: '<p>t</p>',
      messageId: 'm@headwater.example',
      headers: {},
    };
    try {
      const busy = await sender.send({ ...base, to: ['busy@example.com'] });
      expect(busy).toMatchObject({ status: 'retry', statusCode: 451 });
      const gone = await sender.send({ ...base, to: ['gone@example.com'] });
      expect(gone).toMatchObject({ status: 'failed', statusCode: 550 });
      expect(gone.status === 'failed' && gone.error.message).toMatch(
        /^email channel mail \(127\.0\.0\.1:\d+\): EENVELOPE .*No such mailbox/,
      );
      const partial = await sender.send({ ...base, to: ['gone@example.com', 'ok@example.com'] });
      expect(partial.status).toBe('delivered');
      expect(partial.status === 'delivered' && partial.detail).toMatch(/refused for gone@example\.com$/);
      expect(smtp.received.map((r) => r.envelopeTo)).toEqual([['ok@example.com']]);
      expect(await sender.send(base)).toMatchObject({ status: 'failed' });
    } finally {
      sender.close();
    }

    const badLogin = createEmailSender(
      { ...channel, smtp: { ...channel.smtp, password: 'wrong' } },
      { timeoutMs: 5000 },
    );
    try {
      const refused = await badLogin.send({ ...base, to: ['ok@example.com'] });
      expect(refused).toMatchObject({ status: 'failed', statusCode: 535 });
    } finally {
      badLogin.close();
    }
  });
});
