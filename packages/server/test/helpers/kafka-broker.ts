import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { kafkaCacheDir, kafkaJarsMissing } from '@headwater/test-support';
import { Consumer, type Message } from '@platformatic/kafka';

export { startKafkaBroker, type KafkaBroker } from '@headwater/test-support';

const OPENLINEAGE_PYTHON_VERSION = '1.54.0';

/** The Python of the venv with openlineage-python and confluent-kafka. */
export function openLineagePython(): string {
  return path.join(kafkaCacheDir(), `openlineage-python-${OPENLINEAGE_PYTHON_VERSION}-venv`, 'bin', 'python');
}

const SETUP_HINT = 'run packages/server/ci/kafka-setup.sh to provision them';

/** Why the broker (and the Python producer) cannot run here, or undefined when they can. */
function unavailable(): string | undefined {
  const jars = kafkaJarsMissing();
  if (jars !== undefined) return jars;
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

/**
 * `headwater serve` flags for the store of `config` and Kafka ingest of `topic` from `brokers` (group `g-<topic>`,
 * dead letters to `<topic>.dlq`), then `extra`.
 */
export function kafkaServeArgs(
  config: { databaseUrl?: string | undefined; dataDir: string },
  brokers: string,
  topic: string,
  extra: readonly string[] = [],
): string[] {
  return [
    ...(config.databaseUrl ? ['--database-url', config.databaseUrl] : ['--data-dir', config.dataDir]),
    '--kafka-brokers',
    brokers,
    '--kafka-topic',
    topic,
    '--kafka-group',
    `g-${topic}`,
    '--kafka-dead-letter-topic',
    `${topic}.dlq`,
    ...extra,
  ];
}
