import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Admin, Consumer, type Message } from '@platformatic/kafka';
import { freePort } from './private-postgres.js';

/** The Kafka version whose jars packages/server/ci/kafka-setup.sh provisions. */
const KAFKA_VERSION = '4.4.0';
const OPENLINEAGE_PYTHON_VERSION = '1.54.0';

/** Where kafka-setup.sh keeps its cache: the same default as the script, or HEADWATER_KAFKA_CACHE. */
function cacheDir(): string {
  if (process.env.HEADWATER_KAFKA_CACHE) return process.env.HEADWATER_KAFKA_CACHE;
  if (existsSync('/var/cache/headwater')) return '/var/cache/headwater';
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'headwater');
}

/** The folder of the broker's jars. */
export function kafkaLibDir(): string {
  return path.join(cacheDir(), `kafka-${KAFKA_VERSION}`, 'lib');
}

/** The Python of the venv with openlineage-python and confluent-kafka. */
export function openLineagePython(): string {
  return path.join(cacheDir(), `openlineage-python-${OPENLINEAGE_PYTHON_VERSION}-venv`, 'bin', 'python');
}

const SETUP_HINT = 'run packages/server/ci/kafka-setup.sh to provision them';

/** Why the broker (and the Python producer) cannot run here, or undefined when they can. */
function unavailable(): string | undefined {
  if (!existsSync(path.join(kafkaLibDir(), '.complete'))) return `no Kafka jars in ${kafkaLibDir()}`;
  if (!existsSync(openLineagePython())) return `no openlineage-python venv at ${openLineagePython()}`;
  return undefined;
}

/**
 * Whether the tests that need a Kafka broker run. Locally they skip with a message when the jars are absent;
 * in CI (CI=true) an absent broker fails the run instead of silently testing less.
 */
export function kafkaAvailable(suite: string): boolean {
  const reason = unavailable();
  if (reason === undefined) return true;
  if (process.env.CI === 'true')
    throw new Error(`CI=true but ${reason}: the Kafka tests must run in CI (${SETUP_HINT}).`);
  console.warn(`${suite}: skipping the Kafka tests: ${reason} (${SETUP_HINT}).`);
  return false;
}

/** A private single-node KRaft broker on loopback. */
export interface KafkaBroker {
  /** host:port of its PLAINTEXT listener. */
  readonly bootstrap: string;
  readonly process: ChildProcess;
  /** Creates topics with `partitions` partitions each (replication 1) and waits until they have leaders. */
  createTopics(topics: readonly string[], partitions?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s; deletes its files. */
  stop(): Promise<void>;
}

/**
 * A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (what StorageTool random-uuid prints),
 * never starting with '-', which the tool's argument parser would take for an option (1 start in 64 failed).
 */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function java(args: readonly string[], dir: string): ChildProcess {
  return spawn(
    'java',
    [
      '-Xms256m',
      '-Xmx512m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Dlog4j2.configurationFile=${path.join(dir, 'log4j2.properties')}`,
      `-Dkafka.logs.dir=${path.join(dir, 'logs')}`,
      '-cp',
      `${kafkaLibDir()}/*`,
      ...args,
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

async function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/**
 * Starts a broker+controller in one process in a temporary folder, on two free loopback ports, and resolves
 * once it has logged "Kafka Server started".
 */
export async function startKafkaBroker(): Promise<KafkaBroker> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-kafka-'));
  const [port, controllerPort] = [await freePort(), await freePort()];
  const bootstrap = `127.0.0.1:${port}`;
  const properties = [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://${bootstrap},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://${bootstrap}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${path.join(dir, 'data')}`,
    'num.partitions=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=4',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
  ];
  await writeFile(path.join(dir, 'server.properties'), `${properties.join('\n')}\n`);
  await writeFile(
    path.join(dir, 'log4j2.properties'),
    [
      'appender.file.type=File',
      'appender.file.name=file',
      `appender.file.fileName=${path.join(dir, 'broker.log')}`,
      'appender.file.layout.type=PatternLayout',
      'appender.file.layout.pattern=[%d] %p %m (%c)%n',
      'rootLogger.level=INFO',
      'rootLogger.appenderRef.file.ref=file',
      '',
    ].join('\n'),
  );
  const format = java(
    ['kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', 'server.properties'],
    dir,
  );
  let formatOutput = '';
  format.stdout!.on('data', (chunk: Buffer) => (formatOutput += chunk.toString()));
  format.stderr!.on('data', (chunk: Buffer) => (formatOutput += chunk.toString()));
  if ((await exitOf(format)) !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`kafka StorageTool format failed:\n${formatOutput}`);
  }
  const broker = java(['kafka.Kafka', 'server.properties'], dir);
  broker.stdout!.resume();
  broker.stderr!.resume();
  const log = path.join(dir, 'broker.log');
  const started = Date.now();
  for (;;) {
    const text = await readFile(log, 'utf8').catch(() => '');
    if (text.includes('Kafka Server started')) break;
    if (broker.exitCode !== null || Date.now() - started > 90_000) {
      broker.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
      throw new Error(`the Kafka broker did not start in 90 s:\n${text.slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    bootstrap,
    process: broker,
    async createTopics(topics, partitions = 1) {
      const admin = new Admin({ clientId: 'headwater-test-admin', bootstrapBrokers: [bootstrap] });
      try {
        await admin.createTopics({ topics: [...topics], partitions, replicas: 1 });
        for (let attempt = 0; ; attempt++) {
          const metadata = await admin.metadata({ topics: [...topics], forceUpdate: true });
          const ready = topics.every((topic) => {
            const info = metadata.topics.get(topic);
            return info !== undefined && info.partitions.every((partition) => partition.leader >= 0);
          });
          if (ready) break;
          if (attempt > 100) throw new Error(`topics ${topics.join(', ')} have no leader after 10 s`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        await admin.close();
      }
    },
    async stop() {
      if (broker.exitCode === null && broker.signalCode === null) {
        broker.kill('SIGTERM');
        const timer = setTimeout(() => broker.kill('SIGKILL'), 10_000);
        await exitOf(broker);
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Reads `topic` from its start, with a group of its own, until `count` messages are in (or `count` says enough),
 * failing after 30 s.
 */
export async function readTopic(
  bootstrap: string,
  topic: string,
  count: number | ((messages: readonly Message<string, string, string, string>[]) => boolean),
): Promise<Message<string, string, string, string>[]> {
  const enough = typeof count === 'number' ? (read: readonly unknown[]) => read.length >= count : count;
  const consumer = new Consumer<string, string, string, string>({
    clientId: 'test-reader',
    groupId: `reader-${randomUUID()}`,
    bootstrapBrokers: [bootstrap],
    deserializers: {
      key: (data) => data?.toString('utf8') ?? '',
      value: (data) => data?.toString('utf8') ?? '',
      headerKey: (data) => data?.toString('utf8') ?? '',
      headerValue: (data) => data?.toString('utf8') ?? '',
    },
  });
  const messages: Message<string, string, string, string>[] = [];
  try {
    const stream = await consumer.consume({
      topics: [topic],
      mode: 'earliest',
      autocommit: false,
      maxWaitTime: 200,
    });
    const timer = setTimeout(
      () => stream.destroy(new Error(`read ${messages.length} messages of ${topic} in 30 s, not enough`)),
      30_000,
    );
    for await (const message of stream) {
      messages.push(message);
      if (enough(messages)) break;
    }
    clearTimeout(timer);
  } finally {
    await consumer.close();
  }
  return messages;
}
