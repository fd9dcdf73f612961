import {
  KafkaConfigError,
  kafkaConnectionOptions,
  type KafkaConnectionOptions,
} from '@headwater/openlineage';
import { commaList as list, configReader, type ConfigFlags } from '../core/config-reader.js';
import { HeadwaterError } from '../core/errors.js';

/** Kafka ingest of `headwater serve`, validated once at start. */
export interface KafkaIngestConfig {
  /** Topics read; each message is one OpenLineage event as the OpenLineage Kafka transports write it. */
  readonly topics: readonly string[];
  /** The consumer group; every server (and replica) in it shares the partitions. @default 'headwater' */
  readonly groupId: string;
  /** Where messages that are not valid events go, with the reason in their headers. @default 'headwater.dlq' */
  readonly deadLetterTopic: string;
  /** The connection, from the librdkafka-style settings the flags map to. */
  readonly connection: KafkaConnectionOptions;
}

/** Flags as parsed by node:util parseArgs (a repeatable flag gives an array). */
export type KafkaFlags = ConfigFlags;

/** Each Kafka setting of serve: its flag, its environment variable, and its key in librdkafka's terms. */
const SETTINGS = [
  {
    flag: 'kafka-security-protocol',
    variable: 'HEADWATER_KAFKA_SECURITY_PROTOCOL',
    key: 'security.protocol',
  },
  { flag: 'kafka-sasl-mechanism', variable: 'HEADWATER_KAFKA_SASL_MECHANISM', key: 'sasl.mechanism' },
  { flag: 'kafka-sasl-username', variable: 'HEADWATER_KAFKA_SASL_USERNAME', key: 'sasl.username' },
  { flag: 'kafka-sasl-password', variable: 'HEADWATER_KAFKA_SASL_PASSWORD', key: 'sasl.password' },
  { flag: 'kafka-ssl-ca', variable: 'HEADWATER_KAFKA_SSL_CA', key: 'ssl.ca.location' },
  { flag: 'kafka-ssl-cert', variable: 'HEADWATER_KAFKA_SSL_CERT', key: 'ssl.certificate.location' },
  { flag: 'kafka-ssl-key', variable: 'HEADWATER_KAFKA_SSL_KEY', key: 'ssl.key.location' },
] as const;

/** The parseArgs options of the Kafka flags, for the commands that take them. */
export const KAFKA_FLAG_OPTIONS = {
  'kafka-brokers': { type: 'string' },
  'kafka-topic': { type: 'string', multiple: true },
  'kafka-group': { type: 'string' },
  'kafka-dead-letter-topic': { type: 'string' },
  ...Object.fromEntries(SETTINGS.map(({ flag }) => [flag, { type: 'string' }])),
} as const satisfies Record<string, { type: 'string'; multiple?: boolean }>;

/**
 * Resolves Kafka ingest from flags (`--kafka-brokers`, repeatable `--kafka-topic`, `--kafka-group`, SASL and TLS
 * flags), then HEADWATER_KAFKA_* variables. Undefined when no brokers are given: Kafka ingest is off.
 * @throws HeadwaterError INVALID_CONFIG naming the flag or variable.
 */
export function resolveKafkaConfig(flags: KafkaFlags, env: NodeJS.ProcessEnv): KafkaIngestConfig | undefined {
  const { pick } = configReader(flags, env);
  const brokers = pick('kafka-brokers', 'HEADWATER_KAFKA_BROKERS');
  const topicFlags = flags['kafka-topic'];
  const topics = Array.isArray(topicFlags)
    ? topicFlags.flatMap((topic) => list(topic))
    : list(pick('kafka-topic', 'HEADWATER_KAFKA_TOPICS').value);
  if (brokers.value === undefined) {
    if (topics.length > 0)
      throw new HeadwaterError(
        'INVALID_CONFIG',
        '--kafka-topic needs --kafka-brokers (or HEADWATER_KAFKA_BROKERS).',
      );
    return undefined;
  }
  if (topics.length === 0) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `${brokers.source} is set but no topic is: pass --kafka-topic TOPIC (repeatable) or HEADWATER_KAFKA_TOPICS.`,
    );
  }
  const settings: Record<string, string> = { 'bootstrap.servers': brokers.value, 'client.id': 'headwater' };
  const sources: Record<string, string> = { 'bootstrap.servers': brokers.source };
  for (const { flag, variable, key } of SETTINGS) {
    const { value, source } = pick(flag, variable);
    if (value === undefined) continue;
    settings[key] = value;
    sources[key] = source;
  }
  // Credentials imply SASL, and SASL over TLS when a CA is given; an explicit protocol wins.
  if (settings['security.protocol'] === undefined && settings['sasl.username'] !== undefined)
    settings['security.protocol'] = settings['ssl.ca.location'] === undefined ? 'SASL_PLAINTEXT' : 'SASL_SSL';
  let connection: KafkaConnectionOptions;
  try {
    connection = kafkaConnectionOptions(settings, 'kafka');
  } catch (error) {
    if (!(error instanceof KafkaConfigError)) throw error;
    const setting = SETTINGS.find(({ key }) => key === error.key);
    const source = sources[error.key] ?? (setting ? `--${setting.flag}` : '--kafka-security-protocol');
    throw new HeadwaterError('INVALID_CONFIG', `${source} ${error.problem}.`, { cause: error });
  }
  const group = pick('kafka-group', 'HEADWATER_KAFKA_GROUP').value ?? 'headwater';
  const deadLetterTopic =
    pick('kafka-dead-letter-topic', 'HEADWATER_KAFKA_DEAD_LETTER_TOPIC').value ?? 'headwater.dlq';
  if (topics.includes(deadLetterTopic)) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `the dead-letter topic ${deadLetterTopic} is also a source topic; pass another --kafka-dead-letter-topic.`,
    );
  }
  return Object.freeze({ topics: Object.freeze([...topics]), groupId: group, deadLetterTopic, connection });
}
