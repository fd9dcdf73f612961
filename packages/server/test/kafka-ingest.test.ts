import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Consumer } from '@platformatic/kafka';
import { createKafkaTransport, kafkaMessageKey, type OpenLineageEvent } from '@headwater/openlineage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/server-config.js';
import { resolveKafkaConfig } from '../src/streams/kafka-config.js';
import { DEAD_LETTER_HEADERS } from '../src/streams/kafka-ingest.js';
import { backends, startServer } from './helpers/backends.js';
import { spawnServer } from './helpers/child-server.js';
import {
  kafkaAvailable,
  kafkaServeArgs,
  readTopic,
  openLineagePython,
  startKafkaBroker,
  type KafkaBroker,
} from './helpers/kafka-broker.js';
import { privatePostgresUnavailable, startPrivatePostgres } from './helpers/private-postgres.js';
import { parseExposition } from './helpers/prometheus.js';
import { runEvent, storedRunEvents } from './helpers/stream-events.js';
import { until } from './helpers/wait.js';

const run = promisify(execFile);

/** headwater_kafka_consumer_lag of the server at `url` for `topic`, by partition, as its /metrics serves it. */
async function consumerLag(
  url: string,
  topic: string,
  headers: Record<string, string> = {},
): Promise<Map<number, number>> {
  const response = await fetch(`${url}/metrics`, { headers });
  const lags = new Map<number, number>();
  for (const [series, value] of parseExposition(await response.text())) {
    const match = /^headwater_kafka_consumer_lag\{(.*)\}$/.exec(series);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    if (labels.topic === topic) lags.set(Number(labels.partition), value);
  }
  return lags;
}

/** The sum of a topic's lag over its partitions. */
const totalLag = (lags: Map<number, number>) => [...lags.values()].reduce((sum, lag) => sum + lag, 0);

/** The store these tests write to: PostgreSQL where DATABASE_URL is set (always in CI), else the embedded one. */
const backend = backends().at(-1)!;

describe.skipIf(!kafkaAvailable('kafka-ingest'))(
  `Kafka ingest on the ${backend.name} store`,
  { timeout: 240_000 },
  () => {
    let broker: KafkaBroker;
    const kafkaFor = (topic: string, group = `g-${topic}`) =>
      resolveKafkaConfig(
        {
          'kafka-brokers': broker.bootstrap,
          'kafka-topic': [topic],
          'kafka-group': group,
          'kafka-dead-letter-topic': `${topic}.dlq`,
        },
        {},
      );

    beforeAll(async () => {
      broker = await startKafkaBroker();
    });
    afterAll(async () => {
      await broker?.stop();
    });

    it("stores what the Python client's Kafka transport sends, keyed as our transport keys it", async () => {
      const topic = 'python';
      await broker.createTopics([topic, `${topic}.dlq`], 3);
      const ctx = await startServer(backend, { kafka: kafkaFor(topic) });
      try {
        const script = `
import sys, uuid
from datetime import datetime, timezone
from openlineage.client import OpenLineageClient
from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import parent_run
client = OpenLineageClient(transport=KafkaTransport(KafkaConfig(config={"bootstrap.servers": sys.argv[1]}, topic=sys.argv[2], flush=False)))
now = lambda: datetime.now(timezone.utc).isoformat()
parent_id = str(uuid.uuid4())
for i in range(60):
    run_id = str(uuid.uuid4())
    facets = {}
    if i % 3 == 0:
        facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=parent_id), job=parent_run.Job(namespace="py", name="dag"),
            root=parent_run.Root(run=parent_run.RootRun(runId=parent_id), job=parent_run.RootJob(namespace="py", name="root_dag")))
    for state in (RunState.START, RunState.COMPLETE):
        client.emit(RunEvent(eventType=state, eventTime=now(), run=Run(runId=run_id, facets=facets), job=Job(namespace="py", name=f"task_{i % 7}"), producer="https://example.com/py"))
client.transport.wait_for_completion()
print("sent")
`;
        const { stdout } = await run(openLineagePython(), ['-c', script, broker.bootstrap, topic]);
        expect(stdout.trim()).toBe('sent');
        await until(
          '120 events stored',
          () => storedRunEvents(ctx.url),
          (count) => count >= 120,
        );
        expect(await storedRunEvents(ctx.url)).toBe(120);
        expect(ctx.server.kafka!.stats).toMatchObject({ stored: 120, deadLettered: 0 });
        // Every partition the server holds is a series of the lag, down to 0 once its offsets are committed.
        const lags = await until(
          'the lag of every partition at 0',
          () => consumerLag(ctx.url, topic),
          (lag) => lag.size === 3 && totalLag(lag) === 0,
        );
        expect([...lags.keys()].sort()).toEqual([0, 1, 2]);
        const runs = (await (await fetch(`${ctx.url}/api/v1/namespaces/py/jobs/task_0/runs`)).json()) as {
          runs: { state: string }[];
        };
        expect(runs.runs.length).toBeGreaterThan(0);
        expect(runs.runs.every((r) => r.state === 'COMPLETED')).toBe(true);
        // The Python transport's keys are the ones kafkaMessageKey (used by our transport and the proxy) gives.
        const messages = await readTopic(broker.bootstrap, topic, 120);
        const keys = messages.map((message) => [
          message.key,
          kafkaMessageKey(JSON.parse(message.value) as OpenLineageEvent),
        ]);
        expect(keys.filter(([sent, ours]) => sent !== ours)).toEqual([]);
        expect(new Set(keys.map(([key]) => key))).toContain('run:py/root_dag');
      } finally {
        await ctx.stop();
      }
    });

    it('sends a batch larger than the broker takes in one request (1 MiB a partition) through our transport', async () => {
      const topic = 'large-batch';
      await broker.createTopics([topic], 1);
      const transport = createKafkaTransport({ topic, config: { 'bootstrap.servers': broker.bootstrap } });
      // 300 events of ~8 KB, all on one partition: 2.4 MB, more than one produce request may carry.
      const padding = 'x'.repeat(8 * 1024);
      const events = Array.from({ length: 300 }, (_, i) => ({
        ...runEvent('large', `job_${i}`),
        job: { namespace: 'large', name: 'one_key', facets: { documentation: { description: padding } } },
      }));
      try {
        expect(await transport.emitBatch!(events as unknown as OpenLineageEvent[])).toEqual({
          status: 'success',
        });
      } finally {
        await transport.close(1000);
      }
      const messages = await readTopic(broker.bootstrap, topic, 300);
      expect(
        messages.map((message) => (JSON.parse(message.value) as { run: { runId: string } }).run.runId),
      ).toEqual(events.map((event) => event.run.runId));
    });

    it('writes poison messages to the dead-letter topic with the reason and moves on', async () => {
      const topic = 'poison';
      await broker.createTopics([topic, `${topic}.dlq`], 1);
      const ctx = await startServer(backend, { kafka: kafkaFor(topic) });
      const { Producer } = await import('@platformatic/kafka');
      const producer = new Producer({ clientId: 'poison', bootstrapBrokers: [broker.bootstrap] });
      try {
        const good = (name: string) => Buffer.from(JSON.stringify(runEvent('poison', name, 'COMPLETE')));
        await producer.send({
          acks: -1,
          messages: [
            { topic, value: good('first') },
            { topic, key: Buffer.from('k1'), value: Buffer.from('{"eventType": "START", not json') },
            {
              topic,
              value: Buffer.from(
                JSON.stringify({ ...runEvent('poison', 'bad', 'START'), eventTime: 'yesterday' }),
              ),
            },
            { topic, value: Buffer.alloc(0) },
            { topic, value: good('last') },
          ],
        });
        await until(
          'the two good events stored',
          () => storedRunEvents(ctx.url),
          (count) => count >= 2,
        );
        const dead = await readTopic(broker.bootstrap, `${topic}.dlq`, 3);
        const summary = dead.map((message) => ({
          offset: message.headers.get(DEAD_LETTER_HEADERS.offset),
          topic: message.headers.get(DEAD_LETTER_HEADERS.topic),
          status: message.headers.get(DEAD_LETTER_HEADERS.status),
        }));
        expect(summary).toEqual([
          { offset: '1', topic, status: 'invalid' },
          { offset: '2', topic, status: 'invalid' },
          { offset: '3', topic, status: 'invalid' },
        ]);
        const reasons = dead.map((message) => message.headers.get(DEAD_LETTER_HEADERS.reason));
        expect(reasons[0]).toMatch(/not valid JSON/);
        expect(reasons[1]).toMatch(/eventTime/);
        expect(reasons[2]).toMatch(/no value/);
        expect(dead[0]!.key).toBe('k1');
        expect(dead[0]!.value).toBe('{"eventType": "START", not json');
        await until(
          'the last offset committed',
          () => ctx.server.kafka!.stats.commits,
          (commits) => commits > 0,
        );
        expect(ctx.server.kafka!.stats).toMatchObject({ stored: 2, deadLettered: 3 });
        // Everything is committed: a reader of the group starts after the last message.
        const probe = new Consumer({
          clientId: 'probe',
          groupId: `g-${topic}`,
          bootstrapBrokers: [broker.bootstrap],
        });
        const committed = await probe.listCommittedOffsets({ topics: [{ topic, partitions: [0] }] });
        await probe.close();
        expect(committed.get(topic)).toEqual([5n]);
      } finally {
        await producer.close();
        await ctx.stop();
      }
    });

    it('redacts what it consumes exactly as what is posted (one front door)', async () => {
      const topic = 'redacted';
      await broker.createTopics([topic, `${topic}.dlq`], 1);
      const rules = path.join(await mkdtemp(path.join(os.tmpdir(), 'headwater-kafka-redaction-')), 'r.json');
      await writeFile(
        rules,
        JSON.stringify({
          rules: [{ name: 'emails', type: 'mask', builtin: 'email', replacement: '<email>' }],
        }),
      );
      const { redaction } = resolveConfig({ 'redaction-config': rules }, {});
      const ctx = await startServer(backend, { kafka: kafkaFor(topic), redaction });
      const { Producer } = await import('@platformatic/kafka');
      const producer = new Producer({ clientId: 'redacted', bootstrapBrokers: [broker.bootstrap] });
      try {
        const event = runEvent('redacted', 'load');
        const errorMessage = {
          _producer: 'https://example.com/streams-test',
          _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json',
          message: 'mail to ana.zzleak@corp.example bounced',
          programmingLanguage: 'python',
        };
        const sent = { ...event, run: { ...event.run, facets: { errorMessage } } };
        await producer.send({ acks: -1, messages: [{ topic, value: Buffer.from(JSON.stringify(sent)) }] });
        await until(
          'the event stored',
          () => storedRunEvents(ctx.url),
          (count) => count >= 1,
        );
        const { events } = (await (await fetch(`${ctx.url}/api/v1/events/lineage`)).json()) as {
          events: { run: { facets: Record<string, Record<string, unknown>> } }[];
        };
        expect(events[0]!.run.facets.errorMessage!.message).toBe('mail to <email> bounced');
        expect(events[0]!.run.facets.headwater_redaction!.rules).toEqual([{ name: 'emails', changes: 1 }]);
      } finally {
        await producer.close();
        await ctx.stop();
        await rm(path.dirname(rules), { recursive: true, force: true });
      }
    });

    it('stores every event exactly once when the consumer is SIGKILLed mid-batch and restarted', async () => {
      const topic = 'killed';
      const total = 4000;
      await broker.createTopics([topic, `${topic}.dlq`], 2);
      const transport = createKafkaTransport({ topic, config: { 'bootstrap.servers': broker.bootstrap } });
      for (let sent = 0; sent < total; sent += 500) {
        const events = Array.from({ length: 500 }, (_, i) =>
          runEvent('killed', `job_${(sent + i) % 50}`, 'COMPLETE'),
        );
        expect(await transport.emitBatch!(events)).toEqual({ status: 'success' });
      }
      await transport.close(1000);
      const { config, cleanup } = await backend.fresh();
      const args = kafkaServeArgs(config, broker.bootstrap, topic);
      try {
        const first = await spawnServer(args);
        const partial = await until(
          'some events stored',
          () => storedRunEvents(first.url),
          (count) => count > 0,
          { timeoutMs: 60_000 },
        );
        first.process.kill('SIGKILL');
        await first.exited;
        expect(partial).toBeLessThan(total);
        const second = await spawnServer(args);
        try {
          await until(
            `all ${total} events stored`,
            () => storedRunEvents(second.url),
            (count) => count >= total,
            { timeoutMs: 120_000 },
          );
          // Nothing left to consume (offsets are committed after their events are stored): anything delivered
          // twice and stored twice would show as more.
          await until(
            'no lag',
            () => consumerLag(second.url, topic),
            (lag) => lag.size === 2 && totalLag(lag) === 0,
          );
          expect(await storedRunEvents(second.url)).toBe(total);
        } finally {
          second.process.kill('SIGTERM');
          expect(await second.exited).toBe(0);
        }
      } finally {
        await cleanup();
      }
    });

    it.skipIf(backend.name !== 'postgres')(
      'shares the partitions between replicas, and the survivor takes them all when one is SIGKILLed',
      async () => {
        const topic = 'replicated';
        await broker.createTopics([topic, `${topic}.dlq`], 4);
        const { config, cleanup } = await backend.fresh();
        const args = kafkaServeArgs(config, broker.bootstrap, topic);
        // The first takes the writer lock; the second follows and hands what it consumes to the writer.
        const writer = await spawnServer(args);
        const follower = await spawnServer(args);
        const transport = createKafkaTransport({ topic, config: { 'bootstrap.servers': broker.bootstrap } });
        const send = async (count: number, prefix: string) => {
          for (let sent = 0; sent < count; sent += 250) {
            const events = Array.from({ length: 250 }, (_, i) => runEvent('replicas', `${prefix}_${i % 20}`));
            expect(await transport.emitBatch!(events)).toEqual({ status: 'success' });
          }
        };
        try {
          const held = async () => [
            await consumerLag(writer.url, topic),
            await consumerLag(follower.url, topic),
          ];
          const [mine, theirs] = await until(
            'both replicas holding partitions',
            held,
            ([a, b]) => a!.size > 0 && b!.size > 0 && a!.size + b!.size === 4,
          );
          expect([...mine!.keys(), ...theirs!.keys()].sort()).toEqual([0, 1, 2, 3]);
          await send(2000, 'first');
          await until(
            '2000 stored',
            () => storedRunEvents(writer.url),
            (count) => count >= 2000,
          );
          // Both consumed their share: the follower's went through the writer.
          for (const server of [writer, follower]) {
            const consumed = parseExposition(await (await fetch(`${server.url}/metrics`)).text()).get(
              'headwater_kafka_messages_consumed_total',
            );
            expect(consumed).toBeGreaterThan(0);
          }
          // The writer dies mid-stream: the follower must become the writer and take its partitions.
          const second = send(2000, 'second');
          await until(
            'some of the second 2000 stored',
            () => storedRunEvents(writer.url),
            (count) => count > 2100,
          );
          writer.process.kill('SIGKILL');
          await writer.exited;
          await second;
          await until(
            'all 4000 stored through the survivor',
            () => storedRunEvents(follower.url),
            (count) => count >= 4000,
            { timeoutMs: 120_000 },
          );
          const lags = await until(
            'the survivor holding every partition, nothing behind',
            () => consumerLag(follower.url, topic),
            (lag) => lag.size === 4 && totalLag(lag) === 0,
          );
          expect(lags.size).toBe(4);
          // With no lag nothing is left to consume (offsets are committed after their events are stored), so the
          // count is final: anything stored twice would show as more.
          expect(await storedRunEvents(follower.url)).toBe(4000);
        } catch (error) {
          throw new Error(
            `${(error as Error).message}\n--- writer:\n${writer.output().slice(-3000)}\n--- follower:\n${follower.output().slice(-3000)}`,
            { cause: error },
          );
        } finally {
          await transport.close(1000);
          writer.process.kill('SIGKILL');
          follower.process.kill('SIGTERM');
          await follower.exited;
          await cleanup();
        }
      },
    );

    it.skipIf(backend.name !== 'postgres')(
      "gets a follower's events to the writer once auth is on, with the store's replica credential",
      async () => {
        const topic = 'replicated-auth';
        await broker.createTopics([topic, `${topic}.dlq`], 4);
        const { config, cleanup } = await backend.fresh();
        const args = kafkaServeArgs(config, broker.bootstrap, topic);
        const writer = await spawnServer(args);
        const follower = await spawnServer(args);
        const transport = createKafkaTransport({ topic, config: { 'bootstrap.servers': broker.bootstrap } });
        try {
          // Once a key exists every request needs credentials, the follower's forwarded batches included.
          const created = await fetch(`${writer.url}/api/v1/keys`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'root', role: 'admin', namespaces: ['*'] }),
          });
          expect(created.status).toBe(201);
          const authorization = `Bearer ${((await created.json()) as { key: string }).key}`;
          const get = async (url: string) => {
            const response = await fetch(url, { headers: { authorization } });
            expect(response.status).toBe(200);
            return response.text();
          };
          await until(
            'both replicas holding partitions',
            async () => [
              await consumerLag(writer.url, topic, { authorization }),
              await consumerLag(follower.url, topic, { authorization }),
            ],
            ([a, b]) => a!.size > 0 && b!.size > 0 && a!.size + b!.size === 4,
          );
          for (let sent = 0; sent < 1000; sent += 250) {
            const events = Array.from({ length: 250 }, (_, i) => runEvent('replicas-auth', `job_${i % 20}`));
            expect(await transport.emitBatch!(events)).toEqual({ status: 'success' });
          }
          const stored = async () =>
            (JSON.parse(await get(`${writer.url}/api/v1/events/lineage?limit=1`)) as { totalCount: number })
              .totalCount;
          await until('1000 stored', stored, (count) => count >= 1000);
          const consumed = parseExposition(await get(`${follower.url}/metrics`)).get(
            'headwater_kafka_messages_consumed_total',
          );
          expect(consumed).toBeGreaterThan(0);
          expect(follower.output()).not.toContain('the writer refused events forwarded from Kafka');
          // Nothing left to consume on either replica (offsets are committed after their events are stored): anything
          // stored twice would show as more.
          await until(
            'no lag on either replica',
            async () => [
              await consumerLag(writer.url, topic, { authorization }),
              await consumerLag(follower.url, topic, { authorization }),
            ],
            ([a, b]) => a!.size + b!.size === 4 && totalLag(a!) + totalLag(b!) === 0,
          );
          expect(await stored()).toBe(1000);
        } catch (error) {
          throw new Error(
            `${(error as Error).message}\n--- writer:\n${writer.output().slice(-3000)}\n--- follower:\n${follower.output().slice(-3000)}`,
            { cause: error },
          );
        } finally {
          await transport.close(1000);
          follower.process.kill('SIGTERM');
          writer.process.kill('SIGTERM');
          await Promise.all([follower.exited, writer.exited]);
          await cleanup();
        }
      },
    );

    it.skipIf(privatePostgresUnavailable() !== undefined && process.env.CI !== 'true')(
      'pauses while PostgreSQL is down and resumes without losing or skipping anything',
      async () => {
        const topic = 'pg-down';
        await broker.createTopics([topic, `${topic}.dlq`], 2);
        const pg = await startPrivatePostgres();
        const ctx = await startServer(backend, { databaseUrl: pg.url, kafka: kafkaFor(topic) });
        const transport = createKafkaTransport({ topic, config: { 'bootstrap.servers': broker.bootstrap } });
        const send = async (count: number, prefix: string) => {
          const events = Array.from({ length: count }, (_, i) =>
            runEvent('pg', `${prefix}_${i % 10}`, 'COMPLETE'),
          );
          expect(await transport.emitBatch!(events)).toEqual({ status: 'success' });
        };
        try {
          await send(200, 'before');
          await until(
            '200 stored',
            () => storedRunEvents(ctx.url),
            (count) => count >= 200,
          );
          await pg.stop('fast');
          await send(300, 'during');
          await until(
            'the consumer paused',
            () => ctx.server.kafka!.stats.paused,
            (paused) => paused,
          );
          // Nothing of the 300 is committed while the store is away: /metrics shows them all as lag.
          await until(
            'a lag of 300',
            async () => totalLag(await consumerLag(ctx.url, topic)),
            (lag) => lag === 300,
          );
          // Time passes on purpose with the store away: the consumer stays paused and commits nothing meanwhile.
          await new Promise((resolve) => setTimeout(resolve, 1500));
          expect(ctx.server.kafka!.stats.paused).toBe(true);
          expect(totalLag(await consumerLag(ctx.url, topic))).toBe(300);
          await pg.start();
          await until(
            '500 stored',
            () => storedRunEvents(ctx.url),
            (count) => count >= 500,
            { timeoutMs: 90_000 },
          );
          expect(await storedRunEvents(ctx.url)).toBe(500);
          expect(ctx.server.kafka!.stats).toMatchObject({ paused: false, deadLettered: 0, stored: 500 });
          expect(ctx.server.kafka!.stats.pauses).toBeGreaterThan(0);
          const after = await until(
            'no lag',
            () => consumerLag(ctx.url, topic),
            (lag) => totalLag(lag) === 0,
          );
          expect(after.size).toBe(2);
        } finally {
          await transport.close(1000);
          await ctx.stop();
          await pg.destroy();
        }
      },
    );
  },
);
