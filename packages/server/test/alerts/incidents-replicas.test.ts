/**
 * Incidents across three replicas of one PostgreSQL: only the writer opens incidents and sends, and a writer
 * SIGKILLed while a delivery is under way leaves it to the next writer, which sends it again with the same
 * `webhook-id` and opens nothing twice.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { backends, type Backend } from '../helpers/backends.js';
import { spawnServer, type ChildServer } from '../helpers/child-server.js';
import { until } from '../helpers/wait.js';
import { newSecret, signatureValid, startReceiver, type Receiver } from './fixtures.js';
import { afterTest, alertsFile, failedRun } from './servers.js';

// Replicas share one PostgreSQL; backends() fails in CI without one and warns locally.
const postgres: Backend | undefined = backends().find((backend) => backend.name === 'postgres');

async function role(url: string): Promise<string | undefined> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
  return ((await response.json()) as { role?: string }).role;
}

async function query<T>(databaseUrl: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe.skipIf(postgres === undefined)('incidents on three replicas', () => {
  it('a writer SIGKILLed during a delivery: the next writer sends it again with the same webhook-id, and there is one incident', async () => {
    const fresh = await postgres!.fresh();
    afterTest(fresh.cleanup);
    const databaseUrl = fresh.config.databaseUrl!;
    const secret = newSecret();
    // The first delivery never gets an answer: the writer is killed while it waits for one.
    const receiver: Receiver = await startReceiver((request, index) => {
      if (!signatureValid(secret, request)) throw new Error('bad signature');
      return index === 0 ? 'hang' : { status: 200 };
    });
    afterTest(() => receiver.close());
    const config = await alertsFile(
      [
        'channels:',
        `  ops: { type: webhook, url: "${receiver.url}", secret: "${secret}" }`,
        'rules:',
        '  - on: run_failed',
        '    retryGrace: 0s',
        '    notify: { channels: ops }',
        '',
      ].join('\n'),
    );
    const servers: ChildServer[] = [];
    afterTest(async () => {
      for (const server of servers) {
        server.process.kill('SIGKILL');
        await server.exited;
      }
    });
    for (let i = 0; i < 3; i++)
      servers.push(
        await spawnServer(['--database-url', databaseUrl, '--alerts-config', config, '--log-level', 'warn']),
      );
    const roles = await Promise.all(servers.map((server) => role(server.url)));
    const writer = servers[roles.indexOf('writer')]!;
    const followers = servers.filter((server) => server !== writer);
    expect(roles.filter((r) => r === 'writer')).toHaveLength(1);

    // Sent to a follower, which hands it to the writer.
    const response = await fetch(`${followers[0]!.url}/api/v1/lineage/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(failedRun()),
    });
    expect(response.status).toBe(200);
    await until(
      'the first delivery under way',
      () => receiver.requests.length,
      (n) => n >= 1,
    );
    writer.process.kill('SIGKILL');
    await writer.exited;

    await until(
      'the delivery sent again by the next writer',
      () => receiver.requests.length,
      (n) => n >= 2,
    );
    await until(
      'the delivery recorded as sent',
      () => query<{ sent: boolean }>(databaseUrl, 'SELECT sent_at IS NOT NULL AS sent FROM alert_outbox'),
      (rows) => rows.length === 1 && rows[0]!.sent,
    );
    // Every follower saw the failure; none opened an incident of its own, before or after the takeover.
    const incidents = await query<{ id: string }>(databaseUrl, 'SELECT id FROM incidents');
    expect(incidents).toHaveLength(1);
    const transitions = await query<{ seq: number }>(databaseUrl, 'SELECT seq FROM incident_transitions');
    expect(transitions).toHaveLength(1);
    const ids = receiver.requests.map((request) => request.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^hw_/);
    // Nothing more is sent once it is recorded.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.requests).toHaveLength(2);
  });
});
