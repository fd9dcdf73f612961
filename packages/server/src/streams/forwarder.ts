import path from 'node:path';
import {
  createTransportFromConfig,
  OpenLineageConfigError,
  openSpoolQueue,
  safeEmitBatch,
  type OpenLineageEvent,
  type SpoolQueue,
  type Transport,
} from '@headwater/openlineage';
import { Counter, Gauge, Registry } from 'prom-client';
import { readConfigFile } from '../core/config-reader.js';
import { backoffDelayMs, checkBackoffPolicy, sleep } from '../core/backoff.js';
import { HeadwaterError } from '../core/errors.js';
import { createArchiveSink } from './archive-sink.js';
import type { StreamLogger } from './kafka-ingest.js';
import { createRouter, type EventMatch, type Route } from './routing.js';

/** The sinks-and-routes file of the proxy (and of `serve --forward-config`), validated. */
export interface ForwardConfig {
  /** The folder of the config file: relative paths in it are relative to this. */
  readonly baseDir: string;
  /** Where each sink's spool lives (`<dir>/<sink>`). */
  readonly spoolDir: string;
  /** Most bytes waiting for one sink. */
  readonly maxSpoolBytesPerSink: number;
  /**
   * What a full spool does with new events for its sink: `refuse` them all (nothing is acknowledged: the proxy
   * answers 503 with Retry-After and producers send again) or `drop` that sink's copy (counted), so that the
   * other sinks go on taking events. @default 'refuse'
   */
  readonly whenSpoolFull: 'refuse' | 'drop';
  /** Sink name to its transport configuration (the OpenLineage Python client's shape, plus `type: archive`). */
  readonly sinks: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly routes: readonly Route[];
  /** A Kafka topic to read as a source (the proxy only). */
  readonly source: Readonly<Record<string, unknown>> | undefined;
}

const bad = (where: string, message: string): never => {
  throw new HeadwaterError('INVALID_CONFIG', `${where} ${message}`);
};
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function stringList(value: unknown, where: string): string[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string'))
    bad(where, 'must be a string or a list of strings');
  return list as string[];
}

function eventMatch(value: unknown, where: string): EventMatch | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) return bad(where, 'must be a mapping of namespace, job, eventType, producer');
  const known = ['namespace', 'job', 'eventType', 'producer'];
  for (const key of Object.keys(value))
    if (!known.includes(key)) bad(`${where}.${key}`, `is not a match key; use ${known.join(', ')}`);
  const out: Record<string, string[]> = {};
  for (const key of known) {
    const list = stringList(value[key], `${where}.${key}`);
    if (list) out[key] = list;
  }
  return out;
}

/**
 * Reads a sinks-and-routes file (YAML or JSON):
 *
 * ```yaml
 * spool: { dir: ./spool, maxBytesPerSink: 104857600, whenFull: refuse }
 * sinks:
 *   kafka: { type: kafka, topic: openlineage, config: { bootstrap.servers: "kafka:9092" } }
 *   marquez: { type: http, url: "http://marquez:5000", auth: { type: api_key, apiKey: "..." } }
 *   archive: { type: archive, dir: ./archive }
 * routes:
 *   - sinks: [kafka, archive]
 *   - sinks: [marquez]
 *     include: { namespace: ["prod-*"], eventType: [COMPLETE, FAIL] }
 *     exclude: { job: ["*.tmp"] }
 *     transform: { dropFacets: [spark_unknown], renameNamespaces: { prod-eu: prod } }
 * source: { kafka: { topics: [openlineage], group: proxy, config: { bootstrap.servers: "kafka:9092" } } }
 * ```
 * @throws HeadwaterError INVALID_CONFIG naming the file and the key.
 */
export function loadForwardConfig(file: string): ForwardConfig {
  const tree = readConfigFile(file, 'the forwarding config');
  if (!isObject(tree)) return bad(file, 'must be a mapping with sinks (and routes)');
  const spool = tree.spool ?? {};
  if (!isObject(spool)) return bad(`${file}: spool`, 'must be a mapping of dir, maxBytesPerSink, whenFull');
  const dir = spool.dir ?? '.headwater-spool';
  if (typeof dir !== 'string') bad(`${file}: spool.dir`, 'must be a folder path');
  const maxBytes = spool.maxBytesPerSink ?? 100 * 1024 * 1024;
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 1024)
    bad(`${file}: spool.maxBytesPerSink`, 'must be a whole number of bytes, at least 1024');
  const whenFull = spool.whenFull ?? 'refuse';
  if (whenFull !== 'refuse' && whenFull !== 'drop') bad(`${file}: spool.whenFull`, 'must be refuse or drop');
  const sinks = tree.sinks;
  if (!isObject(sinks) || Object.keys(sinks).length === 0)
    return bad(
      `${file}: sinks`,
      'must name at least one sink, e.g. sinks: { archive: { type: archive, dir: ./archive } }',
    );
  for (const [name, sink] of Object.entries(sinks)) {
    if (!/^[A-Za-z0-9_-]+$/.test(name))
      bad(`${file}: sinks.${name}`, 'names a sink with letters, digits, _ and - only');
    if (!isObject(sink) || typeof sink.type !== 'string')
      bad(
        `${file}: sinks.${name}`,
        'must be a transport configuration with a type (kafka, http, archive, ...)',
      );
  }
  const rawRoutes = tree.routes ?? [];
  if (!Array.isArray(rawRoutes)) return bad(`${file}: routes`, 'must be a list of rules');
  const routes = rawRoutes.map((rule: unknown, index): Route => {
    const where = `${file}: routes[${index}]`;
    if (!isObject(rule)) return bad(where, 'must be a mapping with sinks');
    for (const key of Object.keys(rule))
      if (!['sinks', 'include', 'exclude', 'transform'].includes(key))
        bad(`${where}.${key}`, 'is not a rule key; use sinks, include, exclude, transform');
    const targets = stringList(rule.sinks, `${where}.sinks`) ?? Object.keys(sinks);
    for (const target of targets)
      if (!(target in sinks)) bad(`${where}.sinks`, `names ${target}, which is not a sink`);
    const include = eventMatch(rule.include, `${where}.include`);
    const exclude = eventMatch(rule.exclude, `${where}.exclude`);
    const transform = rule.transform;
    let parsed: Route['transform'];
    if (transform !== undefined) {
      if (!isObject(transform))
        return bad(`${where}.transform`, 'must be a mapping of dropFacets, renameNamespaces');
      const dropFacets = stringList(transform.dropFacets, `${where}.transform.dropFacets`);
      const rename = transform.renameNamespaces;
      if (
        rename !== undefined &&
        (!isObject(rename) || !Object.values(rename).every((v) => typeof v === 'string'))
      )
        bad(`${where}.transform.renameNamespaces`, 'must map namespaces to namespaces');
      parsed = {
        ...(dropFacets ? { dropFacets } : {}),
        ...(rename ? { renameNamespaces: rename as Record<string, string> } : {}),
      };
    }
    return {
      sinks: targets,
      ...(include ? { include } : {}),
      ...(exclude ? { exclude } : {}),
      ...(parsed ? { transform: parsed } : {}),
    };
  });
  const source = tree.source;
  if (source !== undefined && !isObject(source))
    bad(`${file}: source`, 'must be a mapping: { kafka: {...} }');
  return Object.freeze({
    baseDir: path.dirname(path.resolve(file)),
    spoolDir: path.resolve(path.dirname(file), dir as string),
    maxSpoolBytesPerSink: maxBytes as number,
    whenSpoolFull: whenFull as 'refuse' | 'drop',
    sinks: sinks as Record<string, Record<string, unknown>>,
    routes,
    source: source as Record<string, unknown> | undefined,
  });
}

/** An event on its way to the sinks: parsed, and its JSON text on one line. */
export interface ForwardedEvent {
  readonly value: Record<string, unknown>;
  readonly text: string;
}

/** A sink's spool has no room for the events (see {@link ForwardConfig.whenSpoolFull}). */
export class SpoolFullError extends Error {
  override readonly name = 'SpoolFullError';
}

/** Routes events to sinks through a durable spool per sink, and delivers each sink on its own. */
export interface Forwarder {
  /** The Prometheus registry holding the forwarder's series (`options.registry`, else its own). */
  readonly registry: Registry;
  readonly sinks: readonly string[];
  /** Events waiting for `sink`. */
  depth(sink: string): number;
  /**
   * Routes `events` and appends them to the spools of their sinks; resolves once they are on disk (fsync).
   * Rejects (nothing acknowledged) when a spool cannot be written, or when one is full and `whenSpoolFull` is
   * `refuse` ({@link SpoolFullError}); with `drop`, a full spool's sink loses its copy, counted, and the others
   * go on.
   */
  accept(events: readonly ForwardedEvent[]): Promise<void>;
  /** Starts delivering. */
  start(): void;
  /** Stops delivering (what is spooled stays for the next start) and closes the sinks. */
  close(): Promise<void>;
}

/** Options of {@link createForwarder}. */
export interface ForwarderOptions {
  readonly log: StreamLogger;
  /** Most events sent to a sink at once. @default 500 */
  readonly batchSize?: number;
  /**
   * First back-off after a failed delivery, before jitter (core/backoff.ts); doubles to `maxBackoffMs`, and
   * starts again after a delivery that settled the whole batch. @default 200
   */
  readonly baseBackoffMs?: number;
  /** The longest back-off, before jitter. @default 30000 */
  readonly maxBackoffMs?: number;
  /** Prefix of the metric names. @default 'headwater_forward' */
  readonly metricPrefix?: string;
  /** The registry its series join (the server's, served at its /metrics). @default a registry of its own */
  readonly registry?: Registry;
}

/** Creates the transports of the sinks; bad sink configuration throws once, naming the key. */
function createSinks(config: ForwardConfig): Map<string, Transport> {
  const transports = new Map<string, Transport>();
  for (const [name, sink] of Object.entries(config.sinks)) {
    try {
      transports.set(
        name,
        createTransportFromConfig(
          sink,
          {
            // The forwarder retries with back-off itself, for as long as the spool holds the events.
            retryDefaults: { retries: 0 },
            onWarning: () => undefined,
            transportFactories: {
              archive: (tree, key) => {
                for (const field of Object.keys(tree))
                  if (!['type', 'dir', 'maxFileBytes'].includes(field))
                    throw new OpenLineageConfigError(
                      `${key}.${field}`,
                      'is not an archive key; use dir, maxFileBytes',
                    );
                if (typeof tree.dir !== 'string')
                  throw new OpenLineageConfigError(`${key}.dir`, 'is required: the folder of the archive');
                const max = tree.maxFileBytes;
                if (max !== undefined && (typeof max !== 'number' || max < 1))
                  throw new OpenLineageConfigError(`${key}.maxFileBytes`, 'must be a number of bytes');
                return createArchiveSink({
                  dir: path.resolve(config.baseDir, tree.dir),
                  ...(typeof max === 'number' ? { maxFileBytes: max } : {}),
                });
              },
            },
          },
          `sinks.${name}`,
        ),
      );
    } catch (error) {
      if (error instanceof OpenLineageConfigError)
        throw new HeadwaterError('INVALID_CONFIG', error.message, { cause: error });
      throw error;
    }
  }
  return transports;
}

/** Creates a forwarder for `config`: its sinks, their spools (reopened as left, after any crash) and metrics. */
export function createForwarder(config: ForwardConfig, options: ForwarderOptions): Forwarder {
  const { log } = options;
  const batchSize = options.batchSize ?? 500;
  const backoff = checkBackoffPolicy(
    { baseDelayMs: options.baseBackoffMs ?? 200, maxDelayMs: options.maxBackoffMs ?? 30_000 },
    'forwarder (baseBackoffMs, maxBackoffMs)',
  );
  const prefix = options.metricPrefix ?? 'headwater_forward';
  const transports = createSinks(config);
  const names = [...transports.keys()];
  const spools = new Map<string, SpoolQueue>(
    names.map((name) => [
      name,
      openSpoolQueue({ dir: path.join(config.spoolDir, name), maxBytes: config.maxSpoolBytesPerSink }),
    ]),
  );
  const route = createRouter(config.routes, names);
  const registry = options.registry ?? new Registry();
  const labelNames = ['sink'] as const;
  const delivered = new Counter({
    name: `${prefix}_delivered_total`,
    help: 'Events delivered, per sink',
    labelNames,
    registers: [registry],
  });
  const failures = new Counter({
    name: `${prefix}_delivery_failures_total`,
    help: 'Failed delivery attempts (retried), per sink',
    labelNames,
    registers: [registry],
  });
  const rejected = new Counter({
    name: `${prefix}_rejected_total`,
    help: 'Events a sink refused for good (4xx), dropped, per sink',
    labelNames,
    registers: [registry],
  });
  const dropped = new Counter({
    name: `${prefix}_spool_full_dropped_total`,
    help: 'Events dropped because the sink spool was full, per sink',
    labelNames,
    registers: [registry],
  });
  const routed = new Counter({
    name: `${prefix}_routed_total`,
    help: 'Events spooled for a sink, per sink',
    labelNames,
    registers: [registry],
  });
  new Gauge({
    name: `${prefix}_spool_depth`,
    help: 'Events waiting in the spool, per sink',
    labelNames,
    registers: [registry],
    collect() {
      for (const [sink, spool] of spools) this.set({ sink }, spool.depth);
    },
  });
  new Gauge({
    name: `${prefix}_spool_bytes`,
    help: 'Bytes waiting in the spool, per sink',
    labelNames,
    registers: [registry],
    collect() {
      for (const [sink, spool] of spools) this.set({ sink }, spool.bytes);
    },
  });
  new Gauge({
    name: `${prefix}_delivery_lag_seconds`,
    help: 'Age of the oldest event waiting, per sink (0 when none waits)',
    labelNames,
    registers: [registry],
    collect() {
      const now = Date.now();
      for (const [sink, spool] of spools)
        this.set({ sink }, spool.oldestAt === undefined ? 0 : (now - spool.oldestAt) / 1000);
    },
  });
  const stopping = new AbortController();
  const loops: Promise<void>[] = [];

  async function deliver(sink: string, transport: Transport, spool: SpoolQueue): Promise<void> {
    /** Deliveries in a row that left events in the spool. */
    let failed = 0;
    while (!stopping.signal.aborted) {
      await spool.waitForData(stopping.signal);
      if (stopping.signal.aborted) return;
      const texts = spool.peek(batchSize);
      const events = texts.map((text) => JSON.parse(text) as OpenLineageEvent);
      const result = await safeEmitBatch(transport, events);
      let settled = texts.length;
      if (result.status === 'retryable') settled = 0;
      else if (result.status === 'partial')
        settled = result.retryable.length > 0 ? Math.min(...result.retryable) : texts.length;
      const refused =
        result.status === 'failure'
          ? texts.length
          : result.status === 'partial'
            ? result.failed.filter((i) => i < settled).length
            : 0;
      if (refused > 0) {
        rejected.inc({ sink }, refused);
        log.warn(
          { sink, refused, err: 'error' in result ? result.error : undefined },
          'sink refused events for good; dropped',
        );
      }
      if (settled - refused > 0) delivered.inc({ sink }, settled - refused);
      if (settled > 0) await spool.ack(settled);
      if (settled < texts.length) {
        failures.inc({ sink });
        if (failed === 0)
          log.warn(
            { sink, err: 'error' in result ? result.error : undefined },
            'sink unavailable; retrying with back-off',
          );
        await sleep(backoffDelayMs(++failed, backoff), stopping.signal);
      } else failed = 0;
    }
  }

  return {
    registry,
    sinks: names,
    depth: (sink) => spools.get(sink)?.depth ?? 0,
    async accept(events) {
      const bySink = new Map<string, string[]>(names.map((name) => [name, []]));
      for (const event of events)
        for (const [sink, text] of route(event.value, event.text)) bySink.get(sink)!.push(text);
      const refuse = config.whenSpoolFull === 'refuse';
      const full = (sink: string) =>
        new SpoolFullError(
          `the spool of sink ${sink} is full (${spools.get(sink)!.bytes} bytes wait for it; spool.maxBytesPerSink ` +
            `is ${config.maxSpoolBytesPerSink})`,
        );
      if (refuse) {
        // Refused whole before anything is appended, so a retry does not repeat it for the sinks that had room.
        for (const [sink, texts] of bySink) if (!spools.get(sink)!.fits(texts)) throw full(sink);
      }
      const refused: string[] = [];
      await Promise.all(
        [...bySink].map(async ([sink, texts]) => {
          if (texts.length === 0) return;
          if (await spools.get(sink)!.append(texts)) routed.inc({ sink }, texts.length);
          else if (refuse) refused.push(sink);
          else {
            dropped.inc({ sink }, texts.length);
            log.error({ sink, events: texts.length }, 'sink spool is full; events for this sink dropped');
          }
        }),
      );
      // Another accept took the room meanwhile: this one is refused (the sinks that took it deliver it twice,
      // as at-least-once allows).
      if (refused.length > 0) throw full(refused[0]!);
    },
    start() {
      for (const [sink, transport] of transports) {
        loops.push(
          deliver(sink, transport, spools.get(sink)!).catch((error: unknown) =>
            log.error({ sink, err: error }, 'sink delivery stopped on an error'),
          ),
        );
      }
    },
    async close() {
      stopping.abort();
      await Promise.all(loops);
      for (const transport of transports.values()) await transport.close?.(2000);
      for (const spool of spools.values()) await spool.close();
    },
  };
}
