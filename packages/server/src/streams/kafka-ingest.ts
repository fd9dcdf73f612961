import {
  Admin,
  AuthenticationError,
  Consumer,
  Producer,
  stringSerializers,
  type Message,
  type MessagesStream,
} from '@platformatic/kafka';
import type { KafkaConnectionOptions } from '@headwater/openlineage';
import { checkBackoffPolicy, retryDelayMs, sleep, untilAborted } from '../core/backoff.js';
import { HeadwaterError } from '../core/errors.js';
import type { EventOutcome, IncomingEvent, IngestFrontDoor } from '../accept/front-door.js';

/** Where the consumer reports what it does (a pino logger fits). */
export interface StreamLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** Options of {@link createKafkaIngest}. */
export interface KafkaIngestOptions {
  readonly connection: KafkaConnectionOptions;
  readonly topics: readonly string[];
  readonly groupId: string;
  readonly deadLetterTopic: string;
  /** The one way in for events: the same checks and group commit as HTTP. */
  readonly frontDoor: Pick<IngestFrontDoor, 'submit'>;
  readonly log: StreamLogger;
  /** Most messages submitted at once. @default 1000 */
  readonly maxBatchMessages?: number;
  /** Batches submitted before the first of them is committed. @default 4 */
  readonly maxBatchesInFlight?: number;
  /**
   * First wait before a batch the store could not take is tried again, before jitter (core/backoff.ts); doubles
   * up to 10 s, and starts again with the next batch. A longer `Retry-After` of the store is waited, up to 10 s.
   * @default 250
   */
  readonly retryDelayMs?: number;
  /** Where a group with no committed offset starts. @default 'earliest' */
  readonly startFrom?: 'earliest' | 'latest';
}

/** Counters of a running Kafka ingest. */
export interface KafkaIngestStats {
  /** Messages taken from the topics (a redelivered one counts again). */
  consumed: number;
  stored: number;
  duplicates: number;
  /** Messages written to the dead-letter topic. */
  deadLettered: number;
  /** Times a batch found the store away and the partitions were paused. */
  pauses: number;
  /** Whether the partitions are paused now, waiting for the store. */
  paused: boolean;
  /** Offsets committed (one per partition per batch). */
  commits: number;
  /** Commits the group refused (a rebalance took the partition away); their messages will come again. */
  commitsRefused: number;
}

/** How far the group is behind in one partition. */
export interface PartitionLag {
  readonly topic: string;
  readonly partition: number;
  /** Messages after the group's committed offset (all of them when nothing is committed yet). */
  readonly lag: number;
}

/** A Kafka consumer feeding the ingest front door. */
export interface KafkaIngest {
  readonly stats: Readonly<KafkaIngestStats>;
  /**
   * The lag of each partition assigned to this member now (none before it joins the group), asked of the
   * brokers; undefined when they do not answer within `timeoutMs`.
   */
  lag(timeoutMs?: number): Promise<PartitionLag[] | undefined>;
  /** Joins the group and starts consuming. */
  start(): Promise<void>;
  /**
   * Stops taking messages, finishes the batches being stored (waiting at most `timeoutMs` for a store that is
   * away), commits the offsets of what is stored, and leaves the group. What is not committed comes again.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** Header names of a dead-lettered message. */
export const DEAD_LETTER_HEADERS = {
  reason: 'headwater.dlq.reason',
  status: 'headwater.dlq.status',
  topic: 'headwater.dlq.topic',
  partition: 'headwater.dlq.partition',
  offset: 'headwater.dlq.offset',
} as const;

type RawMessage = Message<Buffer, Buffer, Buffer, Buffer>;

/** Most bytes of a reason kept in a header. */
const MAX_REASON_BYTES = 8 * 1024;
/** The longest wait before a batch is tried again, and the longest `Retry-After` of the store honoured. */
const MAX_RETRY_DELAY_MS = 10_000;

/** Reads a message as the event it carries; one that is not JSON is invalid. */
function decode(
  message: RawMessage,
): IncomingEvent | { ok: false; outcome: EventOutcome & { status: 'invalid' } } {
  const bad = (reason: string) => ({
    ok: false as const,
    outcome: { status: 'invalid' as const, reason, issues: [reason] },
  });
  if (message.value === undefined || message.value === null || message.value.length === 0)
    return bad('the message has no value; each message must be one OpenLineage event as JSON');
  const text = message.value.toString('utf8');
  try {
    return { value: JSON.parse(text) as unknown, text };
  } catch (error) {
    return bad(
      `the message is not valid JSON (${(error as Error).message}); send one OpenLineage event as JSON`,
    );
  }
}

/** The errors beneath `error` (its cause chain and, for an aggregate, each error it holds), itself first. */
function errorChain(error: unknown): unknown[] {
  const seen: unknown[] = [];
  const visit = (item: unknown) => {
    if (item === undefined || item === null || seen.includes(item) || seen.length > 20) return;
    seen.push(item);
    if (item instanceof AggregateError) for (const inner of item.errors) visit(inner);
    if (item instanceof Error) visit(item.cause);
  };
  visit(error);
  return seen;
}

/** Node's codes of a TLS peer certificate that could not be verified (openssl's names). */
const CERTIFICATE_CODE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_|ERR_SSL_/;

/**
 * What is wrong with the configuration when `error` says the brokers refused the client: its SASL credentials, or
 * the TLS trust. Undefined for any other failure (a broker not up yet), which the consumer's retries outlast.
 */
export function kafkaConnectionProblem(
  error: unknown,
  connection: KafkaConnectionOptions,
): string | undefined {
  const where = connection.bootstrapBrokers.join(', ');
  for (const item of errorChain(error)) {
    if (!(item instanceof Error)) continue;
    if (item instanceof AuthenticationError && connection.sasl !== undefined) {
      return (
        `Kafka at ${where} refused the SASL ${connection.sasl.mechanism} credentials of user ` +
        `"${connection.sasl.username}" (${item.message}): check the user name and password ` +
        '(serve: --kafka-sasl-username, --kafka-sasl-password; config: sasl.username, sasl.password) and the ' +
        'mechanism the broker enables (--kafka-sasl-mechanism, sasl.mechanism)'
      );
    }
    if (item instanceof AuthenticationError) {
      return `Kafka at ${where} wants authentication (${item.message}): pass SASL credentials (--kafka-sasl-username, --kafka-sasl-password)`;
    }
    const code = (item as { code?: unknown }).code;
    if (typeof code === 'string' && CERTIFICATE_CODE.test(code)) {
      return (
        `TLS to Kafka at ${where} failed: the broker's certificate was not accepted (${code}: ${item.message}): ` +
        "pass the CA that signed it (serve: --kafka-ssl-ca; config: ssl.ca.location), and check that the broker's " +
        'certificate names the host in --kafka-brokers'
      );
    }
  }
  return undefined;
}

/**
 * Asks the brokers for the topics' metadata with the consumer's connection, a few times: a refusal of the
 * credentials or of the TLS trust becomes one clear INVALID_CONFIG error, instead of a consumer retrying for
 * ever and saying nothing. Other failures (brokers still starting) are left to the consumer's own retries.
 */
async function checkConnection(connection: KafkaConnectionOptions, topics: readonly string[]): Promise<void> {
  const admin = new Admin({
    ...connection,
    clientId: `${connection.clientId}-check`,
    retries: 2,
    retryDelay: 500,
  });
  try {
    await admin.metadata({ topics: [...topics] });
  } catch (error) {
    const problem = kafkaConnectionProblem(error, connection);
    if (problem !== undefined) throw new HeadwaterError('INVALID_CONFIG', `${problem}.`, { cause: error });
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/**
 * Consumes OpenLineage events from Kafka into the store, at least once: a batch's offsets are committed only after
 * its events are committed in the store (or, for an invalid one, written to the dead-letter topic), in order, so a
 * crash at any point redelivers what was not committed and the store keeps each event once (events are found by
 * their hash). While the store is away the stream is paused (no fetches: every assigned partition waits) and the
 * batch in hand is tried again with back-off; nothing is skipped. A commit refused after a rebalance only means the
 * new owner of the partition reads those messages again.
 */
export function createKafkaIngest(options: KafkaIngestOptions): KafkaIngest {
  const maxBatch = options.maxBatchMessages ?? 1000;
  const maxInFlight = options.maxBatchesInFlight ?? 4;
  const baseDelayMs = options.retryDelayMs ?? 250;
  const backoff = checkBackoffPolicy(
    { baseDelayMs, maxDelayMs: Math.max(baseDelayMs, MAX_RETRY_DELAY_MS) },
    'Kafka ingest (retryDelayMs)',
  );
  const { log, frontDoor } = options;
  const stats: KafkaIngestStats = {
    consumed: 0,
    stored: 0,
    duplicates: 0,
    deadLettered: 0,
    pauses: 0,
    paused: false,
    commits: 0,
    commitsRefused: 0,
  };
  const consumer = new Consumer({
    ...options.connection,
    groupId: options.groupId,
    // A member that died (SIGKILL) holds its partitions until its session expires: keep that short.
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    rebalanceTimeout: 60_000,
    retries: Number.MAX_SAFE_INTEGER,
    retryDelay: 1000,
  });
  const deadLetters = new Producer<Buffer, Buffer, string, string>({
    ...options.connection,
    clientId: `${options.connection.clientId}-dlq`,
    serializers: { headerKey: stringSerializers.headerKey, headerValue: stringSerializers.headerValue },
    autocreateTopics: false,
  });
  let stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined;
  const pending: RawMessage[] = [];
  let wake: (() => void) | undefined;
  const stopping = new AbortController();
  let loop: Promise<void> | undefined;
  /** Batches being settled or committed. */
  let inFlight = 0;
  /** The highest offset committed per partition by this member: a commit never moves it back. */
  const committed = new Map<string, bigint>();

  const onMessage = (message: RawMessage) => {
    stats.consumed++;
    pending.push(message);
    if (pending.length >= maxBatch * 2) stream?.pause();
    wake?.();
  };

  async function deadLetter(message: RawMessage, outcome: EventOutcome & { status: 'invalid' | 'failed' }) {
    const reason = Buffer.from(outcome.reason).subarray(0, MAX_REASON_BYTES).toString('utf8');
    await deadLetters.send({
      acks: -1,
      messages: [
        {
          topic: options.deadLetterTopic,
          ...(message.key === undefined || message.key === null ? {} : { key: message.key }),
          value: message.value ?? Buffer.alloc(0),
          headers: new Map([
            [DEAD_LETTER_HEADERS.reason, reason],
            [DEAD_LETTER_HEADERS.status, outcome.status],
            [DEAD_LETTER_HEADERS.topic, message.topic],
            [DEAD_LETTER_HEADERS.partition, String(message.partition)],
            [DEAD_LETTER_HEADERS.offset, String(message.offset)],
          ]),
        },
      ],
    });
    stats.deadLettered++;
    log.warn(
      { topic: message.topic, partition: message.partition, offset: String(message.offset), reason },
      `Kafka message not ingested (${outcome.status}); written to ${options.deadLetterTopic}`,
    );
  }

  /**
   * Settles every message of `batch`: stored, duplicate or dead-lettered. Resolves false when stopping cut it
   * short (then nothing of it is committed and it all comes again).
   */
  async function settle(batch: readonly RawMessage[]): Promise<boolean> {
    let open = batch.map((message) => ({ message, incoming: decode(message) }));
    for (let attempt = 1; open.length > 0; attempt++) {
      const outcomes = await frontDoor.submit(open.map(({ incoming }) => incoming));
      const retry: typeof open = [];
      /** The longest wait the store asked for, if any did. */
      let retryAfterMs: number | undefined;
      for (let i = 0; i < open.length; i++) {
        const outcome = outcomes[i]!;
        const item = open[i]!;
        if (outcome.status === 'stored') stats.stored++;
        else if (outcome.status === 'duplicate') stats.duplicates++;
        else if (outcome.status === 'unavailable') {
          retry.push(item);
          retryAfterMs = Math.max(
            retryAfterMs ?? 0,
            Math.min(outcome.retryAfterSeconds * 1000, MAX_RETRY_DELAY_MS),
          );
        } else {
          try {
            await deadLetter(item.message, outcome);
          } catch (error) {
            log.error(
              { err: error },
              `cannot write to the dead-letter topic ${options.deadLetterTopic}; retrying`,
            );
            retry.push(item);
          }
        }
      }
      open = retry;
      if (open.length === 0) break;
      if (!stats.paused) {
        stats.paused = true;
        stats.pauses++;
        stream?.pause();
        log.warn({ waiting: open.length }, 'Kafka ingest paused: the store cannot take events now');
      }
      await sleep(retryDelayMs(attempt, backoff, { retryAfterMs }), stopping.signal);
      if (stopping.signal.aborted) return false;
    }
    if (stats.paused) {
      stats.paused = false;
      log.warn({}, 'Kafka ingest resumed: the store takes events again');
    }
    return true;
  }

  async function commit(batch: readonly RawMessage[]): Promise<void> {
    const next = new Map<string, { topic: string; partition: number; offset: bigint }>();
    for (const message of batch) {
      const key = `${message.topic}:${message.partition}`;
      const offset = message.offset + 1n;
      if (offset > (next.get(key)?.offset ?? -1n) && offset > (committed.get(key) ?? -1n))
        next.set(key, { topic: message.topic, partition: message.partition, offset });
    }
    if (next.size === 0) return;
    const offsets = [...next.values()].map((entry) => ({ ...entry, leaderEpoch: -1 }));
    try {
      await consumer.commit({ offsets });
      for (const [key, { offset }] of next) committed.set(key, offset);
      stats.commits += offsets.length;
    } catch (error) {
      // The group moved on (a rebalance): the new owner reads these messages again and stores them once.
      stats.commitsRefused += offsets.length;
      log.warn(
        { err: error },
        'Kafka offsets not committed (group rebalanced); those messages will come again',
      );
    }
  }

  const resumeWhenDue = () => {
    if (pending.length < maxBatch && !stats.paused && !stopping.signal.aborted && stream?.isPaused())
      stream.resume();
  };

  /**
   * Takes batches off `pending` and settles up to `maxInFlight` at once, so that one batch is checked while the
   * store writes another (the HTTP batch endpoint gets that overlap from concurrent senders). Offsets are still
   * committed in order: a batch's only once it and every batch before it are settled and committed.
   */
  async function run(): Promise<void> {
    let previous: Promise<boolean> = Promise.resolve(true);
    while (!stopping.signal.aborted) {
      if (pending.length === 0 || inFlight >= maxInFlight) {
        await untilAborted(stopping.signal, (done) => {
          wake = done;
        });
        wake = undefined;
        continue;
      }
      // Let messages of the same fetch join the batch.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const batch = pending.splice(0, maxBatch);
      inFlight++;
      const settled = settle(batch);
      const before = previous;
      previous = (async () => {
        try {
          const ok = (await settled) && (await before);
          if (ok) await commit(batch);
          return ok;
        } catch (error) {
          log.error({ err: error }, 'Kafka ingest stopped on an error');
          stopping.abort();
          return false;
        } finally {
          inFlight--;
          resumeWhenDue();
          wake?.();
        }
      })();
      resumeWhenDue();
    }
    await previous;
  }

  async function lag(): Promise<PartitionLag[]> {
    const assigned = (consumer.assignments ?? []).filter(({ partitions }) => partitions.length > 0);
    if (assigned.length === 0) return [];
    const [ends, commits] = await Promise.all([
      consumer.listOffsets({ topics: assigned.map(({ topic }) => topic) }),
      consumer.listCommittedOffsets({
        topics: assigned.map(({ topic, partitions }) => ({ topic, partitions })),
      }),
    ]);
    return assigned.flatMap(({ topic, partitions }) =>
      partitions.map((partition) => {
        const end = ends.get(topic)?.[partition] ?? 0n;
        // -1 is "nothing committed": the group starts from the earliest offset, so everything is behind.
        const committedOffset = commits.get(topic)?.[partition] ?? -1n;
        const behind = end - (committedOffset < 0n ? 0n : committedOffset);
        return { topic, partition, lag: Number(behind < 0n ? 0n : behind) };
      }),
    );
  }

  return {
    stats,
    async lag(timeoutMs = 2_000) {
      // The consumer retries for as long as the brokers are away; a scrape must not wait that long.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>(
        (resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)),
      );
      try {
        return await Promise.race([lag(), timeout]);
      } catch (error) {
        log.warn({ err: error }, 'Kafka consumer lag unknown: the brokers did not answer');
        return undefined;
      } finally {
        clearTimeout(timer);
      }
    },
    async start() {
      await checkConnection(options.connection, options.topics);
      stream = await consumer.consume({
        topics: [...options.topics],
        autocommit: false,
        mode: 'committed',
        fallbackMode: options.startFrom ?? 'earliest',
        maxWaitTime: 200,
      });
      stream.on('data', onMessage);
      stream.on('error', (error: Error) => log.error({ err: error }, 'Kafka consumer error'));
      loop = run().catch((error: unknown) => log.error({ err: error }, 'Kafka ingest stopped on an error'));
      log.info({ topics: options.topics, group: options.groupId }, 'Kafka ingest started');
    },
    async close(timeoutMs = 10_000) {
      stream?.pause();
      // The batch in hand finishes (its commit included) unless the store stays away past the deadline.
      const deadline = setTimeout(() => stopping.abort(), timeoutMs);
      wake?.();
      const idle = async () => {
        while ((inFlight > 0 || pending.length > 0) && !stopping.signal.aborted)
          await new Promise((resolve) => setTimeout(resolve, 10));
      };
      await idle();
      stopping.abort();
      clearTimeout(deadline);
      await loop;
      await stream?.close().catch(() => undefined);
      await consumer.close().catch(() => undefined);
      await deadLetters.close().catch(() => undefined);
    },
  };
}
