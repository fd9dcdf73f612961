import { parseArgs } from 'node:util';
import { resolveConfig } from '../config.js';
import { createServer } from '../server.js';
import { KAFKA_FLAG_OPTIONS } from '../streams/kafka-config.js';

/** `headwater serve`: runs the server until SIGINT or SIGTERM, then shuts down cleanly. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      strict: { type: 'boolean' },
      'spec-dir': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-batch-events': { type: 'string' },
      'log-level': { type: 'string' },
      'advertise-url': { type: 'string' },
      'forward-config': { type: 'string' },
      ...KAFKA_FLAG_OPTIONS,
      'stale-run-after': { type: 'string' },
    },
    strict: true,
  });
  const config = resolveConfig(values);
  const server = await createServer(config);
  const url = await server.listen();
  const store = config.databaseUrl
    ? `PostgreSQL, ${server.replication.role === 'writer' ? 'the writer' : 'following the writer'}`
    : `embedded store in ${config.dataDir}`;
  const kafka = config.kafka ? `, Kafka ${config.kafka.topics.join(', ')} as ${config.kafka.groupId}` : '';
  process.stdout.write(
    `headwater listening on ${url} (${store}${config.strict ? ', strict' : ''}${kafka})\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stdout.write(`headwater: ${signal}, finishing in-flight events and closing the store\n`);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await server.close();
  return 0;
}
