/**
 * A private single-node Kafka broker (KRaft, broker and controller in one JVM) on loopback, run from the jars that
 * packages/server/ci/kafka-setup.sh caches. The streams benchmark and the streams tests both start theirs here, so
 * the knowledge of how (cache folder, server.properties, listeners, start-up) lives once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Admin } from '@platformatic/kafka';
import { freePort } from './free-port.js';

/** The Kafka version whose jars packages/server/ci/kafka-setup.sh provisions. */
const KAFKA_VERSION = '4.4.0';

/** Where kafka-setup.sh keeps its cache: the same default as the script, or HEADWATER_KAFKA_CACHE. */
export function kafkaCacheDir(): string {
  if (process.env.HEADWATER_KAFKA_CACHE) return process.env.HEADWATER_KAFKA_CACHE;
  if (existsSync('/var/cache/headwater')) return '/var/cache/headwater';
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'headwater');
}

/** The folder of the broker's jars. */
export function kafkaLibDir(): string {
  return path.join(kafkaCacheDir(), `kafka-${KAFKA_VERSION}`, 'lib');
}

/** Why no broker can start here (its jars are missing), or undefined when one can. */
export function kafkaJarsMissing(): string | undefined {
  return existsSync(path.join(kafkaLibDir(), '.complete')) ? undefined : `no Kafka jars in ${kafkaLibDir()}`;
}

/** The listeners a broker can open, by security protocol. */
export type KafkaListener = 'PLAINTEXT' | 'SASL_PLAINTEXT' | 'SSL' | 'SASL_SSL';

/** Options of {@link startKafkaBroker}. */
export interface KafkaBrokerOptions {
  /**
   * Users (name to password) of SASL listeners taking PLAIN and SCRAM-SHA-512; given, the broker also listens
   * with SASL_PLAINTEXT (and SASL_SSL when `tlsKeystorePem` is given too).
   */
  readonly saslUsers?: Readonly<Record<string, string>>;
  /**
   * A PEM file with the broker's unencrypted PKCS#8 private key and its certificate chain; given, the broker also
   * listens with SSL (and SASL_SSL when `saslUsers` is given too).
   */
  readonly tlsKeystorePem?: string;
}

/** A private broker on loopback. */
export interface KafkaBroker {
  /** host:port of its PLAINTEXT listener. */
  readonly bootstrap: string;
  /** host:port of each listener it opened. */
  readonly listeners: Readonly<Partial<Record<KafkaListener, string>>>;
  readonly process: ChildProcess;
  /** Creates topics with `partitions` partitions each (replication 1) and waits until they have leaders. */
  createTopics(topics: readonly string[], partitions?: number): Promise<void>;
  /** The broker's log so far (its last `chars` characters), for failure reports. */
  logTail(chars?: number): Promise<string>;
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

/** A JAAS string literal (the broker's user_NAME="password" entries). */
const jaasString = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** server.properties lines of the SASL listeners: PLAIN checks the users listed here, SCRAM those formatted in. */
function saslProperties(
  listeners: readonly KafkaListener[],
  users: Readonly<Record<string, string>>,
): string[] {
  const plainUsers = Object.entries(users)
    .map(([name, password]) => `user_${name}=${jaasString(password)}`)
    .join(' ');
  return [
    'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512',
    ...listeners
      .filter((listener) => listener.startsWith('SASL_'))
      .flatMap((listener) => [
        `listener.name.${listener.toLowerCase()}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`,
        `listener.name.${listener.toLowerCase()}.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
      ]),
  ];
}

/**
 * Starts a broker+controller in one process in a temporary folder, on free loopback ports, and resolves once it
 * has logged "Kafka Server started". Every listener of `options` is one more port of the same broker: one
 * start-up (about 10-30 s) serves every security protocol a test needs.
 */
export async function startKafkaBroker(options: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-kafka-'));
  const kinds: KafkaListener[] = ['PLAINTEXT'];
  if (options.saslUsers) kinds.push('SASL_PLAINTEXT');
  if (options.tlsKeystorePem) kinds.push('SSL');
  if (options.saslUsers && options.tlsKeystorePem) kinds.push('SASL_SSL');
  const listeners: Partial<Record<KafkaListener, string>> = {};
  for (const kind of kinds) listeners[kind] = `127.0.0.1:${await freePort()}`;
  const controllerPort = await freePort();
  const bootstrap = listeners.PLAINTEXT!;
  const advertised = kinds.map((kind) => `${kind}://${listeners[kind]}`).join(',');
  const properties = [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=${advertised},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=${advertised}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    `listener.security.protocol.map=${kinds.map((kind) => `${kind}:${kind}`).join(',')},CONTROLLER:PLAINTEXT`,
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
    ...(options.saslUsers ? saslProperties(kinds, options.saslUsers) : []),
    ...(options.tlsKeystorePem
      ? ['ssl.keystore.type=PEM', `ssl.keystore.location=${options.tlsKeystorePem}`]
      : []),
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
  // SCRAM credentials live in the cluster metadata: formatting the storage writes them in.
  const scram = Object.entries(options.saslUsers ?? {}).flatMap(([name, password]) => [
    '--add-scram',
    `SCRAM-SHA-512=[name=${name},password=${password}]`,
  ]);
  const format = java(
    ['kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', 'server.properties', ...scram],
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
  const logTail = async (chars = 4000) => (await readFile(log, 'utf8').catch(() => '')).slice(-chars);
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
    listeners,
    process: broker,
    logTail,
    async createTopics(topics, partitions = 1) {
      const admin = new Admin({ clientId: 'headwater-admin', bootstrapBrokers: [bootstrap] });
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
