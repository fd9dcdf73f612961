import { createHttpClient, type HttpClient } from './http-client.js';
import { ErrorTally, runWorkers, type ErrorCount } from './load.js';
import type { RunEventStream } from './run-events.js';
import type { ServerProcess } from './server-process.js';
import {
  measureCpu,
  monotonicUs,
  percentiles,
  type CpuUse,
  type Percentiles,
  type TimeWindow,
} from './stats.js';

/** Options of {@link runBatchIngest}. */
export interface BatchIngestOptions {
  /** Events per request. */
  readonly batchSize: number;
  /** Concurrent closed-loop senders. */
  readonly senders: number;
  /** Length of the measured window. */
  readonly seconds: number;
  /** The measured window also ends after this many events. */
  readonly maxEvents: number;
}

/** What batch ingest measured. */
export interface BatchIngestResult {
  readonly batchSize: number;
  readonly senders: number;
  /** Events the server reported as successful in the measured window. */
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSec: number;
  /** Latency of whole batch requests. */
  readonly requestLatencyMs: Percentiles;
  readonly meanEventBytes: number;
  readonly megabytesPerSec: number;
  /** Events sent (and acknowledged) in the unmeasured warm-up batches. */
  readonly warmupEvents: number;
  readonly errors: ErrorCount;
  readonly cpu: CpuUse;
  /** When the measured window ran, to pick its samples out of a server CPU profile. */
  readonly window: TimeWindow;
}

/** The part of the batch endpoint's answer the benchmark checks. */
export interface BatchSummary {
  readonly successful: number;
  readonly failed: number;
}

/**
 * POSTs `body` (a JSON array) to /api/v1/lineage/batch and returns the server's summary, or records why it failed
 * in `tally` and returns undefined. A 200 with failed events counts as an error too: every generated event is
 * valid, so a rejection is a server bug, not load.
 */
export async function postBatch(
  client: HttpClient,
  body: string,
  tally: ErrorTally,
): Promise<BatchSummary | undefined> {
  try {
    const response = await client.post('/api/v1/lineage/batch', body);
    if (response.status !== 200) {
      tally.response(response.status, response.body);
      return undefined;
    }
    const summary = readSummary(response.body);
    if (!summary) {
      tally.response(response.status, `unexpected batch answer ${response.body}`);
      return undefined;
    }
    if (summary.failed > 0) tally.response(response.status, response.body);
    return summary;
  } catch (error) {
    tally.failure(error);
    return undefined;
  }
}

function readSummary(text: string): BatchSummary | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const summary = (parsed as { summary?: unknown } | null)?.summary as Record<string, unknown> | undefined;
  if (typeof summary?.successful !== 'number' || typeof summary.failed !== 'number') return undefined;
  return { successful: summary.successful, failed: summary.failed };
}

/**
 * Batch ingest: `senders` concurrent clients, each POSTing arrays of `batchSize` fresh events and waiting for the
 * answer before the next, for `seconds` or `maxEvents`. One unmeasured batch per sender warms the server up.
 * Batches are built while the previous one is in flight on another sender, as an exporter with a buffer does.
 */
export async function runBatchIngest(
  server: ServerProcess,
  stream: RunEventStream,
  options: BatchIngestOptions,
): Promise<BatchIngestResult> {
  const client = createHttpClient(server.url, { maxSockets: options.senders, bearer: server.bearer });
  const nextBatch = () => {
    const events: string[] = [];
    for (let i = 0; i < options.batchSize; i++) events.push(stream.next());
    return `[${events.join(',')}]`;
  };
  try {
    const warmupTally = new ErrorTally(server);
    let warmupEvents = 0;
    await runWorkers(options.senders, async () => {
      // Await first: `x += await y` reads x before the await, and the senders would overwrite each other's sums.
      const summary = await postBatch(client, nextBatch(), warmupTally);
      warmupEvents += summary?.successful ?? 0;
    });

    const tally = new ErrorTally(server, 20);
    const latencies: number[] = [];
    const generatedBefore = stream.generated;
    const bytesBefore = stream.meanBytes * stream.generated;
    let issued = 0;
    let accepted = 0;
    const stopCpu = measureCpu(server);
    const startUs = monotonicUs();
    const startedAt = performance.now();
    const deadline = startedAt + options.seconds * 1000;
    await runWorkers(options.senders, async () => {
      while (issued < options.maxEvents && performance.now() < deadline && !tally.hopeless) {
        issued += options.batchSize;
        const body = nextBatch();
        const sentAt = performance.now();
        const summary = await postBatch(client, body, tally);
        if (summary) {
          latencies.push(performance.now() - sentAt);
          accepted += summary.successful;
        }
      }
    });
    const seconds = (performance.now() - startedAt) / 1000;
    const window = { startUs, endUs: monotonicUs() };
    const cpu = stopCpu();
    const meanEventBytes =
      (stream.meanBytes * stream.generated - bytesBefore) / Math.max(1, stream.generated - generatedBefore);
    return {
      batchSize: options.batchSize,
      senders: options.senders,
      events: accepted,
      seconds,
      eventsPerSec: accepted / seconds,
      requestLatencyMs: percentiles(latencies),
      meanEventBytes,
      megabytesPerSec: (accepted * meanEventBytes) / 1e6 / seconds,
      warmupEvents,
      errors: tally.result,
      cpu,
      window,
    };
  } finally {
    client.close();
  }
}
