/**
 * Incidents through every kind of channel, end to end on a real server: e-mail to a real SMTP server on loopback
 * (threaded by incident), a Slack-shaped receiver, and a webhook that answers 410; column precision (only the
 * owners whose columns derive from the failing one are told); the throttle of updates.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { columnLineage, runEvents, schema } from '../analysis-scenarios.js';
import { backends, type TestServer } from '../helpers/backends.js';
import { until } from '../helpers/wait.js';
import { newSecret, slackShaped, startReceiver, startSmtp, type Receiver } from './fixtures.js';
import { afterTest, failedRun, postEvents, serveWithAlerts } from './servers.js';

const PRODUCER = 'https://example.com/headwater/incidents-test';
async function receiver(answer: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(answer);
  afterTest(() => started.close());
  return started;
}

const serve = serveWithAlerts;
const post = postEvents;

async function get<T>(server: TestServer, url: string): Promise<T> {
  const response = await server.request(url);
  expect(response.status, url).toBe(200);
  return (await response.json()) as T;
}

interface Incident {
  id: string;
  status: string;
  root: string;
  recipients: {
    address: { channel?: string; email?: string };
    reasons: { kind: string; owner?: string; columns?: string[] }[];
  }[];
}
interface Detail {
  timeline: { kind: string; throttled: boolean; deliveries: { channel: string; state: string }[] }[];
}
const incidents = async (server: TestServer) =>
  (await get<{ incidents: Incident[] }>(server, '/api/v1/incidents')).incidents;

const ownership = (owner: string) => ({
  ownership: {
    _producer: PRODUCER,
    _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/OwnershipDatasetFacet.json',
    owners: [{ name: owner, type: 'OWNER' }],
  },
});

/** The warehouse: orders (id, amount) feeds revenue (from amount, owned by finance) and order_counts (from id, crm). */
function warehouse(): unknown[] {
  const ns = 'warehouse';
  const run = (job: string, inputs: string[], output: string, facets: Record<string, unknown>) =>
    runEvents({
      namespace: ns,
      job,
      runId: randomUUID(),
      start: '2025-02-01T01:00:00Z',
      end: '2025-02-01T01:05:00Z',
      inputs: inputs.map((name) => ({ name })),
      outputs: [{ name: output, facets }],
    });
  return [
    ...run('load_orders', [], 'orders', {
      schema: schema([
        ['id', 'int'],
        ['amount', 'decimal'],
      ]),
    }),
    ...run('build_revenue', ['orders'], 'revenue', {
      schema: schema([['total', 'decimal']]),
      columnLineage: columnLineage(ns, { total: [['orders', 'amount', 'AGGREGATION']] }),
      ...ownership('team:finance'),
    }),
    ...run('build_order_counts', ['orders'], 'order_counts', {
      schema: schema([['n', 'int']]),
      columnLineage: columnLineage(ns, { n: [['orders', 'id', 'AGGREGATION']] }),
      ...ownership('team:crm'),
    }),
  ];
}

/** A check run on orders whose `amount_positive` assertion on `amount` passes or fails. */
const check = (success: boolean, at: string) =>
  runEvents({
    namespace: 'warehouse',
    job: 'checks.orders_suite',
    runId: randomUUID(),
    start: at,
    end: at,
    inputs: [
      {
        name: 'orders',
        inputFacets: {
          dataQualityAssertions: {
            _producer: PRODUCER,
            _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/DataQualityAssertionsDatasetFacet.json',
            assertions: [{ assertion: 'amount_positive', column: 'amount', success }],
          },
        },
      },
    ],
  });

const all = backends();

describe.each(all)('incidents through channels ($name)', (backend) => {
  it('tells only the owners whose columns derive from a failing column, by Slack and by e-mail threaded by incident', async () => {
    const smtp = await startSmtp();
    const slack = await receiver(slackShaped);
    const crm = await receiver([{ status: 200 }]);
    const server = await serve(
      backend,
      [
        'channels:',
        '  mail:',
        '    type: email',
        `    smtp: { host: 127.0.0.1, port: ${smtp.port}, secure: false, user: alerts, password: smtp-secret }`,
        '    from: Headwater <alerts@headwater.example>',
        `  finance-slack: { type: slack, url: "${slack.url}" }`,
        `  crm-hook: { type: webhook, url: "${crm.url}", secret: "${newSecret()}" }`,
        'owners:',
        '  team:finance: [finance-slack, finance@example.com]',
        '  team:crm: crm-hook',
        'rules:',
        '  - on: assertion_failed',
        '    notify: { owners: impacted }',
        '',
      ].join('\n'),
    );
    await post(server, [...warehouse(), ...check(false, '2025-02-01T02:00:00Z')]);
    await until(
      'the Slack message and the e-mail',
      () => slack.requests.length + smtp.received.length,
      (n) => n >= 2,
    );
    await server.server.alerts.incidents.settled();

    const [incident, ...others] = await incidents(server);
    expect(others).toEqual([]);
    expect(incident!.root).toBe('dataset:warehouse:orders');
    expect(
      incident!.recipients
        .map((r) => r.address)
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    ).toEqual([{ channel: 'finance-slack' }, { email: 'finance@example.com' }]);
    expect(incident!.recipients[0]!.reasons).toEqual([
      expect.objectContaining({ kind: 'owns-impacted', owner: 'team:finance', columns: ['total'] }),
    ]);
    expect(slack.requests).toHaveLength(1);
    expect(slack.requests[0]!.body).toContain('amount_positive');
    const [opened] = smtp.received;
    expect(opened!.envelopeTo).toEqual(['finance@example.com']);
    expect(opened!.mail.subject).toContain('amount_positive');
    // order_counts derives from orders.id only: its owner is not told.
    expect(crm.requests).toEqual([]);

    // The assertion passes again: resolved, in the same e-mail thread.
    await post(server, check(true, '2025-02-02T02:00:00Z'));
    await until(
      'the resolution e-mail',
      () => smtp.received.length,
      (n) => n >= 2,
    );
    const resolved = smtp.received[1]!.mail;
    expect(resolved.subject).toMatch(/^Re: /);
    expect(resolved.inReplyTo).toBe(opened!.mail.messageId);
    expect((await incidents(server)).map((i) => i.status)).toEqual(['resolved']);
    await until(
      'the Slack resolution',
      () => slack.requests.length,
      (n) => n >= 2,
    );
    expect(crm.requests).toEqual([]);
  });

  it('disables a webhook channel that answers 410, audits it, and sends it nothing more', async () => {
    const gone = await receiver([{ status: 410, body: 'endpoint removed' }]);
    const server = await serve(
      backend,
      [
        'channels:',
        `  ops: { type: webhook, url: "${gone.url}", secret: "${newSecret()}" }`,
        'rules:',
        '  - { on: run_failed, retryGrace: 0s, notify: { channels: ops } }',
        '',
      ].join('\n'),
    );
    await post(server, failedRun('first'));
    await until(
      'the 410',
      () => gone.requests.length,
      (n) => n >= 1,
    );
    const audit = await until(
      'the channel disabled in the audit log',
      async () => JSON.stringify(await get<unknown>(server, '/api/v1/audit?action=alerts.')),
      (text) => text.includes('alerts.channel.disable'),
    );
    expect(audit).toContain('410');
    await post(server, failedRun('second'));
    await until(
      'two incidents',
      () => incidents(server),
      (list) => list.length === 2,
    );
    await server.server.alerts.incidents.settled();
    const second = (await incidents(server)).find((i) => i.root === 'job:etl:second')!;
    const detail = await get<Detail>(server, `/api/v1/incidents/${second.id}`);
    expect(detail.timeline.map((t) => [t.kind, t.deliveries])).toEqual([['opened', []]]);
    expect(gone.requests).toHaveLength(1);
  });

  it('throttles updates: the first is sent, one within the throttle is recorded but not sent', async () => {
    const ops = await receiver([{ status: 200 }]);
    const server = await serve(
      backend,
      [
        'channels:',
        `  ops: { type: webhook, url: "${ops.url}", secret: "${newSecret()}" }`,
        'rules:',
        '  - { on: [run_failed, assertion_failed], retryGrace: 0s, throttle: 1h, notify: { channels: ops } }',
        '',
      ].join('\n'),
    );
    // load_orders fails; later, assertions on its output fail one after the other, explained by it.
    const ns = 'warehouse';
    await post(server, [
      ...runEvents({
        namespace: ns,
        job: 'load_orders',
        runId: randomUUID(),
        start: '2025-02-01T00:00:00Z',
        end: '2025-02-01T00:01:00Z',
        outputs: [{ name: 'orders' }],
      }),
      ...runEvents({
        namespace: ns,
        job: 'load_orders',
        runId: randomUUID(),
        start: '2025-02-02T00:00:00Z',
        end: '2025-02-02T00:01:00Z',
        ends: 'FAIL',
      }),
    ]);
    await until(
      'opened',
      () => ops.requests.length,
      (n) => n >= 1,
    );
    await post(server, check(false, '2025-02-02T02:00:00Z'));
    await until(
      'the first update',
      () => ops.requests.length,
      (n) => n >= 2,
    );
    await post(server, [
      ...runEvents({
        namespace: ns,
        job: 'checks.other_suite',
        runId: randomUUID(),
        start: '2025-02-02T03:00:00Z',
        end: '2025-02-02T03:00:00Z',
        inputs: [
          {
            name: 'orders',
            inputFacets: {
              dataQualityAssertions: {
                _producer: PRODUCER,
                _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/DataQualityAssertionsDatasetFacet.json',
                assertions: [{ assertion: 'row_count_min', success: false }],
              },
            },
          },
        ],
      }),
    ]);
    const [incident] = await until(
      'the second update recorded',
      () => incidents(server),
      (list) => list.length === 1,
    );
    const timeline = await until(
      'three transitions',
      async () => (await get<Detail>(server, `/api/v1/incidents/${incident!.id}`)).timeline,
      (list) => list.length === 3,
    );
    expect(timeline.map((t) => [t.kind, t.throttled])).toEqual([
      ['opened', false],
      ['updated', false],
      ['updated', true],
    ]);
    await server.server.alerts.incidents.settled();
    expect(ops.requests.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual([
      'incident.opened',
      'incident.updated',
    ]);
  });
});
