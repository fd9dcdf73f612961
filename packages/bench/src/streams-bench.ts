/**
 * `npm run bench -- streams`: what Kafka ingest and the OpenLineage proxy give and cost, on a private broker.
 *
 * Kafka to store: the same realistic events go to a fresh PostgreSQL database once as batch HTTP ingest and once
 * through a topic that `headwater serve --kafka-*` drains (produced in full first, so the drain rate is the
 * consumer's and the store's, not the producer's); then events are produced at a steady rate into the running
 * consumer and the lag from each produce call to the store counting that event is measured.
 *
 * The proxy: one event per request, the same concurrency, to a server and to a proxy whose one sink is a Kafka
 * topic; the difference of their latencies is what the proxy adds. Then batches to the proxy, and the time until
 * the topic holds every acknowledged event gives its events/s through to Kafka.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Consumer, Producer } from '@platformatic/kafka';
import { kafkaMessageKey, type OpenLineageEvent } from '@headwater/openlineage';
import { startKafkaBroker, type KafkaBroker } from '@headwater/test-support';
import { postBatch, runBatchIngest, type BatchIngestResult } from './batch-ingest.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import { ErrorTally, runWorkers } from './load.js';
import { DEFAULT_DATABASE_URL, wholeNumberFlags } from './options.js';
import { createRunEventStream } from './run-events.js';
import { startServerProcess } from './server-process.js';
import { runSingleIngest, type SingleIngestResult } from './single-ingest.js';
import { percentiles, type Percentiles } from './stats.js';
import { preparePostgresStore, type BenchStore } from './stores.js';

/** Options of the streams benchmark. */
export interface StreamsOptions {
  readonly databaseUrl: string;
  /** Events of the throughput comparison (batch HTTP against Kafka). @default 20000 */
  readonly events: number;
  /** Partitions of the ingest topic. @default 4 */
  readonly partitions: number;
  /** Events per second produced during the lag measurement. @default 500 */
  readonly rate: number;
  /** Seconds of the lag measurement. @default 15 */
  readonly lagSeconds: number;
  /** Concurrent single-event clients of the proxy measurement. @default 8 */
  readonly clients: number;
  /** Seconds of each proxy measurement (after 2 s of warm-up). @default 10 */
  readonly proxySeconds: number;
}

/** Figures of the streams benchmark. */
export interface StreamsResult {
  readonly loadAverage: { readonly start: number; readonly end: number };
  readonly events: number;
  readonly meanEventBytes: number;
  readonly batchHttpEventsPerSec: number;
  /** Producing the backlog into the topic, for scale (not the consumer's work). */
  readonly produceEventsPerSec: number;
  /** From the first event stored to the last of the backlog. */
  readonly kafkaEventsPerSec: number;
  /** From `serve` listening (the consumer joins the group then) to the first event stored. */
  readonly kafkaFirstStoredSeconds: number;
  readonly lag: { readonly rate: number; readonly events: number; readonly ms: Percentiles };
  readonly proxy: {
    readonly direct: Pick<SingleIngestResult, 'eventsPerSec' | 'latencyMs' | 'events'>;
    readonly proxied: Pick<SingleIngestResult, 'eventsPerSec' | 'latencyMs' | 'events'>;
    readonly addedMs: { readonly p50: number; readonly p99: number };
    readonly batch: Pick<BatchIngestResult, 'eventsPerSec' | 'events'>;
    /** Events of the batch phase over the time until the topic held all of them. */
    readonly toKafkaEventsPerSec: number;
  };
}

const progress = (message: string) => process.stderr.write(`bench streams: ${message}\n`);

/** Parses `streams [--events n] [--partitions n] [--rate n] [--lag-seconds n] [--clients n] [--proxy-seconds n]`. */
export function parseStreamsOptions(argv: readonly string[], env: NodeJS.ProcessEnv): StreamsOptions {
  const number = wholeNumberFlags(argv);
  return {
    databaseUrl: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    events: number('--events', 20_000),
    partitions: number('--partitions', 4),
    rate: number('--rate', 500),
    lagSeconds: number('--lag-seconds', 15),
    clients: number('--clients', 8),
    proxySeconds: number('--proxy-seconds', 10),
  };
}

/** RunEvents the server at `client` stores. */
async function storedCount(client: HttpClient): Promise<number> {
  const response = await client.get('/api/v1/events/lineage?limit=1');
  if (response.status !== 200) throw new Error(`GET /api/v1/events/lineage: HTTP ${response.status}`);
  return (JSON.parse(response.body) as { totalCount: number }).totalCount;
}

/** Polls until the server stores `count` events (or `timeoutMs` pass); returns each (time, count) seen. */
async function watchStored(
  client: HttpClient,
  count: number,
  timeoutMs: number,
  intervalMs: number,
): Promise<{ at: number; count: number }[]> {
  const samples: { at: number; count: number }[] = [];
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const seen = await storedCount(client);
    samples.push({ at: performance.now(), count: seen });
    if (seen >= count) return samples;
    if (performance.now() > deadline)
      throw new Error(`the server stored ${seen} of ${count} events in ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Kafka messages for `texts`, keyed as the OpenLineage Kafka transport keys them. */
const messagesOf = (topic: string, texts: readonly string[]) =>
  texts.map((text) => {
    const key = kafkaMessageKey(JSON.parse(text) as OpenLineageEvent);
    return { topic, value: Buffer.from(text), ...(key === undefined ? {} : { key: Buffer.from(key) }) };
  });

/** The sum of the end offsets of `topic`'s partitions: messages written to it so far. */
async function topicSize(bootstrap: string, topic: string): Promise<number> {
  const consumer = new Consumer({
    clientId: 'bench-offsets',
    groupId: 'bench-offsets',
    bootstrapBrokers: [bootstrap],
  });
  try {
    const offsets = await consumer.listOffsets({ topics: [topic] });
    return (offsets.get(topic) ?? []).reduce((sum, offset) => sum + Number(offset), 0);
  } finally {
    await consumer.close();
  }
}

/** Waits until `topic` holds `count` messages; fails after 180 s saying how many it holds. */
async function untilTopicHolds(bootstrap: string, topic: string, count: number): Promise<void> {
  const deadline = performance.now() + 180_000;
  for (;;) {
    const size = await topicSize(bootstrap, topic);
    if (size >= count) return;
    if (performance.now() > deadline)
      throw new Error(`${topic} holds ${size} of the ${count} events the proxy acknowledged after 180 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs every measurement against one private broker and fresh PostgreSQL databases. */
export async function runStreams(options: StreamsOptions): Promise<StreamsResult> {
  const loadAtStart = os.loadavg()[0] ?? 0;
  const undo: (() => Promise<unknown>)[] = [];
  const cleanupLater = <T extends { cleanup(): Promise<void> } | { stop(): Promise<unknown> }>(thing: T) => {
    undo.push(() => ('cleanup' in thing ? thing.cleanup() : thing.stop()));
    return thing;
  };
  try {
    progress('starting a Kafka broker');
    const broker: KafkaBroker = cleanupLater(await startKafkaBroker());
    const topic = 'bench-ingest';
    await broker.createTopics([topic, `${topic}.dlq`], options.partitions);
    const stream = createRunEventStream({ seed: 7 });
    const events = Array.from({ length: options.events }, () => stream.next());

    progress(`batch HTTP ingest of ${options.events} events (4 senders × 1,000)`);
    const batchHttpEventsPerSec = await batchHttp(
      cleanupLater(await preparePostgresStore(options.databaseUrl)),
      events,
    );

    progress(`producing the ${options.events} events into ${topic} (${options.partitions} partitions)`);
    const producer = new Producer({ clientId: 'bench-producer', bootstrapBrokers: [broker.bootstrap] });
    undo.push(() => producer.close());
    const produceStart = performance.now();
    // 100 events of ~5 KB a request: the broker takes at most 1 MB of records a partition a request by default.
    for (let at = 0; at < events.length; at += 100)
      await producer.send({ acks: -1, messages: messagesOf(topic, events.slice(at, at + 100)) });
    const produceEventsPerSec = events.length / ((performance.now() - produceStart) / 1000);

    const store = cleanupLater(await preparePostgresStore(options.databaseUrl));
    const server = await startServerProcess({
      serveArgs: [
        ...store.serveArgs,
        '--kafka-brokers',
        broker.bootstrap,
        '--kafka-topic',
        topic,
        '--kafka-group',
        'bench',
        '--kafka-dead-letter-topic',
        `${topic}.dlq`,
      ],
    });
    undo.push(() => server.stop(60_000));
    const listening = performance.now();
    progress(`serve consuming the backlog`);
    const client = createHttpClient(server.url, { maxSockets: 2 });
    undo.push(() => Promise.resolve(client.close()));
    const drained = await watchStored(client, events.length, 600_000, 100);
    const first = drained.find((sample) => sample.count > 0)!;
    const last = drained.at(-1)!;
    const kafkaEventsPerSec = (last.count - first.count) / ((last.at - first.at) / 1000);
    progress(
      `Kafka ingest ${Math.round(kafkaEventsPerSec)} events/s, batch HTTP ${Math.round(batchHttpEventsPerSec)}`,
    );

    const lagEvents = options.rate * options.lagSeconds;
    progress(`lag: ${options.rate} events/s for ${options.lagSeconds} s into the running consumer`);
    const lagTexts = Array.from({ length: lagEvents }, () => stream.next());
    const sentAt: number[] = [];
    const tickMs = 20;
    const perTick = Math.max(1, Math.round((options.rate * tickMs) / 1000));
    const watching = watchStored(client, events.length + lagEvents, options.lagSeconds * 1000 + 120_000, 10);
    const lagStart = performance.now();
    for (let at = 0; at < lagEvents; at += perTick) {
      // Paced against the clock, so a slow send is caught up rather than lowering the rate.
      const due = lagStart + (at / options.rate) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const chunk = lagTexts.slice(at, at + perTick);
      const now = performance.now();
      for (let i = 0; i < chunk.length; i++) sentAt.push(now);
      await producer.send({ acks: -1, messages: messagesOf(topic, chunk) });
    }
    const samples = await watching;
    // The k-th event of the phase counts as stored when the store first holds backlog + k + 1 events: partitions
    // are drained in parallel, so this reads the store as a queue (an estimate of each event's own time).
    const lags: number[] = [];
    let sample = 0;
    for (let k = 0; k < lagEvents; k++) {
      while (sample < samples.length - 1 && samples[sample]!.count < events.length + k + 1) sample++;
      lags.push(samples[sample]!.at - sentAt[k]!);
    }
    await server.stop(60_000);

    progress(`proxy: ${options.clients} clients, one event per request, to a server and to the proxy`);
    const proxy = await measureProxy(broker, options, cleanupLater);
    return {
      loadAverage: { start: loadAtStart, end: os.loadavg()[0] ?? 0 },
      events: events.length,
      meanEventBytes: stream.meanBytes,
      batchHttpEventsPerSec,
      produceEventsPerSec,
      kafkaEventsPerSec,
      kafkaFirstStoredSeconds: (first.at - listening) / 1000,
      lag: { rate: options.rate, events: lagEvents, ms: percentiles(lags) },
      proxy,
    };
  } finally {
    for (const step of undo.reverse()) await step().catch(() => undefined);
  }
}

/** Batch HTTP ingest of `events` (4 senders, 1,000 a request) into a server on `store`; events/s. */
async function batchHttp(store: BenchStore, events: readonly string[]): Promise<number> {
  const server = await startServerProcess({ serveArgs: store.serveArgs });
  const client = createHttpClient(server.url, { maxSockets: 4 });
  try {
    const tally = new ErrorTally(server);
    let next = 0;
    let acknowledged = 0;
    const started = performance.now();
    await runWorkers(4, async () => {
      while (next < events.length && !tally.hopeless) {
        const batch = events.slice(next, (next += 1000));
        const summary = await postBatch(client, `[${batch.join(',')}]`, tally);
        acknowledged += summary?.successful ?? 0;
      }
    });
    const seconds = (performance.now() - started) / 1000;
    if (acknowledged !== events.length)
      throw new Error(
        `batch HTTP ingest acknowledged ${acknowledged} of ${events.length}: ${tally.result.first}`,
      );
    return acknowledged / seconds;
  } finally {
    client.close();
    await server.stop(60_000);
  }
}

async function measureProxy(
  broker: KafkaBroker,
  options: StreamsOptions,
  cleanupLater: <T extends { cleanup(): Promise<void> } | { stop(): Promise<unknown> }>(thing: T) => T,
): Promise<StreamsResult['proxy']> {
  const single = {
    clients: options.clients,
    seconds: options.proxySeconds,
    maxEvents: Infinity,
    warmupSeconds: 2,
  };
  const store = cleanupLater(await preparePostgresStore(options.databaseUrl));
  const server = cleanupLater(await startServerProcess({ serveArgs: store.serveArgs }));
  const direct = await runSingleIngest(server, createRunEventStream({ seed: 5 }), single);
  await server.stop(60_000);

  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-bench-proxy-'));
  cleanupLater({ cleanup: () => rm(dir, { recursive: true, force: true }) });
  const topic = 'bench-proxy';
  await broker.createTopics([topic], options.partitions);
  const config = path.join(dir, 'proxy.json');
  await writeFile(
    config,
    JSON.stringify({
      // Past its bound a sink's spool drops new events: the bound must be above what a run sends (~100 MB).
      spool: { dir: 'spool', maxBytesPerSink: 4 * 1024 ** 3 },
      sinks: { kafka: { type: 'kafka', topic, config: { 'bootstrap.servers': broker.bootstrap } } },
      routes: [{ sinks: ['kafka'] }],
    }),
  );
  const proxy = cleanupLater(await startServerProcess({ command: 'proxy', serveArgs: ['--config', config] }));
  const proxied = await runSingleIngest(proxy, createRunEventStream({ seed: 5 }), single);
  progress(
    `proxy: p50 ${proxied.latencyMs.p50.toFixed(1)} ms against ${direct.latencyMs.p50.toFixed(1)} ms direct; ` +
      'waiting for the topic to hold every acknowledged event',
  );
  await untilTopicHolds(broker.bootstrap, topic, proxied.events + proxied.warmupEvents);

  progress(`proxy: batches of 500 from 4 senders, then until the topic holds them all`);
  const before = await topicSize(broker.bootstrap, topic);
  const batchStart = performance.now();
  const batch = await runBatchIngest(proxy, createRunEventStream({ seed: 6 }), {
    batchSize: 500,
    senders: 4,
    seconds: options.proxySeconds,
    maxEvents: Infinity,
  });
  const expected = before + batch.events + batch.warmupEvents;
  await untilTopicHolds(broker.bootstrap, topic, expected);
  const toKafkaEventsPerSec = (expected - before) / ((performance.now() - batchStart) / 1000);
  progress(`proxy: ${Math.round(toKafkaEventsPerSec)} events/s through to Kafka`);
  await proxy.stop(60_000);
  const pick = (result: SingleIngestResult) => ({
    eventsPerSec: result.eventsPerSec,
    latencyMs: result.latencyMs,
    events: result.events,
  });
  return {
    direct: pick(direct),
    proxied: pick(proxied),
    addedMs: {
      p50: proxied.latencyMs.p50 - direct.latencyMs.p50,
      p99: proxied.latencyMs.p99 - direct.latencyMs.p99,
    },
    batch: { eventsPerSec: batch.eventsPerSec, events: batch.events },
    toKafkaEventsPerSec,
  };
}

/** The table of the streams benchmark. */
export function formatStreamsTable(result: StreamsResult): string {
  const n = (value: number) => Math.round(value).toLocaleString('en-US');
  const ms = (value: number) => value.toFixed(1);
  const { proxy, lag } = result;
  return [
    `streams benchmark, load average ${result.loadAverage.start.toFixed(1)} at start, ${result.loadAverage.end.toFixed(1)} at end; ` +
      `${n(result.events)} events of ${n(result.meanEventBytes)} bytes`,
    `batch HTTP ingest                 ${n(result.batchHttpEventsPerSec)} events/s`,
    `Kafka ingest (backlog drain)      ${n(result.kafkaEventsPerSec)} events/s (first stored ${result.kafkaFirstStoredSeconds.toFixed(1)} s after listening; produced at ${n(result.produceEventsPerSec)} events/s)`,
    `Kafka lag at ${n(lag.rate)} events/s        p50 ${n(lag.ms.p50)} ms, p95 ${n(lag.ms.p95)} ms, max ${n(lag.ms.max)} ms (${n(lag.events)} events)`,
    `single event to the server        p50 ${ms(proxy.direct.latencyMs.p50)} ms, p99 ${ms(proxy.direct.latencyMs.p99)} ms, ${n(proxy.direct.eventsPerSec)} events/s`,
    `single event to the proxy         p50 ${ms(proxy.proxied.latencyMs.p50)} ms, p99 ${ms(proxy.proxied.latencyMs.p99)} ms, ${n(proxy.proxied.eventsPerSec)} events/s`,
    `added by the proxy                p50 ${ms(proxy.addedMs.p50)} ms, p99 ${ms(proxy.addedMs.p99)} ms`,
    `proxy batches to Kafka            ${n(proxy.batch.eventsPerSec)} events/s acknowledged, ${n(proxy.toKafkaEventsPerSec)} events/s until all in the topic`,
  ].join('\n');
}
