import { describe, expect, it } from 'vitest';
import type { AlertsConfig } from '../../src/alerts/config.js';
import { parseAlertsConfig } from '../../src/alerts/config.js';
import { createChannelSenders, planDeliveries, renderDelivery } from '../../src/alerts/delivery-plan.js';
import { renderEmail } from '../../src/alerts/email-message.js';
import { emailMessageId, noticeLinks, webhookId } from '../../src/alerts/notice.js';
import {
  globMatches,
  matchingRules,
  ownerAddresses,
  retryGraceMs,
  ruleMatches,
} from '../../src/alerts/rules.js';
import type { WebhookPayload } from '../../src/alerts/webhook-message.js';
import { loadOrdersNotice } from './fixtures.js';

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const config: AlertsConfig = parseAlertsConfig(
  `
explorerUrl: https://lineage.example.com/app/
channels:
  ops: { type: webhook, url: "https://hooks.example.com/x", secret: "${secret}" }
  finance-slack: { type: slack, url: "https://hooks.slack.com/services/T/B/X" }
  mail: { type: email, smtp: { host: smtp.example.com }, from: alerts@headwater.example }
owners:
  team:finance: [finance-slack, finance@example.com]
rules:
  - name: finance
    on: run_failed
    where: { namespace: "prod-*", job: ["load_*", "?x"] }
    retryGrace: 20m
  - name: fast
    on: [run_failed, assertion_failed]
    retryGrace: 1m
  - name: quality
    on: assertion_failed
    where: { dataset: "finance.*" }
`,
  'alerts.yml',
  { env: {} },
);

describe('rules', () => {
  it('match globs whole, with * across dots and slashes and ? for one character', () => {
    expect(globMatches('finance.*', 'finance.orders')).toBe(true);
    expect(globMatches('finance.*', 'finance')).toBe(false);
    expect(globMatches('*/orders', 's3://bucket/raw/orders')).toBe(true);
    expect(globMatches('?x', 'ax')).toBe(true);
    expect(globMatches('?x', 'aax')).toBe(false);
    // Everything else is literal: regular expression syntax included.
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(globMatches('(a|b)+', '(a|b)+')).toBe(true);
  });

  it('apply when the kind is in `on` and every filter that is set matches the root cause', () => {
    const [finance, fast, quality] = config.rules as [
      (typeof config.rules)[0],
      (typeof config.rules)[0],
      (typeof config.rules)[0],
    ];
    expect(ruleMatches(finance, { kind: 'run_failed', namespace: 'prod-eu', job: 'load_orders' })).toBe(true);
    expect(ruleMatches(finance, { kind: 'run_failed', namespace: 'dev', job: 'load_orders' })).toBe(false);
    expect(ruleMatches(finance, { kind: 'run_failed', namespace: 'prod-eu', job: 'build' })).toBe(false);
    expect(ruleMatches(finance, { kind: 'run_overdue', namespace: 'prod-eu', job: 'load_orders' })).toBe(
      false,
    );
    expect(
      ruleMatches(quality, { kind: 'assertion_failed', namespace: 'pg', dataset: 'finance.orders' }),
    ).toBe(true);
    // A dataset filter does not match a subject without a dataset.
    expect(ruleMatches(quality, { kind: 'assertion_failed', namespace: 'pg', job: 'finance.orders' })).toBe(
      false,
    );
    expect(
      matchingRules(config, { kind: 'assertion_failed', namespace: 'pg', dataset: 'finance.x' }),
    ).toEqual([fast, quality]);
    // The longest grace of the matching rules wins; no matching rule, no incident.
    expect(retryGraceMs(config, { kind: 'run_failed', namespace: 'prod-eu', job: 'load_orders' })).toBe(
      20 * 60_000,
    );
    expect(retryGraceMs(config, { kind: 'run_failed', namespace: 'dev', job: 'load_orders' })).toBe(60_000);
    expect(retryGraceMs(config, { kind: 'run_missing', namespace: 'dev', job: 'x' })).toBeUndefined();
    expect(ownerAddresses(config, 'team:finance')).toEqual([
      { channel: 'finance-slack' },
      { email: 'finance@example.com' },
    ]);
    expect(ownerAddresses(config, 'constructor')).toEqual([]);
  });
});

describe('planDeliveries', () => {
  it('gives one delivery per channel, e-mail addresses through the e-mail channel, and says what it cannot route', () => {
    const notice = loadOrdersNotice('opened');
    const plan = planDeliveries(notice, {
      ...config,
      channels: Object.fromEntries(Object.entries(config.channels).filter(([name]) => name !== 'ops')),
    });
    expect(plan.deliveries.map((delivery) => [delivery.key, delivery.to])).toEqual([
      ['inc-7f3a/1/finance-slack', []],
      ['inc-7f3a/1/mail', ['finance@example.com', 'ann@example.com']],
    ]);
    expect(plan.deliveries[1]!.recipients.map((recipient) => recipient.address)).toEqual([
      { email: 'finance@example.com' },
      { email: 'ann@example.com' },
    ]);
    expect(plan.unroutable).toEqual([
      { recipient: notice.recipients[3], reason: 'there is no channel ops in the configuration' },
    ]);
    const noEmail = planDeliveries(notice, { ...config, emailChannel: undefined });
    expect(noEmail.deliveries.map((delivery) => delivery.channel)).toEqual(['finance-slack', 'ops']);
    expect(noEmail.unroutable.map((entry) => entry.reason)).toEqual([
      'no emailChannel is configured to send e-mail through',
      'no emailChannel is configured to send e-mail through',
    ]);
  });

  it('renders the same bytes however often a notice is planned and rendered', () => {
    const render = () => {
      const notice = loadOrdersNotice('updated');
      return planDeliveries(notice, config).deliveries.map((delivery) =>
        JSON.stringify(renderDelivery(notice, delivery, config)),
      );
    };
    const first = render();
    expect(first).toHaveLength(3);
    expect(render()).toEqual(first);
    const webhook = JSON.parse(first.find((text) => text.startsWith('{"type":"webhook"'))!);
    expect(webhook.message.id).toBe('hw_inc-7f3a.2');
    expect(JSON.parse(webhook.message.body)).toMatchObject({
      type: 'incident.updated',
      timestamp: '2026-03-01T06:05:00.000Z',
      data: {
        id: 'hw_inc-7f3a.2',
        headline: 'Run failed: demo/load_orders',
        incident: { id: 'inc-7f3a', signal: 'run_failed' },
        links: { incident: 'https://lineage.example.com/app/incidents/inc-7f3a' },
      },
    });
    // Impacted datasets are nearest first in the payload, whatever order the notice had.
    const payload = JSON.parse(webhook.message.body) as WebhookPayload;
    expect(payload.data.impacted.datasets.map((node) => node.depth)).toEqual([1, 5]);
  });

  it('refuses to send through a channel that is gone from the configuration or changed type', async () => {
    const notice = loadOrdersNotice();
    const delivery = planDeliveries(notice, config).deliveries.find(
      (planned) => planned.channel === 'finance-slack',
    )!;
    const outbound = renderDelivery(notice, delivery, config);
    const senders = createChannelSenders({ ...config, channels: { 'finance-slack': config.channels.ops! } });
    const result = await senders.send(outbound);
    senders.close();
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toBe(
      'The slack channel finance-slack is now a webhook channel; the message was not sent.',
    );
  });
});

describe('identifiers and links', () => {
  it('keep ids with any characters safe in headers and Message-IDs, distinct per transition', () => {
    const notice = loadOrdersNotice('updated', { incidentId: 'a.b <c>\r\n' });
    expect(webhookId(notice)).toBe('hw_a=2Eb=20=3Cc=3E=0D=0A.2');
    expect(emailMessageId(notice, 'example.com')).toBe('incident.a=2Eb=20=3Cc=3E=0D=0A.2@example.com');
    const email = renderEmail(notice, { from: 'x@example.com', to: ['y@example.com'] });
    expect(email.headers['X-Headwater-Incident']).toBe('a.b <c>');
    expect(email.inReplyTo).toBe('incident.a=2Eb=20=3Cc=3E=0D=0A@example.com');
  });

  it('link to the explorer with namespaces as whole path segments', () => {
    expect(noticeLinks(loadOrdersNotice(), 'https://x.example.com/')).toEqual({
      incident: 'https://x.example.com/incidents/inc-7f3a',
      root: 'https://x.example.com/jobs/demo/load_orders',
      run: 'https://x.example.com/runs/0195f1c2-5b1e-7d3a-9c4e-2f1a0b9c8d7e',
      impact: 'https://x.example.com/impact?node=job:demo:load_orders',
    });
    expect(noticeLinks(loadOrdersNotice(), undefined)).toEqual({});
  });
});
