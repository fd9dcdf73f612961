/**
 * Incidents end to end: a real server with an alerts configuration, real events, and webhook receivers on
 * loopback that check every signature. What is checked is what owners see: one incident per root cause, who is
 * told and why, the retry grace, the retries of a delivery, and the resolution.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { demoNames, demoScenario } from '../../src/cli/demo-scenario.js';
import { runEvents } from '../analysis-scenarios.js';
import { alertsCommand, incidentsCommand } from '../../src/cli/incidents.js';
import { backends, type Backend, type TestServer } from '../helpers/backends.js';
import { runCommand } from '../helpers/cli.js';
import { retentionPass, type RetentionStep } from '../../src/store/retention.js';
import { until } from '../helpers/wait.js';
import type { Receiver, ReceivedRequest, ScriptedAnswer } from './fixtures.js';
import { newSecret, signatureValid, startReceiver } from './fixtures.js';
import { afterTest, alertsFile, failedRun, postEvents, serveWithAlerts } from './servers.js';

const PRODUCER = 'https://example.com/headwater/incidents-test';
/** A receiver that refuses (599) any request whose signature does not verify, then answers from `script`. */
async function hook(secret: string, script: ScriptedAnswer[] = [{ status: 200 }]): Promise<Receiver> {
  const receiver = await startReceiver((request: ReceivedRequest, index: number) => {
    if (!signatureValid(secret, request)) throw new Error('bad signature');
    return script[Math.min(index, script.length - 1)]!;
  });
  afterTest(() => receiver.close());
  return receiver;
}

interface Channel {
  readonly name: string;
  readonly receiver: Receiver;
  readonly secret: string;
}

async function channel(name: string, script?: ScriptedAnswer[]): Promise<Channel> {
  const secret = newSecret();
  return { name, secret, receiver: await hook(secret, script) };
}

/** Starts a server whose configuration has these webhook channels, then `rest`. */
function serve(backend: Backend, channels: readonly Channel[], rest: string) {
  const channelLines = channels
    .map((c) => `  ${c.name}:\n    type: webhook\n    url: ${c.receiver.url}\n    secret: ${c.secret}\n`)
    .join('');
  return serveWithAlerts(
    backend,
    `explorerUrl: https://lineage.example.com\nchannels:\n${channelLines}${rest}`,
  );
}

const post = postEvents;

async function json<T>(server: TestServer, url: string, init?: RequestInit): Promise<T> {
  const response = await server.request(url, init);
  const body = await response.text();
  expect({ url, status: response.status, body: response.status < 300 ? '' : body }).toMatchObject({
    status: 200,
  });
  return JSON.parse(body) as T;
}

interface IncidentJson {
  id: string;
  status: string;
  signal: string;
  root: string;
  headline: string;
  recipients: {
    address: { channel?: string };
    why: string[];
    reasons: { kind: string; owner?: string; node?: { name: string } }[];
  }[];
  impacted: { datasets: { name: string; depth: number; columns?: string[] }[]; jobs: { name: string }[] };
}

interface Detail {
  incident: IncidentJson;
  signals: { key: string; kind: string; node: string }[];
  timeline: {
    id: string;
    kind: string;
    webhookId: string;
    deliveries: { channel: string; state: string; attempts: number }[];
  }[];
}

const incidents = (server: TestServer, status = '') =>
  json<{ incidents: IncidentJson[]; totalCount: number }>(
    server,
    `/api/v1/incidents${status === '' ? '' : `?status=${status}`}`,
  );

/** Waits until the engine and the outbox have nothing left to do. */
async function quiet(server: TestServer): Promise<void> {
  await server.server.alerts.incidents.settled();
  await until(
    'every delivery sent or given up',
    async () => {
      const { incidents: list } = await incidents(server);
      const details = await Promise.all(
        list.map((incident) => json<Detail>(server, `/api/v1/incidents/${incident.id}`)),
      );
      return details.flatMap((detail) => detail.timeline.flatMap((t) => t.deliveries.map((d) => d.state)));
    },
    (states) => states.every((state) => state !== 'pending'),
  );
  await server.server.alerts.incidents.settled();
}

const payloads = (receiver: Receiver) =>
  receiver.requests.map((request) => ({
    webhookId: request.headers['webhook-id'],
    body: JSON.parse(request.body) as { type: string; data: Record<string, unknown> },
  }));

const all = backends();

/** A server whose one rule sends every failed run, at once, to the channel `ops`. */
const opsServer = (backend: Backend, ops: Channel) =>
  serve(
    backend,
    [ops],
    ['rules:', '  - on: run_failed', '    retryGrace: 0s', '    notify: { channels: ops }', ''].join('\n'),
  );

const failedLoad = () => failedRun();

describe.each(all)('incidents ($name)', (backend) => {
  it("opens exactly one incident for the demo's load_orders failure, tells the finance owners, groups the freshness failure and the DAG into it, and resolves it on the next good run", async () => {
    const finance = await channel('finance');
    const platform = await channel('platform');
    const server = await serve(
      backend,
      [finance, platform],
      [
        'owners:',
        '  team:finance-analytics: finance',
        '  team:data-platform: platform',
        'rules:',
        '  - name: everything',
        '    on: [run_failed, assertion_failed]',
        '    retryGrace: 0s',
        '',
      ].join('\n'),
    );
    const scenario = demoScenario();
    await post(server, scenario.events);
    await until(
      'a delivery to finance',
      () => finance.receiver.requests.length,
      (n) => n >= 1,
    );
    await quiet(server);

    const { incidents: list } = await incidents(server);
    expect(list.map((incident) => [incident.signal, incident.root, incident.status])).toEqual([
      ['run_failed', `job:${demoNames.airflow}:${demoNames.loadOrders}`, 'open'],
    ]);
    const [incident] = list;
    const detail = await json<Detail>(server, `/api/v1/incidents/${incident!.id}`);
    // The task's failure, the DAG run it failed, and dbt's freshness test on the staging table it did not load.
    expect(detail.signals.map((signal) => [signal.kind, signal.node]).sort()).toEqual(
      [
        ['assertion_failed', `dataset:${demoNames.warehouse}:${demoNames.stagingOrders}`],
        ['run_failed', `job:${demoNames.airflow}:${demoNames.dag}`],
        ['run_failed', `job:${demoNames.airflow}:${demoNames.loadOrders}`],
      ].sort(),
    );
    expect(incident!.impacted.datasets.map((d) => [d.name, d.depth])).toEqual(
      expect.arrayContaining([
        [demoNames.stagingOrders, 1],
        [demoNames.dashboard, expect.any(Number)],
      ]),
    );
    const financeRecipient = incident!.recipients.find((r) => r.address.channel === 'finance');
    expect(financeRecipient?.reasons).toContainEqual(
      expect.objectContaining({
        kind: 'owns-impacted',
        owner: 'team:finance-analytics',
        node: expect.objectContaining({ name: demoNames.dashboard }),
      }),
    );
    expect(incident!.recipients.find((r) => r.address.channel === 'platform')?.reasons).toContainEqual(
      expect.objectContaining({ kind: 'owns-root', owner: 'team:data-platform' }),
    );

    // Told once each, signed, with the transition's webhook-id.
    for (const receiver of [finance.receiver, platform.receiver]) {
      const sent = payloads(receiver);
      expect(sent.map((p) => p.webhookId)).toEqual([detail.timeline[0]!.webhookId]);
      expect(sent[0]!.body.type).toBe('incident.opened');
    }
    expect(detail.timeline.map((t) => t.kind)).toEqual(['opened']);

    // The next good run of load_orders resolves it, and the same people hear so, once.
    const fixedRun = randomUUID();
    await post(
      server,
      runEvents({
        namespace: demoNames.airflow,
        job: demoNames.loadOrders,
        runId: fixedRun,
        start: '2025-03-15T09:00:00Z',
        end: '2025-03-15T09:05:00Z',
      }).map((event) => ({ ...(event as object), producer: PRODUCER })),
    );
    await until(
      'the incident resolved',
      async () => (await incidents(server)).incidents.map((i) => i.status),
      (statuses) => statuses.length === 1 && statuses[0] === 'resolved',
      // Well inside the engine's 30 s tick: the good run's commit itself brings the resolution.
      { timeoutMs: 10_000 },
    );
    await quiet(server);
    const resolved = await json<Detail>(server, `/api/v1/incidents/${incident!.id}`);
    expect(resolved.timeline.map((t) => t.kind)).toEqual(['opened', 'resolved']);
    for (const receiver of [finance.receiver, platform.receiver]) {
      expect(payloads(receiver).map((p) => [p.webhookId, p.body.type])).toEqual([
        [resolved.timeline[0]!.webhookId, 'incident.opened'],
        [resolved.timeline[1]!.webhookId, 'incident.resolved'],
      ]);
    }
    // The DAG's failed run and the staging table's failing freshness stay failing, but were told of: no second incident.
    expect((await incidents(server)).totalCount).toBe(1);
  });

  it('opens nothing for a failure retried within its grace (counted from its arrival when it comes late), and opens one once the grace of a failure with no retry passes', async () => {
    const ops = await channel('ops');
    const server = await serve(
      backend,
      [ops],
      ['rules:', '  - on: run_failed', '    retryGrace: 3s', '    notify: { channels: ops }', ''].join('\n'),
    );
    const now = Date.now();
    const at = (ms: number) => new Date(now + ms).toISOString();
    // An Airflow-style retry: the first try fails, the second try (a new run) completes 1 s later.
    await post(server, [
      ...runEvents({
        namespace: 'etl',
        job: 'flaky',
        runId: randomUUID(),
        start: at(-2000),
        end: at(0),
        ends: 'FAIL',
        error: 'timeout',
      }),
      ...runEvents({
        namespace: 'etl',
        job: 'broken',
        runId: randomUUID(),
        start: at(-2000),
        end: at(0),
        ends: 'FAIL',
        error: 'no such table',
      }),
      // Events that arrive an hour late (a producer that buffered them): the grace runs from their arrival.
      ...runEvents({
        namespace: 'etl',
        job: 'late',
        runId: randomUUID(),
        start: at(-3_700_000),
        end: at(-3_600_000),
        ends: 'FAIL',
      }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await post(server, [
      ...runEvents({ namespace: 'etl', job: 'flaky', runId: randomUUID(), start: at(500), end: at(1000) }),
      ...runEvents({
        namespace: 'etl',
        job: 'late',
        runId: randomUUID(),
        start: at(-3_500_000),
        end: at(-3_400_000),
      }),
    ]);
    expect((await incidents(server)).totalCount).toBe(0);

    await until(
      'the broken job told',
      () => ops.receiver.requests.length,
      (n) => n >= 1,
    );
    await quiet(server);
    const { incidents: list } = await incidents(server);
    expect(list.map((incident) => incident.root)).toEqual(['job:etl:broken']);
    expect(payloads(ops.receiver).map((p) => p.body.type)).toEqual(['incident.opened']);
  });

  it('delivers to a receiver answering 500, 500, 200 on the third attempt, with one webhook-id', async () => {
    const ops = await channel('ops', [{ status: 500 }, { status: 500 }, { status: 200 }]);
    const server = await opsServer(backend, ops);
    await post(server, failedLoad());
    await until(
      'three attempts',
      () => ops.receiver.requests.length,
      (n) => n >= 3,
    );
    await quiet(server);
    const [incident] = (await incidents(server)).incidents;
    const detail = await json<Detail>(server, `/api/v1/incidents/${incident!.id}`);
    expect(detail.timeline[0]!.deliveries).toEqual([
      expect.objectContaining({ channel: 'ops', state: 'sent', attempts: 3 }),
    ]);
    expect(new Set(ops.receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(
      new Set([detail.timeline[0]!.webhookId]),
    );
    expect(ops.receiver.requests).toHaveLength(3);
  });

  it('tells the owners of a failed run’s previous outputs when its FAIL event names none (as dbt-ol sends it)', async () => {
    const marts = await channel('marts');
    const server = await serve(
      backend,
      [marts],
      ['owners:', '  team:marts: marts', 'rules:', '  - on: run_failed', '    retryGrace: 0s', ''].join('\n'),
    );
    const owned = {
      ownership: {
        _producer: PRODUCER,
        _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/OwnershipDatasetFacet.json',
        owners: [{ name: 'team:marts', type: 'OWNER' }],
      },
    };
    await post(server, [
      ...runEvents({
        namespace: 'dbt',
        job: 'model.orders',
        runId: randomUUID(),
        start: '2025-01-01T00:00:00Z',
        end: '2025-01-01T00:01:00Z',
        inputs: [{ name: 'raw.orders' }],
        outputs: [{ name: 'marts.orders', facets: owned }],
      }),
      ...runEvents({
        namespace: 'dbt',
        job: 'model.orders',
        runId: randomUUID(),
        start: '2025-01-02T00:00:00Z',
        end: '2025-01-02T00:01:00Z',
        ends: 'FAIL',
        error: 'Database Error',
      }),
    ]);
    await until(
      'the owners told',
      () => marts.receiver.requests.length,
      (n) => n >= 1,
    );
    await quiet(server);
    const [incident] = (await incidents(server)).incidents;
    expect(incident!.impacted.datasets.map((d) => d.name)).toEqual(['marts.orders']);
    expect(incident!.recipients).toEqual([
      {
        address: { channel: 'marts' },
        reasons: [expect.objectContaining({ kind: 'owns-impacted', owner: 'team:marts', depth: 1 })],
        why: ['team:marts owns dbt/marts.orders (1 hop downstream)'],
      },
    ]);
  });

  it('tells owners declared through the API beside the ownership facet’s, and keeps each declaration', async () => {
    const marts = await channel('marts');
    const analytics = await channel('analytics');
    const server = await serve(
      backend,
      [marts, analytics],
      [
        'owners:',
        '  team:marts: marts',
        '  team:analytics: analytics',
        'rules:',
        '  - on: run_failed',
        '    retryGrace: 0s',
        '',
      ].join('\n'),
    );
    const owned = {
      ownership: {
        _producer: PRODUCER,
        _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/OwnershipDatasetFacet.json',
        owners: [{ name: 'team:marts', type: 'OWNER' }],
      },
    };
    const load = (day: string, ends?: 'FAIL') =>
      runEvents({
        namespace: 'dbt',
        job: 'model.orders',
        runId: randomUUID(),
        start: `2025-01-0${day}T00:00:00Z`,
        end: `2025-01-0${day}T00:01:00Z`,
        inputs: [{ name: 'raw.orders' }],
        outputs: [{ name: 'marts.orders', facets: ends ? {} : owned }],
        ...(ends ? { ends, error: 'Database Error' } : {}),
      });
    await post(server, load('1'));
    const url = '/api/v1/namespaces/dbt/datasets/marts.orders/owners';
    const put = (body: unknown) =>
      server.request(url, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(await json(server, url)).toEqual({
      owners: [{ name: 'team:marts', type: 'OWNER' }],
      reported: [{ name: 'team:marts', type: 'OWNER' }],
      declared: null,
    });

    // A name the facet gives counts once, with the facet's type; a blank one, or an unknown dataset, is refused.
    const declared = await put({
      owners: [{ name: ' team:analytics ', type: 'STEWARD' }, { name: 'team:marts' }],
    });
    expect(declared.status).toBe(200);
    expect(await declared.json()).toEqual({
      owners: [
        { name: 'team:marts', type: 'OWNER' },
        { name: 'team:analytics', type: 'STEWARD' },
      ],
      reported: [{ name: 'team:marts', type: 'OWNER' }],
      declared: {
        owners: [
          { name: 'team:analytics', type: 'STEWARD' },
          { name: 'team:marts', type: null },
        ],
        declaredAt: expect.any(String),
        declaredBy: 'anonymous',
      },
    });
    const blank = await put({ owners: [{ name: '  ' }] });
    expect([blank.status, ((await blank.json()) as { error?: string }).error]).toEqual([400, 'BAD_REQUEST']);
    expect((await put({ owners: [{ owner: 'x' }] })).status).toBe(400);
    const unknown = await server.request('/api/v1/namespaces/dbt/datasets/nope/owners', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ owners: [] }),
    });
    expect(unknown.status).toBe(404);
    // Job owners are declared the same way.
    expect(
      (
        await server.request('/api/v1/namespaces/dbt/jobs/model.orders/owners', {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ owners: [{ name: 'team:analytics' }] }),
        })
      ).status,
    ).toBe(200);

    // The failure reaches both teams, each for the dataset it owns.
    await post(server, load('2', 'FAIL'));
    await until(
      'both teams told',
      () => [marts.receiver.requests.length, analytics.receiver.requests.length],
      ([m, a]) => m! >= 1 && a! >= 1,
    );
    await quiet(server);
    const [incident] = (await incidents(server)).incidents;
    expect(incident!.recipients.map((r) => [r.address.channel, r.why])).toEqual([
      ['analytics', expect.arrayContaining(['team:analytics owns dbt/marts.orders (1 hop downstream)'])],
      ['marts', ['team:marts owns dbt/marts.orders (1 hop downstream)']],
    ]);

    // Withdrawn, the declaration leaves the facet's owners; both declarations are in the audit log.
    const withdrawn = await put({ owners: [] });
    expect(await withdrawn.json()).toMatchObject({
      owners: [{ name: 'team:marts', type: 'OWNER' }],
      declared: { owners: [] },
    });
    // The audit entry is written once the answer has gone.
    await until(
      'both declarations audited',
      async () =>
        (
          await json<{ entries: { action: string; status: number }[] }>(server, '/api/v1/audit?limit=50')
        ).entries.filter(
          (e) =>
            e.action === 'PUT /api/v1/namespaces/:namespace/datasets/:dataset/owners' && e.status === 200,
        ).length,
      (n) => n === 2,
      { timeoutMs: 10_000 },
    );
  });

  it('acknowledges and resolves through the API, tells the recipients each time, and refuses a second resolution', async () => {
    const ops = await channel('ops');
    const server = await opsServer(backend, ops);
    await post(server, failedLoad());
    await until(
      'opened',
      () => ops.receiver.requests.length,
      (n) => n >= 1,
    );
    const [incident] = (await incidents(server)).incidents;
    const act = (action: string, note: string) =>
      server.request(`/api/v1/incidents/${incident!.id}/${action}`, {
        method: 'POST',
        body: JSON.stringify({ note }),
        headers: { 'content-type': 'application/json' },
      });
    const acknowledged = await act('acknowledge', 'looking');
    expect(acknowledged.status).toBe(200);
    expect(((await acknowledged.json()) as IncidentJson).status).toBe('acknowledged');
    expect((await act('resolve', 'fixed the credentials')).status).toBe(200);
    const again = await act('resolve', 'twice');
    expect(again.status).toBe(409);
    await quiet(server);
    expect(payloads(ops.receiver).map((p) => p.body.type)).toEqual([
      'incident.opened',
      'incident.acknowledged',
      'incident.resolved',
    ]);
    // The failure still stands (no good run), yet it was told of: resolving by hand does not reopen it.
    server.server.alerts.incidents.reconcileAll();
    await quiet(server);
    expect((await incidents(server)).totalCount).toBe(1);
    const audit = await json<{ entries?: { action: string }[] }>(server, '/api/v1/audit?action=incidents.');
    expect(JSON.stringify(audit)).toContain('incidents.resolve');

    // Retention takes incidents resolved before its cutoff, and leaves those resolved after it.
    const step: RetentionStep = (fn, apply) => server.server.pipeline.maintain(fn, apply);
    await retentionPass(server.server.db, new Date(Date.now() - 60_000), step);
    expect((await incidents(server)).totalCount).toBe(1);
    const pass = await retentionPass(server.server.db, new Date(Date.now() + 60_000), step);
    expect(pass.deleted.incidents).toBe(1);
    expect((await incidents(server)).totalCount).toBe(0);
  });

  it('the CLI lists, shows, acknowledges and resolves incidents, gates CI on them, and dry-runs and checks alerts', async () => {
    const ops = await channel('ops');
    const server = await opsServer(backend, ops);
    const cli = (command: typeof incidentsCommand, ...args: string[]) =>
      runCommand(command, [...args, '--url', server.url]);
    expect(await cli(incidentsCommand, 'list', '--fail-on', 'unresolved')).toEqual({
      code: 0,
      stdout: 'No incidents.\n',
      stderr: '',
    });
    const dry = await cli(alertsCommand, 'dry-run');
    expect(dry.stdout).toBe('Nothing is broken: no one would be told anything.\n');

    await post(server, failedLoad());
    await until(
      'opened',
      () => ops.receiver.requests.length,
      (n) => n >= 1,
    );
    const listed = await cli(incidentsCommand, 'list', '--fail-on', 'unresolved');
    expect(listed.code).toBe(1);
    expect(listed.stdout).toContain('Run failed: etl/load');
    const [incident] = (await incidents(server)).incidents;
    const shown = await cli(incidentsCommand, 'show', incident!.id);
    expect(shown.stdout).toMatch(/Told:\n {2}ops: the rule rules\[0\] sends here/);
    expect(shown.stdout).toMatch(/opened \(ops sent\)/);
    const dryRun = await cli(alertsCommand, 'dry-run');
    expect(dryRun.stdout).toContain(`run_failed etl:load: 1 signal, in incident ${incident!.id}`);

    expect((await cli(incidentsCommand, 'ack', incident!.id, '--note', 'on it')).stdout).toBe(
      `${incident!.id} is acknowledged; its recipients are told.\n`,
    );
    expect((await cli(incidentsCommand, 'resolve', incident!.id)).code).toBe(0);
    const again = await cli(incidentsCommand, 'resolve', incident!.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('resolved already');
    expect((await cli(incidentsCommand, 'list', '--fail-on', 'unresolved')).code).toBe(0);

    const bad = await alertsFile('rules:\n  - on: run_faild\n');
    const checked = await runCommand(alertsCommand, ['check', bad]);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toMatch(/alerts\.yaml:2:\d+: rules\[0\]\.on: .*run_failed/);
  });

  it('opens run_overdue for a run far past its usual duration and run_missing for a schedule not kept, and resolves each when the run ends or comes', async () => {
    const ops = await channel('ops');
    const server = await serve(
      backend,
      [ops],
      ['rules:', '  - on: [run_overdue, run_missing]', '    notify: { channels: ops }', ''].join('\n'),
    );
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const hour = 3_600_000;
    const day = 24 * hour;
    const nominal = (at: string) => ({
      nominalTime: {
        _producer: PRODUCER,
        _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json',
        nominalStartTime: at,
      },
    });
    const stuck = randomUUID();
    const events: unknown[] = [];
    // slow: three runs of one minute, then one started 20 minutes ago that has not ended (overdue after 5).
    for (let i = 3; i >= 1; i--)
      events.push(
        ...runEvents({
          namespace: 'etl',
          job: 'slow',
          runId: randomUUID(),
          start: ago(i * hour),
          end: ago(i * hour - 60_000),
        }),
      );
    events.push(...runEvents({ namespace: 'etl', job: 'slow', runId: stuck, start: ago(20 * 60_000) }));
    // daily: five nightly runs, the last three days ago: the one of two days ago is missing.
    for (let i = 7; i >= 3; i--) {
      const start = ago(i * day);
      events.push(
        ...runEvents({
          namespace: 'etl',
          job: 'daily',
          runId: randomUUID(),
          start,
          end: ago(i * day - 60_000),
        }).map((event) => ({
          ...(event as { run: object }),
          run: { ...(event as { run: object }).run, facets: nominal(start) },
        })),
      );
    }
    await post(server, events);
    server.server.alerts.incidents.reconcileAll();
    await until(
      'two incidents',
      async () => (await incidents(server)).incidents,
      (list) => list.length === 2,
    );
    await quiet(server);
    const list = (await incidents(server)).incidents;
    expect(list.map((i) => [i.signal, i.root]).sort()).toEqual([
      ['run_missing', 'job:etl:daily'],
      ['run_overdue', 'job:etl:slow'],
    ]);
    expect(payloads(ops.receiver).map((p) => p.body.type)).toEqual(['incident.opened', 'incident.opened']);

    // The stuck run completes; the daily job runs again.
    await post(server, [
      ...runEvents({
        namespace: 'etl',
        job: 'slow',
        runId: stuck,
        start: ago(20 * 60_000),
        end: ago(0),
      }).slice(1),
      ...runEvents({ namespace: 'etl', job: 'daily', runId: randomUUID(), start: ago(1000), end: ago(0) }),
    ]);
    await until(
      'both resolved',
      async () => (await incidents(server)).incidents.map((i) => i.status),
      (statuses) => statuses.length === 2 && statuses.every((status) => status === 'resolved'),
      { timeoutMs: 10_000 }, // the commits, not the 30 s tick
    );
  });

  it('applies a configuration through the API to a server started without one, shows it redacted, and refuses a bad one whole', async () => {
    const ops = await channel('ops');
    const server = await serveWithAlerts(backend, undefined);
    const cli = (...args: string[]) => runCommand(alertsCommand, [...args, '--url', server.url]);
    await post(server, failedLoad());
    // No configuration in force: nothing opens, and a dry run says why.
    expect((await cli('dry-run')).stderr).toContain('Alerts are not configured');

    const bad = await alertsFile(
      'channels:\n  ops: { type: webhook, url: "http://x" }\nrules:\n  - on: run_faild\n',
    );
    const refused = await cli('apply', bad);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 400: .*2 problems.*channels\.ops.*secret.*rules\[0\]\.on/s);

    const good = await alertsFile(
      [
        'channels:',
        `  ops: { type: webhook, url: "${ops.receiver.url}", secret: "${ops.secret}" }`,
        'rules:',
        '  - { on: run_failed, retryGrace: 0s, notify: { channels: ops } }',
        '',
      ].join('\n'),
    );
    const applied = await cli('apply', good);
    expect(applied.stdout).toMatch(/is in force since .* \(set by anonymous\)/);
    // The failure stored before is looked at as soon as the configuration is in force.
    await until(
      'the failure told',
      () => ops.receiver.requests.length,
      (n) => n >= 1,
    );
    expect((await incidents(server)).incidents.map((i) => i.root)).toEqual(['job:etl:load']);
    const shown = await json<{
      document: { channels: { ops: { secret: string; url: string } } };
      updatedBy: string;
    }>(server, '/api/v1/alerts/config');
    expect(shown.document.channels.ops.secret).toBe('[redacted]');
    expect(JSON.stringify(shown)).not.toContain(ops.secret);
    expect(shown.updatedBy).toBe('anonymous');
  });
});
