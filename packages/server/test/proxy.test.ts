import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createKafkaTransport } from '@headwater/openlineage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startServer } from './helpers/backends.js';
import { spawnServer } from './helpers/child-server.js';
import { kafkaAvailable, readTopic, startKafkaBroker, type KafkaBroker } from './helpers/kafka-broker.js';
import { freePort } from './helpers/private-postgres.js';
import { runEvent, storedRunEvents } from './helpers/stream-events.js';
import { waitFor } from './helpers/wait.js';

const backend = backends()[0]!;

/** An OpenLineage HTTP endpoint shaped like Marquez's: POST /api/v1/lineage, one event, 201; checks its auth header. */
function marquezShaped(port: number, token: string) {
  const runIds: string[] = [];
  let refused = 0;
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url !== '/api/v1/lineage' || request.method !== 'POST') {
        response.writeHead(404).end();
        return;
      }
      if (request.headers.authorization !== `Bearer ${token}`) {
        refused++;
        response.writeHead(401).end();
        return;
      }
      runIds.push((JSON.parse(body) as { run: { runId: string } }).run.runId);
      response.writeHead(201).end();
    });
  });
  return {
    runIds,
    get refused() {
      return refused;
    },
    start: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The run ids in `topic`, read until every one of `expected` is among them (or 30 s pass). */
async function topicRunIds(bootstrap: string, topic: string, expected: readonly string[]) {
  const ids = new Set<string>();
  const wanted = new Set(expected);
  await readTopic(bootstrap, topic, (messages) => {
    const id = (JSON.parse(messages.at(-1)!.value) as { run: { runId: string } }).run.runId;
    ids.add(id);
    wanted.delete(id);
    return wanted.size === 0;
  });
  return ids;
}

const archivedRunIds = (dir: string) =>
  new Set(
    readdirSync(dir)
      .filter((file) => file.endsWith('.ndjson'))
      .flatMap((file) => readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean))
      .map((line) => (JSON.parse(line) as { run: { runId: string } }).run.runId),
  );

// Brokers, child processes and real delivery: slow on a loaded machine.
describe.skipIf(!kafkaAvailable('proxy'))('headwater proxy and forwarding', { timeout: 240_000 }, () => {
  let broker: KafkaBroker;
  let dir: string;
  beforeAll(async () => {
    broker = await startKafkaBroker();
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-proxy-test-'));
  });
  afterAll(async () => {
    await broker?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('loses nothing acknowledged when SIGKILLed under load with one sink down', async () => {
    const topic = 'proxied';
    await broker.createTopics([topic], 2);
    const headwater = await startServer(backend);
    const marquezPort = await freePort();
    const marquez = marquezShaped(marquezPort, 'm-token');
    const configFile = path.join(dir, 'kill.yml');
    await writeFile(
      configFile,
      JSON.stringify({
        spool: { dir: 'kill-spool' },
        sinks: {
          kafka: { type: 'kafka', topic, config: { 'bootstrap.servers': broker.bootstrap } },
          headwater: { type: 'http', url: headwater.url },
          marquez: {
            type: 'http',
            url: `http://127.0.0.1:${marquezPort}`,
            auth: { type: 'api_key', apiKey: 'm-token' },
            timeout: 1,
          },
          archive: { type: 'archive', dir: 'kill-archive' },
        },
        routes: [
          { sinks: ['kafka', 'headwater', 'archive'] },
          { sinks: ['marquez'], include: { namespace: ['prod'] } },
        ],
      }),
    );
    const proxy = await spawnServer(['--config', configFile], 'proxy');
    const acknowledged: { runId: string; namespace: string }[] = [];
    /** Namespace of every event sent, acknowledged or not (one the proxy spooled but could not answer may arrive). */
    const sent = new Map<string, string>();
    let killed = false;
    // Producers in parallel, batches of 20; the proxy is killed once 600 events are acknowledged.
    const producer = async (worker: number) => {
      for (let round = 0; !killed; round++) {
        const events = Array.from({ length: 20 }, (_, i) =>
          runEvent(i % 2 === 0 ? 'prod' : 'dev', `job_${worker}_${i}`),
        );
        for (const event of events) sent.set(event.run.runId, event.job.namespace);
        try {
          const response = await fetch(`${proxy.url}/api/v1/lineage/batch`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(events),
          });
          if (response.status === 200)
            for (const event of events)
              acknowledged.push({ runId: event.run.runId, namespace: event.job.namespace });
        } catch {
          return;
        }
        if (acknowledged.length >= 600 && !killed) {
          killed = true;
          proxy.process.kill('SIGKILL');
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map((worker) => producer(worker)));
    await proxy.exited;
    expect(acknowledged.length).toBeGreaterThanOrEqual(600);
    // Restarted, with the Marquez-shaped sink back up: every acknowledged event reaches every sink routed to.
    await marquez.start();
    const again = await spawnServer(['--config', configFile], 'proxy');
    try {
      const all = acknowledged.map((event) => event.runId);
      const prod = acknowledged.filter((event) => event.namespace === 'prod').map((event) => event.runId);
      await waitFor('the Marquez-shaped sink has every prod event', () => {
        const received = new Set(marquez.runIds);
        return prod.every((id) => received.has(id));
      });
      const atMarquez = new Set(marquez.runIds);
      expect(prod.filter((id) => !atMarquez.has(id))).toEqual([]);
      // Only prod events are routed there (some sent but not acknowledged before the kill may arrive too).
      expect([...atMarquez].filter((id) => sent.get(id) !== 'prod')).toEqual([]);
      await waitFor(
        'Headwater has every event',
        async () => (await storedRunEvents(headwater.url)) >= all.length,
      );
      const archive = path.join(dir, 'kill-archive');
      await waitFor('the archive has every event', () => {
        const archived = archivedRunIds(archive);
        return all.every((id) => archived.has(id));
      });
      const inKafka = await topicRunIds(broker.bootstrap, topic, all);
      expect(all.filter((id) => !inKafka.has(id))).toEqual([]);
      expect(marquez.refused).toBe(0);
      const metrics = await (await fetch(`${again.url}/metrics`)).text();
      expect(metrics).toMatch(/headwater_proxy_spool_depth\{sink="marquez"\} \d+/);
      expect(metrics).toMatch(/headwater_proxy_delivered_total\{sink="marquez"\} \d+/);
      expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    } finally {
      again.process.kill('SIGTERM');
      await again.exited;
      await marquez.stop();
      await headwater.stop();
    }
  });

  it('refuses bad events at the edge with the server’s errors', async () => {
    const configFile = path.join(dir, 'edge.yml');
    await writeFile(configFile, 'sinks:\n  archive: { type: archive, dir: edge-archive }\n');
    const proxy = await spawnServer(['--config', configFile], 'proxy');
    const headwater = await startServer(backend);
    try {
      const bad = JSON.stringify({ ...runEvent('ns', 'j'), eventTime: 'yesterday' });
      const post = (url: string) =>
        fetch(`${url}/api/v1/lineage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: bad,
        });
      const [fromProxy, fromServer] = await Promise.all([post(proxy.url), post(headwater.url)]);
      expect(fromProxy.status).toBe(422);
      expect(await fromProxy.json()).toEqual(await fromServer.json());
      const batch = await fetch(`${proxy.url}/api/v1/lineage/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `[${JSON.stringify(runEvent('ns', 'good'))},${bad}]`,
      });
      expect(await batch.json()).toMatchObject({
        status: 'partial_success',
        summary: { successful: 1, failed: 1 },
      });
      await waitFor(
        'the good event archived',
        () => archivedRunIds(path.join(dir, 'edge-archive')).size === 1,
      );
    } finally {
      proxy.process.kill('SIGTERM');
      await proxy.exited;
      await headwater.stop();
    }
  });

  it('reads a Kafka topic as its source and feeds an HTTP-only backend', async () => {
    const topic = 'source';
    await broker.createTopics([topic, `${topic}.dlq`], 2);
    const headwater = await startServer(backend);
    const configFile = path.join(dir, 'source.yml');
    await writeFile(
      configFile,
      JSON.stringify({
        spool: { dir: 'source-spool' },
        sinks: { headwater: { type: 'http', url: headwater.url } },
        source: {
          kafka: {
            topics: [topic],
            group: 'proxy',
            deadLetterTopic: `${topic}.dlq`,
            config: { 'bootstrap.servers': broker.bootstrap },
          },
        },
      }),
    );
    const proxy = await spawnServer(['--config', configFile], 'proxy');
    const transport = createKafkaTransport({ topic, config: { 'bootstrap.servers': broker.bootstrap } });
    try {
      const events = Array.from({ length: 300 }, (_, i) => runEvent('from-kafka', `j${i % 5}`));
      expect(await transport.emitBatch!(events)).toEqual({ status: 'success' });
      await waitFor('300 events in Headwater', async () => (await storedRunEvents(headwater.url)) >= 300);
      expect(await storedRunEvents(headwater.url)).toBe(300);
    } finally {
      await transport.close(1000);
      proxy.process.kill('SIGTERM');
      await proxy.exited;
      await headwater.stop();
    }
  });

  it('forwards what serve stores to a second Headwater and a Marquez-shaped endpoint', async () => {
    const second = await startServer(backend);
    const marquezPort = await freePort();
    const marquez = marquezShaped(marquezPort, 'fwd');
    await marquez.start();
    const configFile = path.join(dir, 'forward.yml');
    await writeFile(
      configFile,
      JSON.stringify({
        spool: { dir: 'forward-spool' },
        sinks: {
          second: { type: 'http', url: second.url },
          marquez: {
            type: 'http',
            url: `http://127.0.0.1:${marquezPort}`,
            custom_headers: { Authorization: 'Bearer fwd' },
          },
        },
        routes: [{ sinks: ['second'] }, { sinks: ['marquez'], exclude: { job: ['*.tmp'] } }],
      }),
    );
    const first = await startServer(backend, { forwardConfig: configFile });
    try {
      const events = Array.from({ length: 40 }, (_, i) =>
        runEvent('fwd', i % 4 === 0 ? `scratch_${i}.tmp` : `job_${i}`),
      );
      const response = await fetch(`${first.url}/api/v1/lineage/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(response.status).toBe(200);
      // Sent again: stored once, so forwarded once.
      await fetch(`${first.url}/api/v1/lineage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(events[1]),
      });
      await waitFor(
        '40 events in the second Headwater',
        async () => (await storedRunEvents(second.url)) >= 40,
      );
      await waitFor('30 events at the Marquez-shaped sink', () => marquez.runIds.length >= 30);
      // Both spools drained: every copy the forwarder was given has been delivered, so a second copy of the event
      // sent again would be here by now.
      const forwarder = first.server.forwarder!;
      await waitFor(
        'the spools to drain',
        () => forwarder.depth('second') + forwarder.depth('marquez') === 0,
      );
      expect(marquez.runIds.length).toBe(30);
      expect(await storedRunEvents(second.url)).toBe(40);
    } finally {
      await first.stop();
      await second.stop();
      await marquez.stop();
    }
  });
});
