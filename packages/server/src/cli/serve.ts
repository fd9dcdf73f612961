import { parseArgs } from 'node:util';
import { resolveConfig, strictFlagArgs } from '../config/server-config.js';
import { createServer } from '../servers/server.js';
import { KAFKA_FLAG_OPTIONS } from '../streams/kafka-config.js';
import { redactionFlags } from '../accept/redaction.js';
import { securityFlags } from '../security/config.js';
import { isLoopback } from '../security/plugin.js';
import { defineHelp, storeFlags } from './help.js';

const options = {
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
  'alerts-config': { type: 'string' },
  ...KAFKA_FLAG_OPTIONS,
  'stale-run-after': { type: 'string' },
  'retention-days': { type: 'string' },
  'retention-interval': { type: 'string' },
  ...securityFlags,
  ...redactionFlags,
} as const;

/** The flags that `headwater serve` and `headwater proxy` share, as their help shows them. */
export const ingestFlagHelp = {
  strict: {
    value: '[structure|formats]',
    env: 'HEADWATER_STRICT',
    default: 'off',
    text: 'reject what the official OpenLineage schemas reject; a bare --strict is structure, formats also checks date-time, uuid and uri',
  },
  'spec-dir': {
    value: 'DIR',
    env: 'HEADWATER_SPEC_DIR',
    default: 'the bundled schemas',
    text: 'a folder of more OpenLineage schemas for strict mode',
  },
  'max-body-bytes': {
    value: 'N',
    env: 'HEADWATER_MAX_BODY_BYTES',
    default: '10485760',
    text: 'largest request body',
  },
  'max-batch-events': {
    value: 'N',
    env: 'HEADWATER_MAX_BATCH_EVENTS',
    default: '10000',
    text: 'most events in one batch request',
  },
  'log-level': {
    value: 'LEVEL',
    env: 'HEADWATER_LOG_LEVEL',
    default: 'warn',
    text: 'silent, error, warn, info or debug (JSON lines on stdout)',
  },
} as const;

/** `headwater serve --help`. */
export const serveHelp = defineHelp(options, {
  name: 'serve',
  usage: [
    'serve [--port 5000] [--host 127.0.0.1] [--data-dir ./.headwater | --database-url URL] [--strict [structure|formats]]',
    '      [more flags below]',
  ],
  description:
    'Runs the lineage server: the OpenLineage and Marquez APIs and the explorer on one port, until SIGINT or\n' +
    'SIGTERM, which commit what was acknowledged and close the store. Without --database-url the data lives in\n' +
    'an embedded store in --data-dir. Every flag can also be set by its environment variable. The README says more\n' +
    'about each group (Kafka, security, retention, limits and redaction).',
  flags: {
    port: { value: 'N', env: 'HEADWATER_PORT', default: '5000', text: 'HTTP port (0: any free port)' },
    host: { value: 'HOST', env: 'HEADWATER_HOST', default: '127.0.0.1', text: 'interface to listen on' },
    'data-dir': storeFlags['data-dir'],
    'embedded-engine': {
      value: 'postgres|pglite|auto',
      env: 'HEADWATER_EMBEDDED_ENGINE',
      default: 'auto',
      text: "the embedded store's engine (auto: PGlite where PostgreSQL's binaries cannot run)",
    },
    'database-url': storeFlags['database-url'],
    ...ingestFlagHelp,
    'advertise-url': {
      value: 'URL',
      env: 'HEADWATER_ADVERTISE_URL',
      default: 'the address it listens on',
      text: 'replicas on one PostgreSQL: where the others reach this server',
    },
    'forward-config': {
      value: 'FILE',
      env: 'HEADWATER_FORWARD_CONFIG',
      text: "forward what is stored through the proxy's sinks (the proxy's config, without source)",
    },
    'alerts-config': {
      value: 'FILE',
      env: 'HEADWATER_ALERTS_CONFIG',
      text: 'open incidents and tell the owners downstream: channels, owners and rules in YAML',
    },
    'kafka-brokers': {
      value: 'HOST:PORT,...',
      env: 'HEADWATER_KAFKA_BROKERS',
      text: 'consume events from Kafka',
    },
    'kafka-topic': { value: 'TOPIC', env: 'HEADWATER_KAFKA_TOPICS', text: 'a topic to consume (repeatable)' },
    'kafka-group': { value: 'GROUP', env: 'HEADWATER_KAFKA_GROUP', text: 'the consumer group' },
    'kafka-dead-letter-topic': {
      value: 'TOPIC',
      env: 'HEADWATER_KAFKA_DEAD_LETTER_TOPIC',
      text: 'where messages that are not valid events go',
    },
    'kafka-security-protocol': {
      value: 'PROTOCOL',
      env: 'HEADWATER_KAFKA_SECURITY_PROTOCOL',
      default: 'implied by the SASL and SSL flags',
      text: 'PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL',
    },
    'kafka-sasl-mechanism': {
      value: 'MECHANISM',
      env: 'HEADWATER_KAFKA_SASL_MECHANISM',
      text: 'PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512',
    },
    'kafka-sasl-username': { value: 'USER', env: 'HEADWATER_KAFKA_SASL_USERNAME', text: 'SASL user' },
    'kafka-sasl-password': {
      value: 'PASSWORD',
      env: 'HEADWATER_KAFKA_SASL_PASSWORD',
      text: 'SASL password (prefer the variable: it stays off the command line)',
    },
    'kafka-ssl-ca': {
      value: 'FILE',
      env: 'HEADWATER_KAFKA_SSL_CA',
      text: "CA certificate of the brokers' TLS",
    },
    'kafka-ssl-cert': { value: 'FILE', env: 'HEADWATER_KAFKA_SSL_CERT', text: 'client certificate' },
    'kafka-ssl-key': { value: 'FILE', env: 'HEADWATER_KAFKA_SSL_KEY', text: "the client certificate's key" },
    'stale-run-after': {
      value: 'DURATION',
      env: 'HEADWATER_STALE_RUN_AFTER',
      default: '24h',
      text: 'a RUNNING run with no event for longer is flagged stale (90m, 6h, 2d; a bare number is seconds)',
    },
    'retention-days': {
      value: 'N',
      env: 'HEADWATER_RETENTION_DAYS',
      default: '0 (off)',
      text: 'delete raw events and history older than this, keeping the present',
    },
    'retention-interval': {
      value: 'DURATION',
      env: 'HEADWATER_RETENTION_INTERVAL',
      default: '1h',
      text: 'time between retention passes',
    },
    insecure: {
      env: 'HEADWATER_INSECURE',
      default: 'off',
      text: 'serve an address other than loopback without requiring credentials',
    },
    'anonymous-read': {
      value: 'PATTERNS',
      env: 'HEADWATER_ANONYMOUS_READ',
      default: 'none',
      text: 'namespaces anyone may read once auth is on',
    },
    'allowed-hosts': {
      value: 'HOSTS',
      env: 'HEADWATER_ALLOWED_HOSTS',
      default: 'loopback and the bound address',
      text: 'Host headers accepted',
    },
    'cors-origins': {
      value: 'ORIGINS',
      env: 'HEADWATER_CORS_ORIGINS',
      default: 'none (CORS off)',
      text: 'CORS origins',
    },
    'rate-limit-per-key': {
      value: 'N',
      env: 'HEADWATER_RATE_LIMIT_PER_KEY',
      default: '0 (none)',
      text: 'requests per window per key or OIDC subject',
    },
    'rate-limit-per-address': {
      value: 'N',
      env: 'HEADWATER_RATE_LIMIT_PER_ADDRESS',
      default: '300',
      text: 'requests per window per address without a valid credential',
    },
    'rate-limit-window': {
      value: 'SECONDS',
      env: 'HEADWATER_RATE_LIMIT_WINDOW',
      default: '60',
      text: 'the window',
    },
    'oidc-issuer': { value: 'URL', env: 'HEADWATER_OIDC_ISSUER', text: 'accept JWTs from this OIDC issuer' },
    'oidc-audience': {
      value: 'AUD',
      env: 'HEADWATER_OIDC_AUDIENCE',
      text: 'the audience the tokens must name',
    },
    'oidc-jwks-url': {
      value: 'URL',
      env: 'HEADWATER_OIDC_JWKS_URL',
      default: "the issuer's discovery document",
      text: "the issuer's key set",
    },
    'oidc-clock-tolerance': {
      value: 'SECONDS',
      env: 'HEADWATER_OIDC_CLOCK_TOLERANCE',
      default: '60',
      text: 'leeway for exp and nbf',
    },
    'oidc-algorithms': {
      value: 'LIST',
      env: 'HEADWATER_OIDC_ALGORITHMS',
      default: 'RS256,ES256,PS256,EdDSA',
      text: 'signature algorithms accepted',
    },
    'oidc-grants': {
      value: 'CLAIM=VALUE:ROLE:PATTERNS;...',
      env: 'HEADWATER_OIDC_GRANTS',
      text: 'map token claims to roles over namespaces',
    },
    'oidc-client-id': {
      value: 'ID',
      env: 'HEADWATER_OIDC_CLIENT_ID',
      text: "the explorer's client at the issuer, for its sign-in",
    },
    'oidc-scopes': {
      value: 'SCOPES',
      env: 'HEADWATER_OIDC_SCOPES',
      default: 'openid profile',
      text: 'scopes the explorer asks for',
    },
    'oidc-jwks-max-age': {
      value: 'SECONDS',
      env: 'HEADWATER_OIDC_JWKS_MAX_AGE',
      default: '600',
      text: 'how long a fetched key set is kept',
    },
    'max-facet-bytes': {
      value: 'N',
      env: 'HEADWATER_MAX_FACET_BYTES',
      default: '1048576',
      text: 'largest facet, in bytes of its JSON',
    },
    'oversized-facets': {
      value: 'reject|truncate',
      env: 'HEADWATER_OVERSIZED_FACETS',
      default: 'reject',
      text: 'what to do with a facet over --max-facet-bytes',
    },
    'max-sql-length': {
      value: 'N',
      env: 'HEADWATER_MAX_SQL_LENGTH',
      default: '0 (whole)',
      text: 'longest sql.query kept',
    },
    'redaction-config': {
      value: 'FILE',
      env: 'HEADWATER_REDACTION_CONFIG',
      default: 'none',
      text: 'redaction rules (YAML or JSON)',
    },
  },
  examples: [
    'serve',
    'serve --port 5000 --data-dir ./.headwater --strict',
    'serve --database-url "$DATABASE_URL"',
  ],
});

/** `headwater serve`: runs the server until SIGINT or SIGTERM, then shuts down cleanly. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args: strictFlagArgs(args),
    options,
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
  // The handlers go in before the line that says the server listens: a supervisor (or a test) that stops it as soon
  // as it reads that line must reach them, not the default action, which would kill the process uncleanly.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stdout.write(`headwater: ${signal}, finishing in-flight events and closing the store\n`);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  process.stdout.write(
    `headwater listening on http://${host}:${port} (${store}${config.strict === false ? '' : `, strict (${config.strict})`}${kafka})\n`,
  );
  if (config.security.insecure && !isLoopback(config.host)) {
    process.stderr.write(
      `headwater: WARNING: --insecure: ${config.host} is served without requiring credentials until a key exists or ` +
        'an OIDC issuer is configured; anyone who reaches it can read and delete everything.\n',
    );
  }
  await stopped;
  await server.close();
  return 0;
}
