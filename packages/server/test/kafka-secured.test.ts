import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKafkaTransport } from '@headwater/openlineage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from './helpers/backends.js';
import { runToExit, spawnServer } from './helpers/child-server.js';
import {
  kafkaAvailable,
  kafkaServeArgs,
  startKafkaBroker,
  type KafkaBroker,
} from './helpers/kafka-broker.js';
import { runEvent, storedRunEvents } from './helpers/stream-events.js';
import { until } from './helpers/wait.js';
import { makeTlsMaterial, type TlsMaterial } from './helpers/tls-material.js';

/** The store of the serve processes: PostgreSQL where DATABASE_URL is set (always in CI), else the embedded one. */
const backend = backends().at(-1)!;

/** A child process's output, once it has exited. */
interface Exit {
  code: number | null;
  output: string;
}

describe.skipIf(!kafkaAvailable('kafka-secured'))(
  `headwater serve against a secured broker (SASL and TLS), on the ${backend.name} store`,
  { timeout: 240_000 },
  () => {
    let broker: KafkaBroker;
    let dir: string;
    let tls: TlsMaterial;
    const password = 'alice-secret';

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-kafka-tls-'));
      tls = await makeTlsMaterial(dir);
      // One broker, four listeners: PLAINTEXT (topic set-up), SASL_PLAINTEXT, SSL and SASL_SSL.
      broker = await startKafkaBroker({ saslUsers: { alice: password }, tlsKeystorePem: tls.keystoreFile });
    });
    afterAll(async () => {
      await broker?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    /** `serve` flags of a fresh store and of Kafka ingest of `topic`, plus `security`. */
    async function serveArgs(topic: string, security: readonly string[], brokers: string) {
      const { config, cleanup } = await backend.fresh();
      const args = kafkaServeArgs(config, brokers, topic, security);
      return { args, cleanup };
    }

    /** Writes `count` events to `topic` through our Kafka transport, over `config` (a secured listener too). */
    async function produce(topic: string, count: number, config: Record<string, string>) {
      const transport = createKafkaTransport({ topic, config });
      const events = Array.from({ length: count }, (_, i) => runEvent('secured', `${topic}_${i % 5}`));
      expect(await transport.emitBatch!(events)).toEqual({ status: 'success' });
      await transport.close(1000);
    }

    const cases = [
      {
        name: 'SASL_PLAINTEXT with SCRAM-SHA-512',
        listener: 'SASL_PLAINTEXT',
        flags: ['--kafka-sasl-mechanism', 'SCRAM-SHA-512', '--kafka-sasl-username', 'alice'],
        producer: { 'sasl.mechanism': 'SCRAM-SHA-512' },
      },
      {
        name: 'SASL_PLAINTEXT with PLAIN',
        listener: 'SASL_PLAINTEXT',
        flags: ['--kafka-sasl-mechanism', 'PLAIN', '--kafka-sasl-username', 'alice'],
        producer: { 'sasl.mechanism': 'PLAIN' },
      },
      {
        name: 'SSL with a CA made for the test',
        listener: 'SSL',
        flags: ['--kafka-security-protocol', 'SSL'],
        producer: {},
      },
      {
        name: 'SASL_SSL (SCRAM-SHA-512 over TLS; the protocol implied by credentials and a CA)',
        listener: 'SASL_SSL',
        flags: ['--kafka-sasl-mechanism', 'SCRAM-SHA-512', '--kafka-sasl-username', 'alice'],
        producer: { 'sasl.mechanism': 'SCRAM-SHA-512' },
      },
    ] as const;

    for (const [index, one] of cases.entries()) {
      it(`consumes over ${one.name}`, async () => {
        const topic = `secured-${index}`;
        await broker.createTopics([topic, `${topic}.dlq`], 2);
        const brokers = broker.listeners[one.listener]!;
        const sasl = one.listener.startsWith('SASL_');
        const ssl = one.listener.endsWith('SSL');
        // The producer goes through the same secured listener, with the Python client's config keys.
        await produce(topic, 40, {
          'bootstrap.servers': brokers,
          'security.protocol': one.listener,
          ...one.producer,
          ...(sasl ? { 'sasl.username': 'alice', 'sasl.password': password } : {}),
          ...(ssl ? { 'ssl.ca.location': tls.caFile } : {}),
        });
        // The password comes from the environment: a secret should not have to be on a command line.
        const { args, cleanup } = await serveArgs(
          topic,
          [...one.flags, ...(ssl ? ['--kafka-ssl-ca', tls.caFile] : [])],
          brokers,
        );
        try {
          const server = await spawnServer(
            args,
            'serve',
            sasl ? { HEADWATER_KAFKA_SASL_PASSWORD: password } : {},
          );
          try {
            await until(
              '40 events stored',
              () => storedRunEvents(server.url),
              (count) => count >= 40,
            );
            expect(await storedRunEvents(server.url)).toBe(40);
          } finally {
            server.process.kill('SIGTERM');
            expect(await server.exited).toBe(0);
          }
        } finally {
          await cleanup();
        }
      });
    }

    /** Runs serve with `security` against `brokers` and returns how it ended (it must end: no silent retry loop). */
    async function failedServe(topic: string, brokers: string, security: readonly string[]): Promise<Exit> {
      const { args, cleanup } = await serveArgs(topic, security, brokers);
      try {
        const started = Date.now();
        const exit = await runToExit(args, 60_000);
        // A refusal is known at once; a retry loop would run to the 60 s limit instead.
        expect(Date.now() - started).toBeLessThan(30_000);
        return exit;
      } finally {
        await cleanup();
      }
    }

    it('leaves with one clear error when the broker refuses the SASL credentials', async () => {
      await broker.createTopics(['refused'], 1);
      const exit = await failedServe('refused', broker.listeners.SASL_PLAINTEXT!, [
        '--kafka-sasl-mechanism',
        'SCRAM-SHA-512',
        '--kafka-sasl-username',
        'alice',
        '--kafka-sasl-password',
        'not-the-password',
      ]);
      expect(exit.code).toBe(1);
      expect(exit.output).toMatch(
        /headwater: Kafka at 127\.0\.0\.1:\d+ refused the SASL SCRAM-SHA-512 credentials of user "alice".*--kafka-sasl-password/,
      );
      expect(exit.output).not.toContain('not-the-password');
      expect(exit.output).not.toMatch(/listening on/);
    });

    it("leaves with one clear error when the broker's certificate is not trusted", async () => {
      await broker.createTopics(['untrusted'], 1);
      const exit = await failedServe('untrusted', broker.listeners.SSL!, [
        '--kafka-security-protocol',
        'SSL',
        '--kafka-ssl-ca',
        tls.otherCaFile,
      ]);
      expect(exit.code).toBe(1);
      expect(exit.output).toMatch(
        /headwater: TLS to Kafka at 127\.0\.0\.1:\d+ failed: the broker's certificate was not accepted \(SELF_SIGNED_CERT_IN_CHAIN.*--kafka-ssl-ca/,
      );
      expect(exit.output).not.toMatch(/listening on/);
    });
  },
);
