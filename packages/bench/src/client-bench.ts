import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  createClient,
  type AsyncTransport,
  type ClientStats,
  type OpenLineageClient,
  type RunEvent,
} from '@headwater/openlineage';
import { createHttpClient } from './http-client.js';
import type { Outcome } from './report.js';
import { createRunEventStream } from './run-events.js';
import type { ServerProcess } from './server-process.js';
import { measureCpu, percentiles, type CpuUse, type Percentiles } from './stats.js';

/** The client's default `emitTimeoutMs`: the bound within which the promise of emit() resolves. */
export const EMIT_TIMEOUT_MS = 5_000;
/** The bound the benchmark gives close() while deliveries to the down backend are still retrying. */
export const CLOSE_TIMEOUT_MS = 2_000;
/** Events per batch request of the async_http transport (its default, the Python client's). */
export const ASYNC_BATCH_SIZE = 100;
/** Events the async_http transport holds in memory by default (the Python client's `max_queue_size`). */
export const DEFAULT_MAX_QUEUE_SIZE = 10_000;

/** emit() on the caller's thread while the backend is down. */
export interface BackendDownResult {
  readonly emits: number;
  /** From the call to emit() until it returns its promise: the time the caller's thread is held. */
  readonly syncUs: Percentiles;
  /** The same for the emits that started a delivery (an HTTP request, then retries in the background)... */
  readonly deliveringSyncUs: Percentiles;
  /** ...and for those dropped at once because `maxPendingEmits` (1,000) deliveries were already in flight. */
  readonly droppedSyncUs: Percentiles;
  /** Emits that started a delivery. */
  readonly delivering: number;
  /** From the call to emit() until its promise resolves (for a caller that awaits it). */
  readonly resolvedMs: Percentiles;
  /** The client's counters after the emits: how many deliveries were in flight, dropped, timed out. */
  readonly stats: ClientStats;
  /** How long close(CLOSE_TIMEOUT_MS) took with deliveries still retrying, and what it returned. */
  readonly closeMs: number;
  readonly closeResult: boolean;
  readonly closeBoundMs: number;
}

/** The async_http transport (batching) against a real Headwater server. */
export interface AsyncThroughputResult {
  readonly events: number;
  /** From the first emit() until close() resolved. */
  readonly seconds: number;
  readonly eventsPerSec: number;
  /** Until the last emit() resolved (the events are then queued, not yet sent). */
  readonly emitSeconds: number;
  readonly batchSize: number;
  /** The transport's `max_queue_size` for this run: the events, so that a full queue drops none. */
  readonly maxQueueSize: number;
  /** Most events waiting in the queue at once: above DEFAULT_MAX_QUEUE_SIZE, the defaults would have dropped. */
  readonly peakQueued: number;
  readonly meanEventBytes: number;
  readonly closeResult: boolean;
  readonly stats: ClientStats;
  /** Events the server stores that it did not before: all of them, if nothing was lost. */
  readonly stored: number | undefined;
  readonly cpu: CpuUse;
}

/** Both client measurements; each may fail on its own. */
export interface ClientBenchResult {
  readonly backendDown: Outcome<BackendDownResult>;
  readonly asyncHttp: Outcome<AsyncThroughputResult>;
}

/**
 * A client that reads no openlineage.yml and no OPENLINEAGE_* variable of the caller's environment, so that the
 * benchmark measures the configuration it states and nothing else.
 */
async function isolatedClient(
  transport: Record<string, unknown>,
): Promise<{ client: OpenLineageClient; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-bench-client-'));
  const client = createClient({
    config: { transport },
    sources: { env: {}, cwd: dir, homeDir: dir },
    // Undelivered events are counted in client.stats(); no console warnings in the tables.
    onError: () => undefined,
    onWarning: () => undefined,
  });
  return { client, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A port on 127.0.0.1 that nothing listens on: bound by the kernel, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The client's timers (retry back-off, emit and close timeouts) never keep a process alive, by design: while the
 * harness awaits only them, Node would find nothing left to do and exit mid-measurement. This timer holds the
 * process until `release()`.
 */
function holdProcess(): () => void {
  const timer = setInterval(() => undefined, 1_000);
  return () => clearInterval(timer);
}

/**
 * The `http` transport with its defaults (5 retries with back-off from 300 ms) pointed at a closed port: the
 * caller emits realistic events one after another, giving the event loop a turn after each (as a program that
 * does other work would), and the harness times every emit() until it returns (the part that holds the
 * caller's thread) and until its promise resolves. The client keeps at most 1,000 deliveries in flight
 * (`maxPendingEmits`); later events are dropped at once, so most of the emits measure that path, timed apart.
 * Once every emit promise has resolved, close(2 s) must return within its bound although deliveries are still
 * retrying.
 */
export async function runBackendDown(emits: number, seed: number): Promise<BackendDownResult> {
  const port = await closedPort();
  const { client, cleanup } = await isolatedClient({ type: 'http', url: `http://127.0.0.1:${port}` });
  const release = holdProcess();
  try {
    const stream = createRunEventStream({ seed });
    const syncUs: number[] = [];
    const deliveringUs: number[] = [];
    const droppedUs: number[] = [];
    const resolvedMs: number[] = [];
    const settled: Promise<void>[] = [];
    for (let i = 0; i < emits; i++) {
      const event = JSON.parse(stream.next()) as RunEvent;
      const undeliveredBefore = client.stats().undelivered;
      const startedAt = performance.now();
      const promise = client.emit(event);
      const elapsedUs = (performance.now() - startedAt) * 1000;
      syncUs.push(elapsedUs);
      // An emit that finds maxPendingEmits deliveries in flight counts its event undelivered before returning.
      (client.stats().undelivered > undeliveredBefore ? droppedUs : deliveringUs).push(elapsedUs);
      settled.push(
        promise.then(() => {
          resolvedMs.push(performance.now() - startedAt);
        }),
      );
      await yieldToLoop();
    }
    // Every emit promise resolves within emitTimeoutMs, while the deliveries behind them go on retrying.
    await Promise.all(settled);
    const stats = client.stats();
    const closeStartedAt = performance.now();
    const closeResult = await client.close(CLOSE_TIMEOUT_MS);
    const closeMs = performance.now() - closeStartedAt;
    return {
      emits,
      syncUs: percentiles(syncUs),
      deliveringSyncUs: percentiles(deliveringUs),
      droppedSyncUs: percentiles(droppedUs),
      delivering: deliveringUs.length,
      resolvedMs: percentiles(resolvedMs),
      stats,
      closeMs,
      closeResult,
      closeBoundMs: CLOSE_TIMEOUT_MS,
    };
  } finally {
    await client.close(0).catch(() => undefined);
    await cleanup();
    release();
  }
}

/**
 * The `async_http` transport with `batch: true` (POST /api/v1/lineage/batch, 100 events per request) against a
 * running server: the caller awaits each emit() (it resolves once the event is queued), then awaits close(),
 * which sends what is left. Throughput is events / (first emit to close() resolved), and the server's event
 * count must have grown by exactly the events sent. The caller queues events faster than one sender delivers
 * them, so the queue is made as large as the run (the default of 10,000 would drop the excess, by design): the
 * peak queue length says how far the caller got ahead.
 */
export async function runAsyncThroughput(
  server: ServerProcess,
  events: number,
  seed: number,
): Promise<AsyncThroughputResult> {
  const before = await storedEvents(server.url);
  const maxQueueSize = Math.max(DEFAULT_MAX_QUEUE_SIZE, events);
  const { client, cleanup } = await isolatedClient({
    type: 'async_http',
    url: server.url,
    batch: true,
    batch_size: ASYNC_BATCH_SIZE,
    max_queue_size: maxQueueSize,
  });
  const queue = client.transport as Partial<AsyncTransport>;
  let peakQueued = 0;
  const release = holdProcess();
  try {
    const stream = createRunEventStream({ seed: seed + 1 });
    const stopCpu = measureCpu(server);
    const startedAt = performance.now();
    for (let i = 0; i < events; i++) {
      await client.emit(JSON.parse(stream.next()) as RunEvent);
      peakQueued = Math.max(peakQueued, queue.stats?.().queued ?? 0);
    }
    const emitSeconds = (performance.now() - startedAt) / 1000;
    const closeResult = await client.close(120_000);
    const seconds = (performance.now() - startedAt) / 1000;
    const cpu = stopCpu();
    const after = await storedEvents(server.url);
    return {
      events,
      seconds,
      eventsPerSec: events / seconds,
      emitSeconds,
      batchSize: ASYNC_BATCH_SIZE,
      maxQueueSize,
      peakQueued,
      meanEventBytes: stream.meanBytes,
      closeResult,
      stats: client.stats(),
      stored: before === undefined || after === undefined ? undefined : after - before,
      cpu,
    };
  } finally {
    await client.close(0).catch(() => undefined);
    await cleanup();
    release();
  }
}

/** `totalCount` of GET /api/v1/events/lineage?limit=0, or undefined when the server cannot say. */
async function storedEvents(baseUrl: string): Promise<number | undefined> {
  const client = createHttpClient(baseUrl, { maxSockets: 1 });
  try {
    const response = await client.get('/api/v1/events/lineage?limit=0');
    if (response.status !== 200) return undefined;
    const total = (JSON.parse(response.body) as { totalCount?: unknown }).totalCount;
    return typeof total === 'number' ? total : undefined;
  } catch {
    return undefined;
  } finally {
    client.close();
  }
}
