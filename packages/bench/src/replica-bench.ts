/**
 * `npm run bench -- replicas`: what replicas on one PostgreSQL give and cost. Batch ingest runs for a fixed time
 * against one server, then against two (a writer and a follower, the senders split between them, so half the
 * batches are forwarded). Meanwhile a probe posts one event at a time to the writer and measures, from the
 * acknowledgement, how long until the follower's in-memory graph serves it (follower lag).
 */
import { randomUUID } from 'node:crypto';
import { postBatch } from './batch-ingest.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import { ErrorTally, runWorkers } from './load.js';
import { DEFAULT_DATABASE_URL, wholeNumberFlags } from './options.js';
import { createRunEventStream, type RunEventStream } from './run-events.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { percentiles, type Percentiles } from './stats.js';
import { preparePostgresStore } from './stores.js';

/** Options of the replica benchmark. */
export interface ReplicaOptions {
  readonly databaseUrl: string;
  /** Seconds of batch ingest per configuration. @default 20 */
  readonly seconds: number;
  /** Events per batch request. @default 500 */
  readonly batchSize: number;
  /** Concurrent senders. @default 4 */
  readonly senders: number;
}

/** Figures of one configuration. */
export interface ReplicaPoint {
  readonly replicas: number;
  readonly eventsPerSecond: number;
  readonly errors: number;
  readonly firstError: string | undefined;
  /** From a probe's acknowledgement by the writer to the follower serving it (two replicas only). */
  readonly followerLagMs: Percentiles | undefined;
  readonly lagSamples: number;
}

const progress = (message: string) => process.stderr.write(`bench replicas: ${message}\n`);

/** Parses `replicas [--seconds n] [--batch-size n] [--senders n]`. */
export function parseReplicaOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ReplicaOptions {
  const number = wholeNumberFlags(argv);
  return {
    databaseUrl: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    seconds: number('--seconds', 20),
    batchSize: number('--batch-size', 500),
    senders: number('--senders', 4),
  };
}

/** Runs one server, then two, on one fresh PostgreSQL database. */
export async function runReplicas(options: ReplicaOptions): Promise<ReplicaPoint[]> {
  const store = await preparePostgresStore(options.databaseUrl);
  const servers: ServerProcess[] = [];
  try {
    const stream = createRunEventStream({ seed: 11 });
    const writer = await startServerProcess({ serveArgs: store.serveArgs });
    servers.push(writer);
    progress(`one server: batch ingest for ${options.seconds} s`);
    const one = await ingest([writer], stream, options, undefined);
    const follower = await startServerProcess({ serveArgs: store.serveArgs });
    servers.push(follower);
    progress(`two servers (writer and follower): batch ingest for ${options.seconds} s, with a lag probe`);
    const two = await ingest([writer, follower], stream, options, { writer, follower });
    return [one, two];
  } finally {
    for (const server of servers.reverse()) await server.stop(60_000);
    await store.cleanup();
  }
}

async function ingest(
  targets: readonly ServerProcess[],
  stream: RunEventStream,
  options: ReplicaOptions,
  probe: { writer: ServerProcess; follower: ServerProcess } | undefined,
): Promise<ReplicaPoint> {
  const clients = targets.map((server) => createHttpClient(server.url, { maxSockets: options.senders }));
  const tally = new ErrorTally(targets[0]!);
  const deadline = Date.now() + options.seconds * 1000;
  let events = 0;
  const lags: number[] = [];
  const lagProbe = probe ? probeLag(probe.writer, probe.follower, deadline, lags) : Promise.resolve();
  const started = Date.now();
  await runWorkers(options.senders, async (index) => {
    const client = clients[index % clients.length]!;
    while (Date.now() < deadline && !tally.hopeless) {
      const batch = Array.from({ length: options.batchSize }, () => stream.next());
      const summary = await postBatch(client, `[${batch.join(',')}]`, tally);
      if (summary) events += summary.successful;
    }
  });
  const seconds = (Date.now() - started) / 1000;
  await lagProbe;
  for (const client of clients) client.close();
  return {
    replicas: targets.length,
    eventsPerSecond: Math.round(events / seconds),
    errors: tally.result.count,
    firstError: tally.result.first,
    followerLagMs: lags.length > 0 ? percentiles(lags) : undefined,
    lagSamples: lags.length,
  };
}

/** Every 200 ms: one event to the writer, then the follower polled every 5 ms until it serves that event. */
async function probeLag(
  writer: ServerProcess,
  follower: ServerProcess,
  deadline: number,
  lags: number[],
): Promise<void> {
  const toWriter: HttpClient = createHttpClient(writer.url, { maxSockets: 1 });
  const toFollower: HttpClient = createHttpClient(follower.url, { maxSockets: 1 });
  try {
    while (Date.now() < deadline) {
      const name = `lag-probe-${randomUUID()}`;
      const event = {
        eventType: 'COMPLETE',
        eventTime: new Date().toISOString(),
        producer: 'https://example.com/headwater-bench',
        schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
        run: { runId: randomUUID() },
        job: { namespace: 'bench-probe', name: 'probe' },
        outputs: [{ namespace: 'bench-probe', name }],
      };
      const posted = await toWriter.post('/api/v1/lineage', JSON.stringify(event));
      if (posted.status !== 201) continue;
      const acknowledged = performance.now();
      const path = `/api/v1/lineage?nodeId=${encodeURIComponent(`dataset:bench-probe:${name}`)}&depth=0`;
      // Given up after 30 s, which is recorded as such: a follower that never shows a commit is a failure.
      for (;;) {
        const seen = await toFollower.get(path);
        if (seen.status === 200 || performance.now() - acknowledged > 30_000) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      lags.push(performance.now() - acknowledged);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    toWriter.close();
    toFollower.close();
  }
}

/** The table of the replica benchmark. */
export function formatReplicaTable(points: readonly ReplicaPoint[]): string {
  const lines = ['replicas  batch ingest events/s  errors  follower lag p50 / p95 / max (samples)'];
  for (const point of points) {
    const lag = point.followerLagMs
      ? `${point.followerLagMs.p50.toFixed(0)} / ${point.followerLagMs.p95.toFixed(0)} / ${point.followerLagMs.max.toFixed(0)} ms (${point.lagSamples})`
      : '-';
    lines.push(
      `${String(point.replicas).padEnd(10)}${String(point.eventsPerSecond).padEnd(24)}${String(point.errors).padEnd(8)}${lag}`,
    );
  }
  return lines.join('\n');
}
