import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import type { OpenLineageEvent } from '../generated/model.js';
import type { EmitResult, Transport } from './transport.js';
import { SUCCESS, toError } from './transport.js';

/**
 * The message key the OpenLineage Kafka transports give an event, so that events that must stay in order share a
 * partition: `dataset:<ns>/<name>` for a DatasetEvent, `job:<ns>/<name>` for a JobEvent, and for a RunEvent
 * `run:<ns>/<name>` of its root job, else its parent job, else its own job (so every run of a job, and a parent
 * with its children, land on one partition). Undefined for something that is none of these.
 */
export function kafkaMessageKey(
  event: OpenLineageEvent | Readonly<Record<string, unknown>>,
): string | undefined {
  const value = event as Record<string, unknown>;
  const named = (node: unknown): string | undefined => {
    if (typeof node !== 'object' || node === null) return undefined;
    const { namespace, name } = node as Record<string, unknown>;
    return typeof namespace === 'string' && typeof name === 'string' && namespace !== '' && name !== ''
      ? `${namespace}/${name}`
      : undefined;
  };
  if (value.dataset !== undefined && value.run === undefined && value.job === undefined) {
    const dataset = named(value.dataset);
    return dataset === undefined ? undefined : `dataset:${dataset}`;
  }
  const job = named(value.job);
  if (value.run === undefined) return job === undefined ? undefined : `job:${job}`;
  const run = value.run as Record<string, unknown> | null;
  const facets = (run?.facets ?? {}) as Record<string, unknown>;
  const parent = facets.parent as Record<string, unknown> | undefined;
  const root = parent?.root as Record<string, unknown> | undefined;
  const chosen = named(root?.job) ?? named(parent?.job) ?? job;
  return chosen === undefined ? undefined : `run:${chosen}`;
}

/** A bad Kafka setting: which key, and what is wrong with it. */
export class KafkaConfigError extends Error {
  override readonly name = 'KafkaConfigError';
  constructor(
    /** The key of the config map, e.g. `bootstrap.servers`. */
    readonly key: string,
    /** What is wrong and what to do, without the key. */
    readonly problem: string,
    where: string,
  ) {
    super(`${where}.${key} ${problem}`);
  }
}

/** SASL credentials of a Kafka connection. */
export interface KafkaSasl {
  readonly mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  readonly username: string;
  readonly password: string;
}

/** A Kafka connection in the terms of the Node client: what {@link kafkaConnectionOptions} makes of a config map. */
export interface KafkaConnectionOptions {
  readonly clientId: string;
  readonly bootstrapBrokers: string[];
  readonly sasl?: KafkaSasl;
  readonly tls?: TlsOptions;
}

/** Keys of the producer `config` that have no meaning for this client and are accepted without effect. */
const TOLERATED_KEYS = new Set([
  'acks',
  'linger.ms',
  'batch.size',
  'compression.type',
  'enable.idempotence',
  'retries',
  'message.timeout.ms',
  'request.timeout.ms',
  'queue.buffering.max.messages',
  'queue.buffering.max.ms',
  'socket.keepalive.enable',
  'group.id',
  'auto.offset.reset',
  'enable.auto.commit',
]);

const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;

/**
 * Translates a Kafka client configuration in librdkafka's key names, the shape the Python client's `config`
 * takes (`bootstrap.servers`, `security.protocol`, `sasl.mechanism`, `sasl.username`, `sasl.password`,
 * `ssl.ca.location`, `ssl.certificate.location`, `ssl.key.location`, `client.id`), into connection options.
 * Tuning keys of librdkafka (`acks`, `linger.ms`, ...) are accepted and ignored; `onWarning` hears of them.
 *
 * @param where names the configuration in error messages (e.g. `transport.config`).
 * @throws KafkaConfigError naming the key for a missing `bootstrap.servers`, an unknown protocol or mechanism, a SASL
 *   protocol without credentials, an unreadable certificate file or an unknown key.
 */
export function kafkaConnectionOptions(
  config: Readonly<Record<string, string>>,
  where: string,
  onWarning?: (message: string) => void,
): KafkaConnectionOptions {
  const fail = (key: string, problem: string): never => {
    throw new KafkaConfigError(key, problem, where);
  };
  const servers = config['bootstrap.servers'];
  if (servers === undefined || servers.trim() === '')
    fail('bootstrap.servers', 'is required: a comma-separated list of host:port');
  const bootstrapBrokers = servers!
    .split(',')
    .map((server) => server.trim().replace(/^[a-z]+:\/\//i, ''))
    .filter((server) => server !== '');
  for (const broker of bootstrapBrokers) {
    if (!/^[^:\s]+:\d{1,5}$/.test(broker)) fail('bootstrap.servers', `has "${broker}"; expected host:port`);
  }
  const protocol = (config['security.protocol'] ?? 'PLAINTEXT').toUpperCase();
  if (!(PROTOCOLS as readonly string[]).includes(protocol))
    fail('security.protocol', `must be one of ${PROTOCOLS.join(', ')}; got "${protocol}"`);
  let sasl: KafkaSasl | undefined;
  if (protocol.startsWith('SASL_')) {
    const mechanism = (config['sasl.mechanism'] ?? config['sasl.mechanisms'] ?? 'PLAIN').toUpperCase();
    if (!(MECHANISMS as readonly string[]).includes(mechanism))
      fail('sasl.mechanism', `must be one of ${MECHANISMS.join(', ')}; got "${mechanism}"`);
    const username = config['sasl.username'];
    const password = config['sasl.password'];
    if (username === undefined) fail('sasl.username', `is required with security.protocol ${protocol}`);
    if (password === undefined) fail('sasl.password', `is required with security.protocol ${protocol}`);
    sasl = { mechanism: mechanism as KafkaSasl['mechanism'], username: username!, password: password! };
  }
  let tls: TlsOptions | undefined;
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    const file = (key: string) => {
      const location = config[key];
      if (location === undefined) return undefined;
      try {
        return readFileSync(location);
      } catch (error) {
        return fail(key, `cannot be read (${(error as Error).message})`);
      }
    };
    const ca = file('ssl.ca.location');
    const cert = file('ssl.certificate.location');
    const key = file('ssl.key.location');
    const verify = config['enable.ssl.certificate.verification'];
    tls = {
      ...(ca === undefined ? {} : { ca }),
      ...(cert === undefined ? {} : { cert }),
      ...(key === undefined ? {} : { key }),
      ...(config['ssl.key.password'] === undefined ? {} : { passphrase: config['ssl.key.password'] }),
      rejectUnauthorized: verify === undefined ? true : verify !== 'false',
    };
  }
  const known = new Set([
    'bootstrap.servers',
    'security.protocol',
    'sasl.mechanism',
    'sasl.mechanisms',
    'sasl.username',
    'sasl.password',
    'ssl.ca.location',
    'ssl.certificate.location',
    'ssl.key.location',
    'ssl.key.password',
    'enable.ssl.certificate.verification',
    'client.id',
  ]);
  for (const key of Object.keys(config)) {
    if (known.has(key)) continue;
    if (TOLERATED_KEYS.has(key)) onWarning?.(`${where}.${key} is accepted but has no effect in this client`);
    else fail(key, `is not a Kafka setting this client knows; known: ${[...known].join(', ')}`);
  }
  return {
    clientId: config['client.id'] ?? 'openlineage',
    bootstrapBrokers,
    ...(sasl === undefined ? {} : { sasl }),
    ...(tls === undefined ? {} : { tls }),
  };
}

/**
 * Most bytes of messages sent in one produce request. A broker takes at most `message.max.bytes` (1 MiB by
 * default) of records per partition per request, and keys put a batch's messages on partitions unevenly, so a
 * batch of realistic events (5 KB each: 500 are 2.5 MB) is sent in requests of at most this much, in order.
 */
const MAX_REQUEST_BYTES = 512 * 1024;

/** `messages` in consecutive runs of at most {@link MAX_REQUEST_BYTES} (a larger message alone). */
function requestChunks<T extends { key?: string; value: string }>(messages: readonly T[]): T[][] {
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size =
      Buffer.byteLength(message.value) + (message.key === undefined ? 0 : Buffer.byteLength(message.key));
    if (chunk.length > 0 && bytes + size > MAX_REQUEST_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(message);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** Options of {@link createKafkaTransport}: the Python client's `type: kafka` keys. */
export interface KafkaTransportOptions {
  /** The topic events are written to. */
  readonly topic: string;
  /** The Kafka client configuration in librdkafka's key names (see {@link kafkaConnectionOptions}). */
  readonly config: Readonly<Record<string, string>>;
  /** One key for every message, instead of the one {@link kafkaMessageKey} derives from each event. */
  readonly messageKey?: string;
  /** Time a send may take before it is reported retryable. @default 10000 */
  readonly timeoutMs?: number;
  /** Hears of accepted configuration that has no effect. */
  readonly onWarning?: (message: string) => void;
}

/** The part of a Kafka producer this transport uses. */
interface KafkaProducer {
  send(options: {
    messages: { topic: string; key?: string; value: string }[];
    acks?: number;
  }): Promise<unknown>;
  close(force?: boolean): Promise<void>;
}

/**
 * Creates a transport that writes each event to a Kafka topic as JSON, keyed as the OpenLineage Kafka transports
 * key it, and reports success once every in-sync replica has it (acks=all). Needs the optional peer dependency
 * `@platformatic/kafka` (loaded on first use; without it every emit fails with a message saying so).
 *
 * @example
 * ```ts
 * const transport = createKafkaTransport({ topic: 'openlineage', config: { 'bootstrap.servers': 'localhost:9092' } });
 * ```
 * @throws Error once, at construction, for a bad `config` or an empty `topic`.
 */
export function createKafkaTransport(options: KafkaTransportOptions): Transport & {
  close(timeoutMs: number): Promise<boolean>;
} {
  if (options.topic.trim() === '')
    throw new KafkaConfigError('topic', 'must name a Kafka topic', 'transport');
  const connection = kafkaConnectionOptions(options.config, 'transport.config', options.onWarning);
  const timeoutMs = options.timeoutMs ?? 10_000;
  let producer: Promise<KafkaProducer> | undefined;
  let closed = false;
  const open = (): Promise<KafkaProducer> =>
    (producer ??= import('@platformatic/kafka').then(
      ({ Producer, stringSerializers }) =>
        new Producer({
          ...connection,
          serializers: stringSerializers,
          timeout: timeoutMs,
          retries: 2,
          autocreateTopics: false,
        }) as unknown as KafkaProducer,
      (error: unknown) => {
        producer = undefined;
        throw new Error(
          `the Kafka transport needs the package @platformatic/kafka (npm install @platformatic/kafka): ${toError(error).message}`,
          { cause: error },
        );
      },
    ));
  const send = async (events: readonly OpenLineageEvent[]): Promise<EmitResult> => {
    if (closed) return { status: 'failure', error: new Error('the Kafka transport is closed') };
    let messages: { topic: string; key?: string; value: string }[];
    try {
      messages = events.map((event) => {
        const key = options.messageKey ?? kafkaMessageKey(event);
        return { topic: options.topic, value: JSON.stringify(event), ...(key === undefined ? {} : { key }) };
      });
    } catch (error) {
      return { status: 'failure', error: toError(error) };
    }
    let client: KafkaProducer;
    try {
      client = await open();
    } catch (error) {
      return { status: 'failure', error: toError(error) };
    }
    try {
      for (const chunk of requestChunks(messages)) await client.send({ messages: chunk, acks: -1 });
      return SUCCESS;
    } catch (error) {
      return { status: 'retryable', error: toError(error) };
    }
  };
  return {
    emit: (event) => send([event]),
    emitBatch: (events) => send(events),
    async close() {
      closed = true;
      if (producer === undefined) return true;
      try {
        await (await producer).close();
      } catch {
        // Nothing is buffered: each send resolved once acknowledged.
      }
      return true;
    },
  };
}
