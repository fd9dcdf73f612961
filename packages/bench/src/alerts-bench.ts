/**
 * `npm run bench -- alerts`: how fast and how right incidents are.
 *
 * Latency: a server with one rule (`on: run_failed`, `retryGrace: 0s`, a webhook channel) and a receiver on
 * loopback that verifies every signature. One FAIL event at a time, each ending its own job's run (started
 * earlier), is timed from its 201 to the `incident.opened` webhook naming its run; first with the server idle,
 * then while batch ingest (the ingest benchmark's load: unrelated START/COMPLETE events) saturates it.
 *
 * False alerts: the labelled month of alerts-month.ts replayed in send order to a fresh server, simulated time
 * compressed so that the retry grace means what it does in production; then its incidents are read back and
 * compared with the labels.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  CASE_KINDS,
  GRACE_MINUTES,
  RETRY_WITHIN_MINUTES,
  STANDING_MINUTES,
  failureEpisodes,
  generateMonth,
  wallOffsets,
  type CaseKind,
  type Month,
  type MonthCase,
  type ReplayPace,
} from './alerts-month.js';
import { postBatch } from './batch-ingest.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import { ErrorTally, runWorkers, serverGone } from './load.js';
import { BenchUsageError, DEFAULT_DATABASE_URL, type StoreName } from './options.js';
import { cpuText, type Outcome } from './report.js';
import { createRunEventStream } from './run-events.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { measureCpu, percentiles, type CpuUse, type Percentiles } from './stats.js';
import {
  StoreUnavailableError,
  prepareEmbeddedStore,
  preparePostgresStore,
  type BenchStore,
} from './stores.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './webhook-receiver.js';

/** The two parts of the alerts benchmark. */
export type AlertsPart = 'latency' | 'month';

/** Options of the alerts benchmark, resolved once from flags, environment and defaults. */
export interface AlertsOptions {
  /** Smaller sizes, for a smoke run. @default false */
  readonly quick: boolean;
  /** @default ['postgres', 'embedded'] */
  readonly stores: readonly StoreName[];
  /** @default ['latency', 'month'] */
  readonly parts: readonly AlertsPart[];
  readonly databaseUrl: string;
  /** FAIL events timed per latency phase. @default 200 (quick: 30) */
  readonly failures: number;
  /** Wall milliseconds from one FAIL to the next. @default 200 */
  readonly intervalMs: number;
  /** Events per batch of the load. @default 1000 (quick: 500) */
  readonly batchSize: number;
  /** Concurrent batch senders of the load. @default 4 (quick: 2) */
  readonly senders: number;
  /** Days of the labelled month. @default 30 (quick: 5) */
  readonly days: number;
  /** Wall milliseconds per simulated minute near the month's cases. @default 100 */
  readonly minuteMs: number;
  /** Wall milliseconds per simulated minute elsewhere. @default 1 */
  readonly idleMinuteMs: number;
  /** Seed of the month. @default 1 */
  readonly seed: number;
}

/** `npm run bench -- alerts --help`. */
export const alertsUsage = `npm run bench -- alerts [options]

Incidents, on PostgreSQL and on the embedded store:
  latency  FAIL acknowledged (201) -> incident.opened webhook received, idle and under batch ingest load
           (goal p95 <= 1 s idle, <= 3 s under load); each run's opened deliveries (exactly one each)
  month    a labelled synthetic month of Airflow pipelines (retries, skipped runs, late, out-of-order and
           duplicate events, injected failures, some cascading) replayed at a compressed pace; false alerts
           as % of incidents (goal <= 1 %), recall (100 %), duplicates (0)

  --quick                  small sizes for a smoke run (also BENCH_QUICK=1)
  --stores=postgres,embedded
  --only=latency,month
  --failures=200           FAIL events per latency phase (quick: 30)
  --interval-ms=200        wall time between two FAILs
  --batch-size=1000        events per batch of the load (quick: 500)
  --senders=4              batch senders of the load (quick: 2)
  --days=30                days of the month (quick: 5)
  --minute-ms=100          wall ms per simulated minute near a case (the grace is 10 simulated minutes)
  --idle-minute-ms=1       wall ms per simulated minute elsewhere
  --seed=1                 seed of the month

PostgreSQL: DATABASE_URL (default ${DEFAULT_DATABASE_URL}); a fresh database per server, dropped afterwards.`;

/**
 * Parses `alerts [options]`; undefined when --help was asked for.
 * @throws BenchUsageError naming the flag that is wrong.
 */
export function parseAlertsOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): AlertsOptions | undefined {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        quick: { type: 'boolean' },
        stores: { type: 'string' },
        only: { type: 'string' },
        failures: { type: 'string' },
        'interval-ms': { type: 'string' },
        'batch-size': { type: 'string' },
        senders: { type: 'string' },
        days: { type: 'string' },
        'minute-ms': { type: 'string' },
        'idle-minute-ms': { type: 'string' },
        seed: { type: 'string' },
      },
    }).values;
  } catch (error) {
    throw new BenchUsageError((error as Error).message, { cause: error });
  }
  if (values.help === true) return undefined;
  const quick = values.quick === true || env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true';
  const number = (flag: string, full: number, small: number, min: number): number => {
    const raw = values[flag];
    if (raw === undefined) return quick ? small : full;
    const value = Number(raw);
    if (typeof raw !== 'string' || !Number.isFinite(value) || value < min)
      throw new BenchUsageError(`--${flag} must be a number of at least ${min}; got ${JSON.stringify(raw)}.`);
    return value;
  };
  const list = <T extends string>(flag: string, allowed: readonly T[]): readonly T[] => {
    const raw = values[flag];
    if (typeof raw !== 'string' || raw === '') return allowed;
    const picked = raw.split(',').map((item) => item.trim());
    for (const item of picked)
      if (!(allowed as readonly string[]).includes(item))
        throw new BenchUsageError(`--${flag} takes ${allowed.join(', ')}; got ${JSON.stringify(item)}.`);
    return allowed.filter((item) => picked.includes(item));
  };
  return Object.freeze({
    quick,
    stores: list<StoreName>('stores', ['postgres', 'embedded']),
    parts: list<AlertsPart>('only', ['latency', 'month']),
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    failures: Math.round(number('failures', 200, 30, 1)),
    intervalMs: number('interval-ms', 200, 200, 10),
    batchSize: Math.round(number('batch-size', 1000, 500, 1)),
    senders: Math.round(number('senders', 4, 2, 1)),
    days: Math.round(number('days', 30, 5, 5)),
    minuteMs: number('minute-ms', 100, 100, 10),
    idleMinuteMs: number('idle-minute-ms', 1, 1, 0.1),
    seed: Math.round(number('seed', 1, 1, 0)),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Results.

/** One latency phase's figures. */
export interface LatencyPhase {
  readonly phase: 'idle' | 'load';
  /** FAIL events acknowledged with 201. */
  readonly sent: number;
  /** Of those, runs an `incident.opened` webhook named. */
  readonly delivered: number;
  /** Incidents unresolved when the phase began. */
  readonly openAtStart: number;
  /** From the FAIL's 201 to the first `incident.opened` naming its run. */
  readonly latencyMs: Percentiles;
  /** p50 of the first and of the last quarter of the FAILs: does each incident left open slow the next? */
  readonly firstQuarterP50Ms: number;
  readonly lastQuarterP50Ms: number;
  /** After the idle phase: from posting a completed run of each job to no incident unresolved. */
  readonly resolveAllMs?: number;
  /** Latency of the FAIL's own POST. */
  readonly ackMs: Percentiles;
  /** Runs told of by exactly one `incident.opened` request. */
  readonly openedOnce: number;
  /** `incident.opened` requests beyond the first per run (a redelivery or a second incident). */
  readonly duplicates: number;
  /** Other deliveries naming these runs (updated, resolved). */
  readonly otherDeliveries: number;
  /** Incidents the API lists rooted in this phase's jobs. */
  readonly incidents: number;
  /** The load running meanwhile (load phase only). */
  readonly load:
    { readonly eventsPerSec: number; readonly errors: number; readonly firstError?: string } | undefined;
  readonly cpu: CpuUse;
}

/** An incident the labels do not call for. */
export interface FalseAlert {
  readonly incident: string;
  readonly root: string;
  readonly runId: string | undefined;
  /** The case whose events hold that run, or `none` for one of the month's ordinary runs. */
  readonly caseId: string;
  readonly variant: string | undefined;
  readonly openedAt: string;
  readonly signals: readonly string[];
}

/** What came of one kind of case. */
export interface KindOutcome {
  readonly kind: CaseKind;
  readonly cases: number;
  readonly expectedIncidents: number;
  /** Incidents rooted in the kind's cases (for failures: those matching the injected root). */
  readonly incidents: number;
  readonly falseAlerts: number;
}

/** The month part's figures. */
export interface MonthResult {
  readonly days: number;
  readonly jobs: number;
  readonly datasets: number;
  readonly events: number;
  readonly cases: number;
  readonly pace: ReplayPace & { readonly graceMs: number; readonly graceMinutes: number };
  readonly replaySeconds: number;
  readonly sendErrors: number;
  readonly firstSendError: string | undefined;
  readonly incidents: number;
  readonly falseAlerts: readonly FalseAlert[];
  /** False alerts as a percentage of incidents. */
  readonly falseAlertPct: number;
  readonly failures: number;
  /** Injected failures with an incident rooted at their run. */
  readonly detected: number;
  readonly missed: readonly string[];
  /** Injected failures with more than one incident, or more than one `opened` delivery. */
  readonly duplicates: readonly string[];
  /** Failures standing downstream of an injected one: in its incident, or not. */
  readonly cascades: {
    readonly expected: number;
    readonly grouped: number;
    readonly missing: readonly string[];
  };
  /** Incidents resolved by the run the labels name. */
  readonly resolution: {
    readonly expected: number;
    readonly right: number;
    readonly wrong: readonly string[];
  };
  readonly byKind: readonly KindOutcome[];
  readonly deliveries: {
    readonly opened: number;
    readonly updated: number;
    readonly resolved: number;
    /** Requests repeating a webhook-id already received. */
    readonly repeated: number;
    readonly badSignatures: number;
  };
  /** Wall time from a retried FAIL's send to its retry's 201, the longest: below the grace, or the case is moot. */
  readonly retryWallMaxMs: number;
  /** Retried failures whose retry came later than the grace on the wall clock (the harness's fault). */
  readonly retriesTooSlow: readonly string[];
  /** Wall time from a standing FAIL's 201 to the send of the run that ends it, the shortest. */
  readonly standingWallMinMs: number;
  readonly cpu: CpuUse;
}

/** Everything measured on one store. */
export interface AlertsStoreResult {
  readonly store: StoreName;
  readonly description: string;
  readonly skipped?: string;
  readonly latency?: Outcome<readonly LatencyPhase[]>;
  readonly month?: Outcome<MonthResult>;
}

const progress = (message: string) => process.stderr.write(`bench alerts: ${message}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Runs the chosen parts on each store in turn. */
export async function runAlerts(options: AlertsOptions): Promise<AlertsStoreResult[]> {
  const results: AlertsStoreResult[] = [];
  for (const name of options.stores) {
    const fresh = () =>
      name === 'embedded' ? prepareEmbeddedStore() : preparePostgresStore(options.databaseUrl);
    let description = name === 'postgres' ? 'PostgreSQL' : 'embedded store';
    try {
      // Probe once, so that an unreachable PostgreSQL is one skipped line, not two failed parts.
      const probe = await fresh();
      description = probe.description.replace(/,? (in a )?fresh (database|data dir) .*$/, '');
      await probe.cleanup();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      progress(`skipping ${name}: ${error.message}`);
      results.push({ store: name, description, skipped: error.message });
      continue;
    }
    const result: { -readonly [K in keyof AlertsStoreResult]: AlertsStoreResult[K] } = {
      store: name,
      description,
    };
    if (options.parts.includes('latency'))
      result.latency = await onFreshServer(name, fresh, 0, (s, r) => measureLatency(name, s, r, options));
    if (options.parts.includes('month'))
      result.month = await onFreshServer(name, fresh, GRACE_MINUTES * options.minuteMs, (s, r) =>
        measureMonth(name, s, r, options),
      );
    results.push(result);
  }
  return results;
}

/**
 * Starts a receiver and a server on a fresh store whose one rule sends every failed run, after `graceMs`, to the
 * receiver; runs `measure`, and takes everything down again.
 */
async function onFreshServer<T>(
  name: StoreName,
  fresh: () => Promise<BenchStore>,
  graceMs: number,
  measure: (server: ServerProcess, receiver: WebhookReceiver) => Promise<T>,
): Promise<Outcome<T>> {
  const store = await fresh();
  const receiver = await startWebhookReceiver();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-bench-alerts-'));
  let server: ServerProcess | undefined;
  try {
    const file = path.join(dir, 'alerts.yaml');
    await writeFile(
      file,
      [
        'channels:',
        '  bench:',
        '    type: webhook',
        `    url: ${receiver.url}`,
        `    secret: ${receiver.secret}`,
        'rules:',
        '  - name: failed-runs',
        '    on: run_failed',
        `    retryGrace: ${graceMs}ms`,
        '    notify: { owners: none, channels: bench }',
        '',
      ].join('\n'),
    );
    progress(`${name}: starting a server with --alerts-config (retryGrace ${graceMs} ms)`);
    server = await startServerProcess({ serveArgs: [...store.serveArgs, '--alerts-config', file] });
    const running = server;
    try {
      return { ok: true, value: await measure(running, receiver) };
    } catch (error) {
      const message = serverGone(running) ?? (error instanceof Error ? error.message : String(error));
      progress(`${name}: ${message}`);
      return { ok: false, error: message };
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    progress(`${name}: ${message}`);
    return { ok: false, error: message };
  } finally {
    await server?.stop(10_000);
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
    await store.cleanup().catch((error: unknown) => progress(`${name}: cleanup failed: ${String(error)}`));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Latency.

const PRODUCER = 'https://example.com/headwater-bench/alerts';
const RUN_EVENT_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const LATENCY_NAMESPACE = 'bench-alerts';

function probeEvent(type: 'START' | 'COMPLETE' | 'FAIL', job: string, runId: string, timeMs: number): string {
  return JSON.stringify({
    eventType: type,
    eventTime: new Date(timeMs).toISOString(),
    producer: PRODUCER,
    schemaURL: RUN_EVENT_SCHEMA,
    run: {
      runId,
      facets:
        type === 'FAIL'
          ? {
              errorMessage: {
                _producer: PRODUCER,
                _schemaURL:
                  'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet',
                message: 'benchmark failure',
                programmingLanguage: 'python',
              },
            }
          : {},
    },
    job: { namespace: LATENCY_NAMESPACE, name: job },
    inputs: [{ namespace: LATENCY_NAMESPACE, name: `${job}.input` }],
    outputs: [{ namespace: LATENCY_NAMESPACE, name: `${job}.output` }],
  });
}

async function measureLatency(
  name: StoreName,
  server: ServerProcess,
  receiver: WebhookReceiver,
  options: AlertsOptions,
): Promise<LatencyPhase[]> {
  const phases: LatencyPhase[] = [];
  for (const phase of ['idle', 'load'] as const) {
    progress(
      `${name}: latency ${phase}, ${options.failures} FAILs ${options.intervalMs} ms apart` +
        (phase === 'load' ? ` under batch ingest (${options.senders} × ${options.batchSize} events)` : ''),
    );
    const measured = await latencyPhase(phase, server, receiver, options);
    phases.push(measured.result);
    // Each phase starts with no incident open: a good run of every job resolves the phase's incidents.
    if (phase === 'idle')
      phases[0] = { ...measured.result, resolveAllMs: await resolveAll(server, measured.runs) };
  }
  return phases;
}

/**
 * Sends a completed run of each job and waits until no incident is unresolved; returns how long that took (NaN
 * after 120 s).
 */
async function resolveAll(server: ServerProcess, runs: readonly { job: string }[]): Promise<number> {
  const client = createHttpClient(server.url, { maxSockets: 1 });
  try {
    const now = Date.now();
    const events = runs.flatMap((run) => {
      const runId = randomUUID();
      return [probeEvent('START', run.job, runId, now - 1000), probeEvent('COMPLETE', run.job, runId, now)];
    });
    const started = performance.now();
    const tally = new ErrorTally(server);
    await postBatch(client, `[${events.join(',')}]`, tally);
    if (tally.result.count > 0) throw new Error(`the resolving runs were refused: ${tally.result.first}`);
    while (performance.now() - started < 120_000) {
      const open = await getJson<{ totalCount: number }>(
        client,
        '/api/v1/incidents?status=unresolved&limit=1',
      );
      if (open.totalCount === 0) return performance.now() - started;
      await sleep(50);
    }
    return NaN;
  } finally {
    client.close();
  }
}

/** Batch ingest of unrelated events until stopped: the ingest benchmark's load, for as long as it is needed. */
function startLoad(server: ServerProcess, options: AlertsOptions) {
  const stream = createRunEventStream({ seed: options.seed + 1000 });
  const client = createHttpClient(server.url, { maxSockets: options.senders });
  const tally = new ErrorTally(server, Number.MAX_SAFE_INTEGER);
  let stopped = false;
  let events = 0;
  const started = performance.now();
  const workers = runWorkers(options.senders, async () => {
    while (!stopped && server.exited === undefined) {
      const batch = Array.from({ length: options.batchSize }, () => stream.next());
      const summary = await postBatch(client, `[${batch.join(',')}]`, tally);
      if (summary) events += summary.successful;
    }
  });
  return {
    async stop() {
      stopped = true;
      await workers;
      client.close();
      const seconds = (performance.now() - started) / 1000;
      const result = tally.result;
      return {
        eventsPerSec: events / seconds,
        errors: result.count,
        ...(result.first === undefined ? {} : { firstError: result.first }),
      };
    },
  };
}

async function latencyPhase(
  phase: 'idle' | 'load',
  server: ServerProcess,
  receiver: WebhookReceiver,
  options: AlertsOptions,
): Promise<{ result: LatencyPhase; runs: readonly { job: string }[] }> {
  const client = createHttpClient(server.url, { maxSockets: 2 });
  try {
    const runs = Array.from({ length: options.failures }, (_, i) => ({
      job: `latency.${phase}.job_${String(i).padStart(4, '0')}`,
      runId: randomUUID(),
    }));
    const runIds = new Set<string>(runs.map((run) => run.runId));
    // Every run STARTs first, in one batch: each FAIL then ends a run the server has seen begin.
    const tally = new ErrorTally(server);
    const startedAt = Date.now() - 60_000;
    await postBatch(
      client,
      `[${runs.map((run) => probeEvent('START', run.job, run.runId, startedAt)).join(',')}]`,
      tally,
    );
    if (tally.result.count > 0) throw new Error(`the STARTs were refused: ${tally.result.first}`);

    const openAtStart = (
      await getJson<{ totalCount: number }>(client, '/api/v1/incidents?status=unresolved&limit=1')
    ).totalCount;
    const load = phase === 'load' ? startLoad(server, options) : undefined;
    if (load) await sleep(2_000); // the load's first batches, so that the FAILs meet it at full speed
    const stopCpu = measureCpu(server);
    const acks = new Map<string, number>();
    const ackLatency: number[] = [];
    const t0 = performance.now();
    for (const [i, run] of runs.entries()) {
      await sleep(t0 + i * options.intervalMs - performance.now());
      const sentAt = performance.now();
      const response = await client.post(
        '/api/v1/lineage',
        probeEvent('FAIL', run.job, run.runId, Date.now()),
      );
      const ackAt = performance.now();
      if (response.status !== 201) {
        tally.response(response.status, response.body);
        if (tally.hopeless) break;
        continue;
      }
      acks.set(run.runId, ackAt);
      ackLatency.push(ackAt - sentAt);
    }
    const opened = () =>
      receiver.received.filter((d) => d.type === 'incident.opened' && runIds.has(d.runId ?? ''));
    // Every acknowledged FAIL's webhook, or 60 s after the last one.
    const until = performance.now() + 60_000;
    while (performance.now() < until && new Set(opened().map((d) => d.runId)).size < acks.size)
      await sleep(20);
    const loadResult = await load?.stop();
    const cpu = stopCpu();
    // Anything told twice would come soon after: a redelivery, or a second incident of one run.
    await sleep(2_000);

    const first = new Map<string, ReceivedWebhook>();
    const count = new Map<string, number>();
    for (const delivery of opened()) {
      const runId = delivery.runId!;
      if (!first.has(runId)) first.set(runId, delivery);
      count.set(runId, (count.get(runId) ?? 0) + 1);
    }
    // In sending order, so that the first and last quarters show whether open incidents slow the next one.
    const latencies: number[] = [];
    for (const [runId, ack] of acks) {
      const delivery = first.get(runId);
      if (delivery) latencies.push(delivery.atMs - ack);
    }
    const quarter = Math.max(1, Math.floor(latencies.length / 4));
    const incidents = (await allIncidents(client)).filter((incident) =>
      incident.root.startsWith(`job:${LATENCY_NAMESPACE}:latency.${phase}.`),
    ).length;
    const result: LatencyPhase = {
      phase,
      sent: acks.size,
      delivered: first.size,
      openAtStart,
      latencyMs: percentiles(latencies),
      firstQuarterP50Ms: percentiles(latencies.slice(0, quarter)).p50,
      lastQuarterP50Ms: percentiles(latencies.slice(-quarter)).p50,
      ackMs: percentiles(ackLatency),
      openedOnce: [...count.values()].filter((n) => n === 1).length,
      duplicates: [...count.values()].reduce((sum, n) => sum + n - 1, 0),
      otherDeliveries: receiver.received.filter(
        (d) => d.type !== 'incident.opened' && runIds.has(d.runId ?? ''),
      ).length,
      incidents,
      load: loadResult,
      cpu,
    };
    return { result, runs };
  } finally {
    client.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The month.

/** An incident as the list answers it (the parts judged). */
export interface IncidentJson {
  readonly id: string;
  readonly status: string;
  readonly signal: string;
  readonly root: string;
  readonly openedAt: string;
  readonly rootCause: { readonly runId?: string };
}

/** An incident with its signals and timeline, as GET /api/v1/incidents/:id answers (the parts judged). */
export interface IncidentDetail {
  readonly incident: IncidentJson;
  readonly signals: readonly {
    readonly key: string;
    readonly node: string;
    readonly detail: { runId?: string };
  }[];
  readonly timeline: readonly {
    readonly kind: string;
    readonly note: string | null;
    readonly deliveries: readonly { readonly state: string }[];
  }[];
}

async function getJson<T>(client: HttpClient, url: string): Promise<T> {
  const response = await client.get(url);
  if (response.status !== 200)
    throw new Error(`GET ${url}: HTTP ${response.status}: ${response.body.slice(0, 300)}`);
  return JSON.parse(response.body) as T;
}

/** Every incident, newest first, page by page. */
async function allIncidents(client: HttpClient): Promise<IncidentJson[]> {
  const incidents: IncidentJson[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await getJson<{ incidents: IncidentJson[]; totalCount: number }>(
      client,
      `/api/v1/incidents?limit=100&offset=${offset}`,
    );
    incidents.push(...page.incidents);
    if (page.incidents.length < 100) return incidents;
  }
}

/** Sends the month's events in send order at the pace of `offsets`, never faster; returns when each went out and was acknowledged. */
async function replay(
  server: ServerProcess,
  month: Month,
  offsets: Float64Array,
): Promise<{
  sentAt: Float64Array;
  ackAt: Float64Array;
  seconds: number;
  errors: number;
  firstError: string | undefined;
}> {
  const client = createHttpClient(server.url, { maxSockets: 1 });
  const events = month.events;
  const sentAt = new Float64Array(events.length);
  const ackAt = new Float64Array(events.length);
  const tally = new ErrorTally(server);
  // Events planned within this much of the first of a batch go in one request.
  const batchWindowMs = 10;
  const t0 = performance.now();
  let lastAck = t0;
  let lastOffset = 0;
  let shown = t0;
  try {
    for (let i = 0; i < events.length && !tally.hopeless;) {
      // Never closer to the previous request's answer than planned: a gap can grow when the server is slow, and
      // never shrink, so that what the plan puts 20 simulated minutes apart stays at least that far apart.
      const due = Math.max(t0 + offsets[i]!, lastAck + (offsets[i]! - lastOffset));
      await sleep(due - performance.now());
      let j = i + 1;
      while (j < events.length && offsets[j]! - offsets[i]! < batchWindowMs && j - i < 500) j++;
      const body = `[${events
        .slice(i, j)
        .map((event) => event.body)
        .join(',')}]`;
      const sent = performance.now();
      await postBatch(client, body, tally);
      const ack = performance.now();
      sentAt.fill(sent, i, j);
      ackAt.fill(ack, i, j);
      lastAck = ack;
      lastOffset = offsets[j - 1]!;
      i = j;
      if (ack - shown > 15_000) {
        shown = ack;
        progress(
          `month: ${i.toLocaleString('en-US')} of ${events.length.toLocaleString('en-US')} events sent`,
        );
      }
    }
  } finally {
    client.close();
  }
  const result = tally.result;
  return {
    sentAt,
    ackAt,
    seconds: (performance.now() - t0) / 1000,
    errors: result.count,
    firstError: result.first,
  };
}

async function measureMonth(
  name: StoreName,
  server: ServerProcess,
  receiver: WebhookReceiver,
  options: AlertsOptions,
): Promise<MonthResult> {
  const month = generateMonth({ seed: options.seed, days: options.days });
  const pace: ReplayPace = {
    minuteMs: options.minuteMs,
    idleMinuteMs: options.idleMinuteMs,
    windowMinutes: STANDING_MINUTES,
  };
  const graceMs = GRACE_MINUTES * options.minuteMs;
  const offsets = wallOffsets(month.events, month.startMs, pace);
  progress(
    `${name}: month of ${month.days} days, ${month.events.length.toLocaleString('en-US')} events, ` +
      `${month.cases.length} cases; about ${Math.round((offsets.at(-1) ?? 0) / 1000)} s of replay`,
  );
  const stopCpu = measureCpu(server);
  const sent = await replay(server, month, offsets);
  if (server.exited) throw new Error(serverGone(server));

  // Settle: the last graces run out, then the outbox empties.
  const client = createHttpClient(server.url, { maxSockets: 2 });
  try {
    await sleep(graceMs + 2_000);
    let details: IncidentDetail[] = [];
    const until = performance.now() + 120_000;
    for (;;) {
      const seen = receiver.received.length;
      const incidents = await allIncidents(client);
      details = await Promise.all(
        incidents.map((incident) =>
          getJson<IncidentDetail>(client, `/api/v1/incidents/${encodeURIComponent(incident.id)}`),
        ),
      );
      const pending = details.some((d) =>
        d.timeline.some((t) => t.deliveries.some((x) => x.state === 'pending')),
      );
      if ((!pending && receiver.received.length === seen) || performance.now() > until) break;
      await sleep(1_000);
    }
    const cpu = stopCpu();
    return {
      ...judge(month, details, receiver, sent, graceMs),
      days: month.days,
      jobs: month.jobs.length,
      datasets: month.datasets,
      events: month.events.length,
      cases: month.cases.length,
      pace: { ...pace, graceMs, graceMinutes: GRACE_MINUTES },
      replaySeconds: sent.seconds,
      sendErrors: sent.errors,
      firstSendError: sent.firstError,
      cpu,
    };
  } finally {
    client.close();
  }
}

type Judged = Omit<
  MonthResult,
  | 'days'
  | 'jobs'
  | 'datasets'
  | 'events'
  | 'cases'
  | 'pace'
  | 'replaySeconds'
  | 'sendErrors'
  | 'firstSendError'
  | 'cpu'
>;

/** Compares what the server did with the labels. */
export function judge(
  month: Month,
  details: readonly IncidentDetail[],
  receiver: Pick<WebhookReceiver, 'received' | 'rejected'>,
  sent: { sentAt: Float64Array; ackAt: Float64Array },
  graceMs: number,
): Judged {
  const caseOfRun = new Map<string, MonthCase>();
  const byId = new Map(month.cases.map((c) => [c.id, c]));
  for (const event of month.events)
    if (event.caseId !== undefined) caseOfRun.set(event.runId, byId.get(event.caseId)!);
  const failures = month.cases.filter((c) => c.failure !== undefined);
  const jobNode = (job: string) => `job:acme-airflow:${job}`;

  const matched = new Map<string, IncidentDetail[]>();
  const falseAlerts: FalseAlert[] = [];
  for (const detail of details) {
    const incident = detail.incident;
    const runId = incident.rootCause.runId;
    const failure = failures.find(
      (c) => incident.root === jobNode(c.job) && runId !== undefined && c.failure!.rootRuns.includes(runId),
    );
    if (failure && incident.signal === 'run_failed') {
      matched.set(failure.id, [...(matched.get(failure.id) ?? []), detail]);
      continue;
    }
    const owner = runId === undefined ? undefined : caseOfRun.get(runId);
    falseAlerts.push({
      incident: incident.id,
      root: incident.root,
      runId,
      caseId: owner?.id ?? 'none',
      variant: owner?.variant,
      openedAt: incident.openedAt,
      signals: detail.signals.map((s) => `${s.node} (run ${s.detail.runId ?? '?'})`),
    });
  }

  const openedBy = new Map<string, ReceivedWebhook[]>();
  for (const delivery of receiver.received) {
    if (delivery.type !== 'incident.opened' || delivery.incidentId === undefined) continue;
    openedBy.set(delivery.incidentId, [...(openedBy.get(delivery.incidentId) ?? []), delivery]);
  }
  const missed: string[] = [];
  const duplicates: string[] = [];
  const cascadeMissing: string[] = [];
  const wrongResolution: string[] = [];
  let cascadesExpected = 0;
  let resolvedRight = 0;
  for (const c of failures) {
    const found = matched.get(c.id) ?? [];
    if (found.length === 0) {
      missed.push(`${c.id} (${c.variant}): ${c.job}, run ${c.failure!.rootRuns.at(-1)}`);
      continue;
    }
    const opened = found.flatMap((d) => openedBy.get(d.incident.id) ?? []);
    if (found.length > 1 || opened.length !== 1)
      duplicates.push(
        `${c.id} (${c.variant}): ${found.length} incidents, ${opened.length} opened deliveries`,
      );
    const incident = found[0]!;
    const signalRuns = new Set(found.flatMap((d) => d.signals.map((s) => s.detail.runId)));
    for (const grouped of c.failure!.grouped) {
      cascadesExpected++;
      if (!signalRuns.has(grouped.runId))
        cascadeMissing.push(`${c.id} (${c.variant}): ${grouped.job} run ${grouped.runId}`);
    }
    const resolved = incident.timeline.find((t) => t.kind === 'resolved');
    const expected = c.failure!.resolvedBy;
    if (expected !== undefined && resolved?.note?.includes(expected) === true) resolvedRight++;
    else
      wrongResolution.push(
        `${c.id} (${c.variant}): expected run ${expected ?? '(none)'} to resolve it; ` +
          (resolved === undefined ? `still ${incident.incident.status}` : `resolved: ${resolved.note ?? ''}`),
      );
  }

  const byKind: KindOutcome[] = CASE_KINDS.map((kind) => {
    const cases = month.cases.filter((c) => c.kind === kind);
    const ids = new Set(cases.map((c) => c.id));
    const alerts = falseAlerts.filter((f) => ids.has(f.caseId)).length;
    const true_ =
      kind === 'failure' ? cases.reduce((sum, c) => sum + (matched.get(c.id)?.length ?? 0), 0) : 0;
    return {
      kind,
      cases: cases.length,
      expectedIncidents: kind === 'failure' ? cases.length : 0,
      incidents: true_ + alerts,
      falseAlerts: alerts,
    };
  });

  // Whether the wall clock kept the labels' promises: each retry within the grace, each lasting failure beyond it.
  const episodes = failureEpisodes(month.events);
  let retryWallMaxMs = 0;
  let standingWallMinMs = Infinity;
  const retriesTooSlow: string[] = [];
  for (const episode of episodes) {
    if (episode.toIndex === undefined) continue;
    if (episode.minutes <= RETRY_WITHIN_MINUTES) {
      const wall = sent.ackAt[episode.toIndex]! - sent.sentAt[episode.fromIndex]!;
      retryWallMaxMs = Math.max(retryWallMaxMs, wall);
      if (wall >= graceMs)
        retriesTooSlow.push(`${month.events[episode.fromIndex]!.caseId ?? 'none'} ${wall.toFixed(0)} ms`);
    } else if (episode.minutes >= STANDING_MINUTES) {
      standingWallMinMs = Math.min(
        standingWallMinMs,
        sent.sentAt[episode.toIndex]! - sent.ackAt[episode.fromIndex]!,
      );
    }
  }
  const deliveries = receiver.received;
  const ids = new Set<string>();
  let repeated = 0;
  for (const delivery of deliveries) {
    if (ids.has(delivery.id)) repeated++;
    ids.add(delivery.id);
  }
  return {
    incidents: details.length,
    falseAlerts,
    falseAlertPct: details.length === 0 ? 0 : (100 * falseAlerts.length) / details.length,
    failures: failures.length,
    detected: failures.length - missed.length,
    missed,
    duplicates,
    cascades: {
      expected: cascadesExpected,
      grouped: cascadesExpected - cascadeMissing.length,
      missing: cascadeMissing,
    },
    resolution: { expected: failures.length, right: resolvedRight, wrong: wrongResolution },
    byKind,
    deliveries: {
      opened: deliveries.filter((d) => d.type === 'incident.opened').length,
      updated: deliveries.filter((d) => d.type === 'incident.updated').length,
      resolved: deliveries.filter((d) => d.type === 'incident.resolved').length,
      repeated,
      badSignatures: receiver.rejected,
    },
    retryWallMaxMs,
    retriesTooSlow,
    standingWallMinMs,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The report.

const msText = (value: number) =>
  Number.isFinite(value) ? `${Math.round(value).toLocaleString('en-US')} ms` : 'n/a';
const pct = (value: number) => `${value.toFixed(1)} %`;

/** The tables of the alerts benchmark. */
export function formatAlertsReport(results: readonly AlertsStoreResult[], options: AlertsOptions): string {
  const out: string[] = [];
  for (const result of results) {
    out.push(`== alerts on ${result.description}`);
    if (result.skipped !== undefined) {
      out.push(`   skipped: ${result.skipped}`, '');
      continue;
    }
    if (result.latency?.ok === false) out.push(`latency: failed: ${result.latency.error}`);
    else if (result.latency) {
      out.push(
        `Latency: FAIL acknowledged (201) -> incident.opened webhook received; rule run_failed, retryGrace 0s; ` +
          `${options.failures} FAILs ${options.intervalMs} ms apart per phase`,
      );
      out.push(
        table([
          [
            'phase',
            'FAILs',
            'told',
            'p50',
            'p95',
            'p99',
            'max',
            'once',
            'dupl.',
            'incidents',
            'POST p95',
            'goal p95',
          ],
          ...result.latency.value.map((p) => {
            const goal = p.phase === 'idle' ? 1_000 : 3_000;
            return [
              p.phase,
              String(p.sent),
              String(p.delivered),
              msText(p.latencyMs.p50),
              msText(p.latencyMs.p95),
              msText(p.latencyMs.p99),
              msText(p.latencyMs.max),
              String(p.openedOnce),
              String(p.duplicates),
              String(p.incidents),
              msText(p.ackMs.p95),
              `≤ ${goal / 1000} s: ${p.latencyMs.p95 <= goal && p.delivered === p.sent ? 'met' : 'MISSED'}`,
            ];
          }),
        ]),
      );
      for (const p of result.latency.value) {
        const load =
          p.load === undefined
            ? ''
            : `; load ${Math.round(p.load.eventsPerSec).toLocaleString('en-US')} events/s, ${p.load.errors} errors`;
        out.push(
          `  ${p.phase}: ${p.openAtStart} incidents open at the start; p50 ${msText(p.firstQuarterP50Ms)} over the ` +
            `first quarter of the FAILs, ${msText(p.lastQuarterP50Ms)} over the last` +
            (p.resolveAllMs === undefined
              ? ''
              : `; then ${msText(p.resolveAllMs)} until a good run of each job resolved them all`),
          `    CPU ${cpuText(p.cpu)}${load}${p.otherDeliveries > 0 ? `; ${p.otherDeliveries} other deliveries` : ''}`,
        );
      }
    }
    if (result.month?.ok === false) out.push(`month: failed: ${result.month.error}`);
    else if (result.month) {
      const m = result.month.value;
      out.push(
        '',
        `Month: ${m.days} days, ${m.jobs} jobs, ${m.datasets} datasets, ${m.events.toLocaleString('en-US')} events, ` +
          `${m.cases} cases, replayed in ${m.replaySeconds.toFixed(0)} s (${m.pace.minuteMs} ms per simulated minute ` +
          `within ${m.pace.windowMinutes} min of a case event, ${m.pace.idleMinuteMs} ms elsewhere; retryGrace ` +
          `${m.pace.graceMs} ms = ${m.pace.graceMinutes} simulated minutes)`,
      );
      out.push(
        table([
          ['case', 'cases', 'incidents expected', 'incidents', 'false alerts'],
          ...m.byKind.map((k) => [
            k.kind,
            String(k.cases),
            String(k.expectedIncidents),
            String(k.incidents),
            String(k.falseAlerts),
          ]),
        ]),
      );
      const unattributed = m.falseAlerts.filter((f) => f.caseId === 'none').length;
      out.push(
        `  incidents ${m.incidents}; false alerts ${m.falseAlerts.length} (${pct(m.falseAlertPct)}, goal ≤ 1 %: ` +
          `${m.falseAlertPct <= 1 ? 'met' : 'MISSED'})${unattributed > 0 ? `, ${unattributed} on ordinary runs` : ''}; ` +
          `recall ${m.detected}/${m.failures} (goal 100 %: ${m.detected === m.failures ? 'met' : 'MISSED'}); ` +
          `duplicates ${m.duplicates.length} (goal 0: ${m.duplicates.length === 0 ? 'met' : 'MISSED'})`,
        `  cascades in the root's incident ${m.cascades.grouped}/${m.cascades.expected}; resolved by the run that ` +
          `ended the failure ${m.resolution.right}/${m.resolution.expected}`,
        `  deliveries: ${m.deliveries.opened} opened, ${m.deliveries.updated} updated, ${m.deliveries.resolved} ` +
          `resolved, ${m.deliveries.repeated} repeated webhook-ids, ${m.deliveries.badSignatures} bad signatures`,
        `  wall clock: slowest retry ${msText(m.retryWallMaxMs)} after its FAIL (grace ${m.pace.graceMs} ms); ` +
          `shortest lasting failure ${msText(m.standingWallMinMs)} before the run that ends it` +
          (m.retriesTooSlow.length > 0
            ? `; ${m.retriesTooSlow.length} retries slower than the grace (moot cases): ${m.retriesTooSlow.join(', ')}`
            : ''),
        `  CPU ${cpuText(m.cpu)}${m.sendErrors > 0 ? `; ${m.sendErrors} send errors, first: ${m.firstSendError ?? ''}` : ''}`,
      );
      for (const alert of m.falseAlerts)
        out.push(
          `  FALSE ALERT ${alert.incident}: root ${alert.root} run ${alert.runId ?? '?'} (case ${alert.caseId}` +
            `${alert.variant === undefined ? '' : ` ${alert.variant}`}), opened ${alert.openedAt}; signals ${alert.signals.join(', ')}`,
        );
      for (const line of m.missed) out.push(`  MISSED ${line}`);
      for (const line of m.duplicates) out.push(`  DUPLICATE ${line}`);
      for (const line of m.cascades.missing) out.push(`  NOT GROUPED ${line}`);
      for (const line of m.resolution.wrong) out.push(`  RESOLUTION ${line}`);
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
