import { kafkaConnectionOptions, KafkaConfigError } from '@headwater/openlineage';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ServerConfig } from '../config/server-config.js';
import { HeadwaterError } from '../core/errors.js';
import { httpCore } from '../api/http-core.js';
import { ingestRoutes } from '../api/ingest-routes.js';
import {
  EventChecker,
  IngestFrontDoor,
  type CheckedEvent,
  type EventOutcome,
  type IncomingEvent,
} from '../accept/front-door.js';
import type { NormalizedEvent } from '../model/normalize.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import type { IngestPolicy } from '../accept/redaction.js';
import { createValidator, type Validator } from '../accept/validate.js';
import {
  createForwarder,
  type ForwardConfig,
  type ForwardedEvent,
  type Forwarder,
} from '../streams/forwarder.js';
import { createKafkaIngest, type KafkaIngest, type StreamLogger } from '../streams/kafka-ingest.js';

/** The event as the forwarder takes it: parsed, with its text on one line (the spool is line-based). */
function forwarded(event: NormalizedEvent, value?: unknown): ForwardedEvent {
  const parsed = (value ?? JSON.parse(event.body)) as Record<string, unknown>;
  return { value: parsed, text: event.body.includes('\n') ? JSON.stringify(parsed) : event.body };
}

/**
 * The proxy's front door: the server's checks, then the durable spools of the sinks instead of the store. An
 * event is 'stored' once every sink it is routed to has it on disk.
 */
export class SpoolFrontDoor {
  readonly #checker: EventChecker;
  readonly #forwarder: Forwarder;

  constructor(checker: EventChecker, forwarder: Forwarder) {
    this.#checker = checker;
    this.#forwarder = forwarder;
  }

  async submit(incoming: readonly (IncomingEvent | CheckedEvent)[]): Promise<EventOutcome[]> {
    const outcomes: EventOutcome[] = [];
    const accepted: ForwardedEvent[] = [];
    const positions: number[] = [];
    incoming.forEach((item, index) => {
      const checked = 'ok' in item ? item : this.#checker.check(item);
      if (!checked.ok) {
        outcomes.push(checked.outcome);
        return;
      }
      accepted.push(forwarded(checked.event, 'ok' in item ? undefined : item.value));
      positions.push(index);
      outcomes.push({ status: 'stored' });
    });
    if (accepted.length === 0) return outcomes;
    try {
      await this.#forwarder.accept(accepted);
    } catch (error) {
      const outcome: EventOutcome = {
        status: 'unavailable',
        reason: `the proxy cannot write its spool (${(error as Error).message}); nothing was accepted, send it again`,
        retryAfterSeconds: 1,
      };
      for (const position of positions) outcomes[position] = outcome;
    }
    return outcomes;
  }
}

/**
 * The server's front door, forwarding what it stores through the sinks of `serve --forward-config`. An event is
 * forwarded once it is committed; a spool that cannot be written is logged (the event stays stored).
 */
export class ForwardingFrontDoor extends IngestFrontDoor {
  readonly #forwarder: Forwarder;
  readonly #log: StreamLogger;

  constructor(
    validator: Validator,
    pipeline: IngestPipeline,
    forwarder: Forwarder,
    log: StreamLogger,
    policy?: IngestPolicy,
  ) {
    super(validator, pipeline, policy);
    this.#forwarder = forwarder;
    this.#log = log;
  }

  override async submit(incoming: readonly (IncomingEvent | CheckedEvent)[]): Promise<EventOutcome[]> {
    const checked = incoming.map((item) => ('ok' in item ? item : this.check(item)));
    const outcomes = await super.submit(checked);
    const stored: ForwardedEvent[] = [];
    outcomes.forEach((outcome, index) => {
      const item = checked[index]!;
      if (outcome.status === 'stored' && item.ok) {
        const original = incoming[index]!;
        stored.push(forwarded(item.event, 'ok' in original ? undefined : original.value));
      }
    });
    if (stored.length > 0) {
      await this.#forwarder
        .accept(stored)
        .catch((error: unknown) =>
          this.#log.error({ err: error }, 'stored events could not be spooled for forwarding'),
        );
    }
    return outcomes;
  }
}

/** A running (or ready-to-listen) proxy. */
export interface HeadwaterProxy {
  readonly app: FastifyInstance;
  readonly forwarder: Forwarder;
  /** The Kafka source, when the config has one (started by listen()). */
  readonly source: KafkaIngest | undefined;
  listen(): Promise<string>;
  /** Stops taking events, leaves the Kafka group (committing what is spooled) and stops delivering. */
  close(): Promise<void>;
}

/** The Kafka source of a forwarding config: `source: { kafka: { topics, group, deadLetterTopic, config } }`. */
function kafkaSource(forward: ForwardConfig) {
  const kafka = forward.source?.kafka as Record<string, unknown> | undefined;
  if (kafka === undefined) return undefined;
  const where = 'source.kafka';
  const topics = kafka.topics;
  if (!Array.isArray(topics) || topics.length === 0 || !topics.every((topic) => typeof topic === 'string'))
    throw new HeadwaterError('INVALID_CONFIG', `${where}.topics must be a list of topic names.`);
  const settings = kafka.config;
  if (typeof settings !== 'object' || settings === null)
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `${where}.config must hold the Kafka settings (bootstrap.servers, ...).`,
    );
  try {
    return {
      topics,
      groupId: typeof kafka.group === 'string' ? kafka.group : 'headwater-proxy',
      deadLetterTopic: typeof kafka.deadLetterTopic === 'string' ? kafka.deadLetterTopic : 'headwater.dlq',
      connection: kafkaConnectionOptions(
        Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, String(value)])),
        `${where}.config`,
      ),
    };
  } catch (error) {
    if (error instanceof KafkaConfigError)
      throw new HeadwaterError('INVALID_CONFIG', error.message, { cause: error });
    throw error;
  }
}

/**
 * Builds the proxy: the OpenLineage HTTP API (`/api/v1/lineage` and the batch endpoint) with the server's checks,
 * a durable spool per sink, delivery to the sinks, `/healthz`, `/readyz` and `/metrics`, and optionally a Kafka
 * topic as a source.
 */
export async function createProxy(config: ServerConfig, forward: ForwardConfig): Promise<HeadwaterProxy> {
  const app = Fastify({
    bodyLimit: config.maxBodyBytes,
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
  });
  const forwarder = createForwarder(forward, { log: app.log, metricPrefix: 'headwater_proxy' });
  const validator = createValidator({ strict: config.strict, specDir: config.specDir });
  const frontDoor = new SpoolFrontDoor(new EventChecker(validator), forwarder);
  await app.register(httpCore, { config });
  await app.register(ingestRoutes, { frontDoor, config });
  app.get('/healthz', () => ({ status: 'ok' }));
  app.get('/readyz', () => ({
    status: 'ready',
    sinks: Object.fromEntries(forwarder.sinks.map((sink) => [sink, { spooled: forwarder.depth(sink) }])),
  }));
  app.get('/metrics', async (_request, reply) => {
    void reply.header('content-type', forwarder.registry.contentType);
    return forwarder.registry.metrics();
  });
  const sourceConfig = kafkaSource(forward);
  const source = sourceConfig && createKafkaIngest({ ...sourceConfig, frontDoor, log: app.log });
  let closing: Promise<void> | undefined;
  return {
    app,
    forwarder,
    source,
    async listen() {
      forwarder.start();
      const address = await app.listen({ port: config.port, host: config.host });
      await source?.start();
      return address.replace('[::1]', 'localhost');
    },
    close() {
      closing ??= (async () => {
        await source?.close();
        await app.close();
        await forwarder.close();
      })();
      return closing;
    },
  };
}
