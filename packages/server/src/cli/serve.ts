import { parseArgs } from 'node:util';
import { resolveConfig, strictFlagArgs } from '../config.js';
import { createServer } from '../server.js';
import { KAFKA_FLAG_OPTIONS } from '../streams/kafka-config.js';
import { redactionFlags } from '../ingest/redaction.js';
import { securityFlags } from '../security/config.js';
import { isLoopback } from '../security/plugin.js';

/** `headwater serve`: runs the server until SIGINT or SIGTERM, then shuts down cleanly. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args: strictFlagArgs(args),
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'embedded-engine': { type: 'string' },
      'database-url': { type: 'string' },
      strict: { type: 'string' },
      'spec-dir': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-batch-events': { type: 'string' },
      'log-level': { type: 'string' },
      'advertise-url': { type: 'string' },
      'forward-config': { type: 'string' },
      ...KAFKA_FLAG_OPTIONS,
      'stale-run-after': { type: 'string' },
      'retention-days': { type: 'string' },
      'retention-interval': { type: 'string' },
      ...securityFlags,
      ...redactionFlags,
    },
    strict: true,
  });
  const config = resolveConfig(values);
  const server = await createServer(config);
  try {
    await server.listen();
  } catch (error) {
    // Kafka refused the credentials, say: leave with that one message rather than serve half-configured.
    await server.close().catch(() => undefined);
    throw error;
  }
  const store = config.databaseUrl
    ? `PostgreSQL, ${server.replication.role === 'writer' ? 'the writer' : 'following the writer'}`
    : `embedded store (${server.storeEngine}) in ${config.dataDir}`;
  const kafka = config.kafka ? `, Kafka ${config.kafka.topics.join(', ')} as ${config.kafka.groupId}` : '';
  // The address actually bound (Fastify's URL names 127.0.0.1 for a server bound to every interface).
  const bound = server.app.server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  process.stdout.write(
    `headwater listening on http://${host}:${port} (${store}${config.strict === false ? '' : `, strict (${config.strict})`}${kafka})\n`,
  );
  if (config.security.insecure && !isLoopback(config.host)) {
    process.stderr.write(
      `headwater: WARNING: --insecure: ${config.host} is served without requiring credentials until a key exists or ` +
        'an OIDC issuer is configured; anyone who reaches it can read and delete everything.\n',
    );
  }
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
