import { createHttpClient } from './http-client.js';
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

/** Options of {@link runSingleIngest}. */
export interface SingleIngestOptions {
  /** Concurrent closed-loop clients. */
  readonly clients: number;
  /** Length of the measured window. */
  readonly seconds: number;
  /** The measured window also ends after this many events. */
  readonly maxEvents: number;
  /** Unmeasured ingest first. */
  readonly warmupSeconds: number;
}

/** What single-event ingest measured. */
export interface SingleIngestResult {
  readonly clients: number;
  /** Events acknowledged with 201 in the measured window. */
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSec: number;
  /** Request latency of acknowledged events, as each client saw it. */
  readonly latencyMs: Percentiles;
  readonly meanEventBytes: number;
  readonly megabytesPerSec: number;
  readonly warmupEvents: number;
  readonly errors: ErrorCount;
  readonly cpu: CpuUse;
  /** When the measured window ran, to pick its samples out of a server CPU profile. */
  readonly window: TimeWindow;
}

/**
 * Closed-loop single-event ingest: `clients` concurrent clients, each POSTing one event to /api/v1/lineage,
 * waiting for the 201 and sending the next, first for `warmupSeconds` unmeasured, then for `seconds` or
 * `maxEvents` events. This is what OpenLineage integrations do (one HTTP request per event), and the server's group
 * commit is what lets concurrent requests share a transaction.
 */
export async function runSingleIngest(
  server: ServerProcess,
  stream: RunEventStream,
  options: SingleIngestOptions,
): Promise<SingleIngestResult> {
  const client = createHttpClient(server.url, { maxSockets: options.clients, bearer: server.bearer });
  try {
    const warmup = await drive(options.warmupSeconds, Number.POSITIVE_INFINITY);
    const bytesBefore = stream.meanBytes * stream.generated;
    const generatedBefore = stream.generated;
    const stopCpu = measureCpu(server);
    const startUs = monotonicUs();
    const measured = await drive(options.seconds, options.maxEvents);
    const window = { startUs, endUs: monotonicUs() };
    const cpu = stopCpu();
    const meanEventBytes =
      (stream.meanBytes * stream.generated - bytesBefore) / Math.max(1, stream.generated - generatedBefore);
    return {
      clients: options.clients,
      events: measured.latencies.length,
      seconds: measured.seconds,
      eventsPerSec: measured.latencies.length / measured.seconds,
      latencyMs: percentiles(measured.latencies),
      meanEventBytes,
      megabytesPerSec: (measured.latencies.length * meanEventBytes) / 1e6 / measured.seconds,
      warmupEvents: warmup.latencies.length,
      errors: measured.errors,
      cpu,
      window,
    };
  } finally {
    client.close();
  }

  async function drive(seconds: number, maxEvents: number) {
    const tally = new ErrorTally(server);
    const latencies: number[] = [];
    const startedAt = performance.now();
    const deadline = startedAt + seconds * 1000;
    let issued = 0;
    await runWorkers(options.clients, async () => {
      while (issued < maxEvents && performance.now() < deadline && !tally.hopeless) {
        issued++;
        const body = stream.next();
        const sentAt = performance.now();
        try {
          const response = await client.post('/api/v1/lineage', body);
          if (response.status === 201) latencies.push(performance.now() - sentAt);
          else tally.response(response.status, response.body);
        } catch (error) {
          tally.failure(error);
        }
      }
    });
    // The window ends with the last response, so requests still in flight at the deadline count in full.
    return { latencies, seconds: (performance.now() - startedAt) / 1000, errors: tally.result };
  }
}
