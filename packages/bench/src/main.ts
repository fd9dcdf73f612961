#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { alertsUsage, formatAlertsReport, parseAlertsOptions, runAlerts } from './alerts-bench.js';
import { runAnalysisQueries } from './analysis-bench.js';
import { runBatchIngest } from './batch-ingest.js';
import { formatGrowthTable, parseGrowthOptions, runGrowth } from './growth-bench.js';
import { formatReplicaTable, parseReplicaOptions, runReplicas } from './replica-bench.js';
import { formatJourneyTable, journeyUsage, parseJourneyOptions, runJourney } from './journey-bench.js';
import { formatPreviewsTable, parsePreviewsOptions, previewsUsage, runPreviews } from './previews-bench.js';
import { formatStreamsTable, parseStreamsOptions, runStreams } from './streams-bench.js';
import {
  runAsyncThroughput,
  runBackendDown,
  type BackendDownResult,
  type ClientBenchResult,
} from './client-bench.js';
import { runLineageQueries } from './lineage-query.js';
import { serverGone } from './load.js';
import {
  BenchUsageError,
  STORE_SCENARIOS,
  parseBenchOptions,
  usage,
  type BenchOptions,
  type StoreName,
} from './options.js';
import { snapshotWrites, writeActivity, type WriteActivity } from './pg-activity.js';
import {
  clientFigures,
  formatClientTable,
  formatStoreTable,
  formatUiTable,
  storeFigures,
  uiFigures,
  type Outcome,
  type StoreReport,
} from './report.js';
import { createRunEventStream } from './run-events.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { createBenchKey } from './auth.js';
import { resummarize, summarizeServerProfiles, type NamedWindow } from './server-profile.js';
import { runSingleIngest } from './single-ingest.js';
import { checkStoredEvents } from './stored-events.js';
import {
  StoreUnavailableError,
  prepareEmbeddedStore,
  preparePostgresStore,
  type BenchStore,
} from './stores.js';
import { runGraphRender, type GraphRenderResult } from './ui-bench.js';

/** Progress goes to stderr, so that stdout holds only the tables and the final JSON line. */
const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);

/** What must be undone if the run is interrupted: the server child, then the store (undone newest first). */
const pending = new Set<() => Promise<unknown>>();

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'growth') {
    const growth = parseGrowthOptions(argv.slice(1), process.env);
    const results = await runGrowth(growth);
    process.stdout.write(`${formatGrowthTable(results)}\n\n${JSON.stringify({ growth: results })}\n`);
    return 0;
  }
  if (argv[0] === 'replicas') {
    const points = await runReplicas(parseReplicaOptions(argv.slice(1), process.env));
    process.stdout.write(`${formatReplicaTable(points)}\n\n${JSON.stringify({ replicas: points })}\n`);
    return 0;
  }
  if (argv[0] === 'journey') {
    let journey: ReturnType<typeof parseJourneyOptions>;
    try {
      journey = parseJourneyOptions(argv.slice(1), process.env);
    } catch (error) {
      if (!(error instanceof BenchUsageError)) throw error;
      process.stderr.write(`bench: ${error.message}\n\n${journeyUsage}\n`);
      return 2;
    }
    if (!journey) {
      process.stdout.write(`${journeyUsage}\n`);
      return 0;
    }
    const machine = machineInfo();
    process.stdout.write(
      `Headwater journey benchmark, ${new Date().toISOString()}\n` +
        `machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, load average ` +
        `${machine.loadAverageAtStart} at start\nserver: ${sourceState()}\n\n`,
    );
    const results = await runJourney(journey);
    const loadAverageAtEnd = Number((os.loadavg()[0] ?? 0).toFixed(2));
    process.stdout.write(
      `${formatJourneyTable(results)}\n\n${JSON.stringify({ journey: results, machine: { ...machine, loadAverageAtEnd } })}\n`,
    );
    return results.every((result) => result.ok) ? 0 : 1;
  }
  if (argv[0] === 'previews') {
    let previews: ReturnType<typeof parsePreviewsOptions>;
    try {
      previews = parsePreviewsOptions(argv.slice(1), process.env);
    } catch (error) {
      if (!(error instanceof BenchUsageError)) throw error;
      process.stderr.write(`bench: ${error.message}\n\n${previewsUsage}\n`);
      return 2;
    }
    if (!previews) {
      process.stdout.write(`${previewsUsage}\n`);
      return 0;
    }
    const machine = machineInfo();
    process.stdout.write(
      `Headwater previews benchmark, ${new Date().toISOString()}\n` +
        `machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, load average ` +
        `${machine.loadAverageAtStart} at start\nserver: ${sourceState()}\n\n`,
    );
    const results = await runPreviews(previews);
    const loadAverageAtEnd = Number((os.loadavg()[0] ?? 0).toFixed(2));
    process.stdout.write(
      `${formatPreviewsTable(results)}\n\n${JSON.stringify({ previews: results, machine: { ...machine, loadAverageAtEnd } })}\n`,
    );
    return results.every((result) => result.ok) ? 0 : 1;
  }
  if (argv[0] === 'streams') {
    const streams = await runStreams(parseStreamsOptions(argv.slice(1), process.env));
    process.stdout.write(`${formatStreamsTable(streams)}\n\n${JSON.stringify({ streams })}\n`);
    return 0;
  }
  if (argv[0] === 'alerts') {
    let alerts: ReturnType<typeof parseAlertsOptions>;
    try {
      alerts = parseAlertsOptions(argv.slice(1), process.env);
    } catch (error) {
      if (!(error instanceof BenchUsageError)) throw error;
      process.stderr.write(`bench: ${error.message}\n\n${alertsUsage}\n`);
      return 2;
    }
    if (!alerts) {
      process.stdout.write(`${alertsUsage}\n`);
      return 0;
    }
    const startedAt = new Date();
    const machine = machineInfo();
    const source = sourceState();
    process.stdout.write(
      `Headwater alerts benchmark, ${startedAt.toISOString()}${alerts.quick ? ' (--quick)' : ''}\n` +
        `machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
        `load average ${machine.loadAverageAtStart} at start\nserver: ${source}\n\n`,
    );
    const results = await runAlerts(alerts);
    const loadAverageAtEnd = Number((os.loadavg()[0] ?? 0).toFixed(2));
    process.stdout.write(
      `${formatAlertsReport(results, alerts)}\n\n` +
        `${JSON.stringify({ date: startedAt.toISOString(), quick: alerts.quick, source, alerts: results, machine: { ...machine, loadAverageAtEnd } })}\n`,
    );
    const broken = results.some((result) => result.latency?.ok === false || result.month?.ok === false);
    return broken ? 1 : 0;
  }
  if (argv[0] === 'profile') {
    // `main.js profile DIR|FILE...`: summarise the profiles of an earlier --profile run again.
    for (const target of argv.slice(1)) process.stdout.write(`${await resummarize(target)}\n\n`);
    return 0;
  }
  let options: BenchOptions | undefined;
  try {
    options = parseBenchOptions(argv, process.env);
  } catch (error) {
    if (!(error instanceof BenchUsageError)) throw error;
    process.stderr.write(`bench: ${error.message}\n\n${usage}\n`);
    return 2;
  }
  if (!options) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const startedAt = new Date();
  const machine = machineInfo();
  const source = sourceState();
  process.stdout.write(
    `Headwater benchmark, ${startedAt.toISOString()}${options.quick ? ' (--quick)' : ''}\n` +
      `machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
      `load average ${machine.loadAverageAtStart} at start\n` +
      `server: ${source}\n` +
      `server in a child process; load generated from this process over keep-alive HTTP/1.1\n\n`,
  );
  const figures: Record<string, unknown> = {};
  let failed = false;
  const perStore = options.scenarios.some((scenario) => STORE_SCENARIOS.includes(scenario));
  for (const store of perStore ? options.stores : []) {
    const report = await runStore(store, options);
    process.stdout.write(`${formatStoreTable(report)}\n\n`);
    if (report.profile !== undefined) process.stdout.write(`${report.profile}\n\n`);
    figures[store] = storeFigures(report);
    if (report.failure !== undefined) failed = true;
    const outcomes = [report.single, report.batch, report.lineage, report.analysis];
    if (outcomes.some((outcome) => outcome?.ok === false)) failed = true;
  }
  if (options.scenarios.includes('client') || options.scenarios.includes('ui')) {
    const once = await runClientAndUi(options);
    if (once.client) {
      process.stdout.write(`${formatClientTable(once.client, once.description)}\n\n`);
      figures.client = clientFigures(once.client);
      if (!once.client.ok || !once.client.value.backendDown.ok || !once.client.value.asyncHttp.ok)
        failed = true;
    }
    if (once.ui) {
      process.stdout.write(`${formatUiTable(once.ui, once.description)}\n\n`);
      figures.ui = uiFigures(once.ui);
      if (!once.ui.ok) failed = true;
    }
  }
  process.stdout.write(
    `${JSON.stringify({ date: startedAt.toISOString(), quick: options.quick, source, ...figures, machine })}\n`,
  );
  return failed ? 1 : 0;
}

/** The machine the figures come from, and how busy it was when the run started. */
function machineInfo() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageAtStart: Number((os.loadavg()[0] ?? 0).toFixed(2)),
  };
}

/** The commit the server was built from, and whether its sources had uncommitted changes: results are per build. */
function sourceState(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    // The harness itself (this package) is not the server: its changes do not make the figures another build's.
    const dirty =
      git('status', '--porcelain', '--', ':(top)packages/server/src', ':(top)packages/server/migrations') !==
      '';
    return `commit ${commit}${dirty ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

type MutableReport = { -readonly [K in keyof StoreReport]: StoreReport[K] };

async function runStore(name: StoreName, options: BenchOptions): Promise<StoreReport> {
  let store: BenchStore;
  try {
    store =
      name === 'embedded' ? await prepareEmbeddedStore() : await preparePostgresStore(options.databaseUrl);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    progress(`skipping ${name}: ${error.message}`);
    return { store: name, description: name === 'postgres' ? 'PostgreSQL' : name, skipped: error.message };
  }
  const cleanupStore = () => store.cleanup();
  pending.add(cleanupStore);
  const report: MutableReport = { store: name, description: store.description };
  const activity: Partial<Record<'single' | 'batch' | 'graphLoad' | 'analysisLoad', WriteActivity>> = {};
  const windows: NamedWindow[] = [];
  let server: ServerProcess | undefined;
  // One folder per server run: Node writes a profile per thread into it.
  const profileDir =
    options.profileDir === undefined
      ? undefined
      : path.resolve(
          options.profileDir,
          `${name}-${options.scenarios.join('+')}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
        );
  try {
    progress(`${name}: starting the server (${store.description})`);
    if (profileDir !== undefined) await mkdir(profileDir, { recursive: true });
    const startAt = performance.now();
    const bearer = options.auth ? await createBenchKey(store.serveArgs) : undefined;
    server = await startServerProcess({
      serveArgs: store.serveArgs,
      cpuProfileDir: profileDir,
    });
    server.bearer = bearer;
    const running = server;
    const stopServer = () => running.stop(5_000);
    pending.add(stopServer);
    report.startSeconds = (performance.now() - startAt) / 1000;
    progress(`${name}: listening on ${server.url} after ${report.startSeconds.toFixed(1)} s`);

    // Counts what PostgreSQL wrote during a measurement (the embedded store lives inside the child: no access).
    const withActivity = async <T>(
      key: keyof typeof activity,
      measure: () => Promise<Outcome<T>>,
      eventsOf: (value: T) => number,
    ): Promise<Outcome<T>> => {
      const url = store.databaseUrl;
      const before = url === undefined ? undefined : await snapshotWrites(url);
      const outcome = await measure();
      if (url !== undefined && before !== undefined && outcome.ok && running.exited === undefined) {
        activity[key] = writeActivity(before, await snapshotWrites(url), eventsOf(outcome.value));
      }
      return outcome;
    };

    // One event pool per store: the single and batch measurements share jobs and datasets, as one pipeline would.
    const stream = createRunEventStream({ seed: options.seed, fieldsPerDataset: options.fieldsPerDataset });
    if (options.scenarios.includes('single')) {
      progress(
        `${name}: single-event ingest, ${options.clients} clients, ${options.warmupSeconds} s warm-up + ` +
          `${options.singleSeconds} s`,
      );
      report.single = await withActivity(
        'single',
        () =>
          attempt(running, () =>
            runSingleIngest(running, stream, {
              clients: options.clients,
              seconds: options.singleSeconds,
              maxEvents: options.singleMaxEvents,
              warmupSeconds: options.warmupSeconds,
            }),
          ),
        (value) => value.events + value.warmupEvents,
      );
      if (report.single.ok) windows.push({ name: 'single-event ingest', window: report.single.value.window });
    }
    if (options.scenarios.includes('batch') && server.exited === undefined) {
      progress(
        `${name}: batch ingest, ${options.batchSenders} senders × ${options.batchSize} events, ${options.batchSeconds} s`,
      );
      report.batch = await withActivity(
        'batch',
        () =>
          attempt(running, () =>
            runBatchIngest(running, stream, {
              batchSize: options.batchSize,
              senders: options.batchSenders,
              seconds: options.batchSeconds,
              maxEvents: options.batchMaxEvents,
            }),
          ),
        (value) => value.events + value.warmupEvents,
      );
      if (report.batch.ok) windows.push({ name: 'batch ingest', window: report.batch.value.window });
    }
    if (options.scenarios.includes('lineage') && server.exited === undefined) {
      progress(
        `${name}: loading a ~${options.graphNodes.toLocaleString('en-US')}-node graph, then ${options.queries} ` +
          `depth-${options.depth} lineage queries`,
      );
      report.lineage = await withActivity(
        'graphLoad',
        () =>
          attempt(running, () =>
            runLineageQueries(running, {
              graphNodes: options.graphNodes,
              graphLayers: options.graphLayers,
              depth: options.depth,
              queries: options.queries,
              clients: options.queryClients,
              seed: options.seed,
            }),
          ),
        (value) => value.graph.events,
      );
      if (report.lineage.ok) {
        windows.push({ name: 'lineage graph load (batch)', window: report.lineage.value.graph.window });
        const lineage = report.lineage.value;
        if (lineage.status === 'measured') windows.push({ name: 'lineage queries', window: lineage.window });
      }
    }
    if (options.scenarios.includes('analysis') && server.exited === undefined) {
      progress(
        `${name}: loading a ~${options.analysisNodes.toLocaleString('en-US')}-node graph with facets and second ` +
          `runs, then up to ${options.analysisQueries} requests (or ${options.analysisSeconds} s) per analysis endpoint`,
      );
      report.analysis = await withActivity(
        'analysisLoad',
        () =>
          attempt(running, () =>
            runAnalysisQueries(running, {
              graphNodes: options.analysisNodes,
              graphLayers: options.graphLayers,
              depth: options.depth,
              queries: options.analysisQueries,
              seconds: options.analysisSeconds,
              clients: options.queryClients,
              seed: options.seed,
            }),
          ),
        (value) => value.graph.events,
      );
      if (report.analysis.ok) {
        windows.push({ name: 'analysis graph load (batch)', window: report.analysis.value.graph.window });
        for (const endpoint of report.analysis.value.endpoints) {
          if (endpoint.status === 'measured')
            windows.push({ name: `analysis: ${endpoint.label}`, window: endpoint.window });
        }
      }
    }
    report.activity = activity;
    if (running.exited === undefined) {
      const acknowledged =
        (report.single?.ok ? report.single.value.events + report.single.value.warmupEvents : 0) +
        (report.batch?.ok ? report.batch.value.events + report.batch.value.warmupEvents : 0) +
        (report.lineage?.ok ? report.lineage.value.graph.events : 0) +
        (report.analysis?.ok ? report.analysis.value.graph.events : 0);
      const check = await checkStoredEvents(running.url, acknowledged);
      if (check) report.storedEvents = check;
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    progress(`${name}: ${message}`);
    report.failure = message;
  } finally {
    if (server) {
      progress(`${name}: stopping the server`);
      const { killed } = await server.stop();
      if (killed) progress(`${name}: the server ignored SIGTERM for 60 s and was killed`);
    }
    pending.clear();
    await store.cleanup().catch((error: unknown) => progress(`${name}: cleanup failed: ${String(error)}`));
    if (profileDir !== undefined && server) {
      try {
        report.profile = await summarizeServerProfiles(profileDir, `${name} server`, windows);
      } catch (error) {
        progress(`could not summarise the CPU profiles in ${profileDir}: ${String(error)}`);
      }
    }
  }
  return report;
}

/**
 * The OpenLineage client and the explorer's graph, measured once (not per store) against one embedded-store
 * server: the client's emit() with the backend down needs no server and runs first, before it starts.
 */
async function runClientAndUi(options: BenchOptions): Promise<{
  description: string;
  client?: Outcome<ClientBenchResult>;
  ui?: Outcome<GraphRenderResult>;
}> {
  const wantClient = options.scenarios.includes('client');
  const wantUi = options.scenarios.includes('ui');
  const outcome = async <T>(measure: () => Promise<T>): Promise<Outcome<T>> => {
    try {
      return { ok: true, value: await measure() };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  };
  let backendDown: Outcome<BackendDownResult> | undefined;
  if (wantClient) {
    progress(`client: ${options.clientDownEmits.toLocaleString('en-US')} emit() calls with the backend down`);
    backendDown = await outcome(() => runBackendDown(options.clientDownEmits, options.seed));
  }
  const store = await prepareEmbeddedStore();
  const cleanupStore = () => store.cleanup();
  pending.add(cleanupStore);
  let server: ServerProcess | undefined;
  let description = store.description;
  try {
    progress(`client/ui: starting the server (${store.description})`);
    const startAt = performance.now();
    try {
      server = await startServerProcess({ serveArgs: store.serveArgs });
    } catch (error) {
      const failure: Outcome<never> = {
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      };
      return {
        description,
        ...(wantClient ? { client: failure } : {}),
        ...(wantUi ? { ui: failure } : {}),
      };
    }
    const running = server;
    pending.add(() => running.stop(5_000));
    description = `${store.description} (server up in ${((performance.now() - startAt) / 1000).toFixed(1)} s)`;
    let client: Outcome<ClientBenchResult> | undefined;
    if (wantClient && backendDown) {
      progress(`client: async_http with batch: true, ${options.clientEvents.toLocaleString('en-US')} events`);
      const asyncHttp = await attempt(running, () =>
        runAsyncThroughput(running, options.clientEvents, options.seed),
      );
      client = { ok: true, value: { backendDown, asyncHttp } };
    }
    let ui: Outcome<GraphRenderResult> | undefined;
    if (wantUi && running.exited === undefined) {
      progress(`ui: /bench/graph?nodes=${options.uiNodes} in headless Chromium, ${options.uiRuns} loads`);
      ui = await attempt(running, () => runGraphRender(running, options.uiNodes, options.uiRuns));
    } else if (wantUi) ui = { ok: false, error: serverGone(running) ?? 'the server exited' };
    return { description, ...(client ? { client } : {}), ...(ui ? { ui } : {}) };
  } finally {
    if (server) {
      progress('client/ui: stopping the server');
      await server.stop();
    }
    pending.clear();
    await store.cleanup().catch((error: unknown) => progress(`client/ui: cleanup failed: ${String(error)}`));
  }
}

async function attempt<T>(server: ServerProcess, measure: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await measure() };
  } catch (error) {
    return {
      ok: false,
      error: serverGone(server) ?? (error instanceof Error ? error.message : String(error)),
    };
  }
}

// Ctrl-C mid-run: kill the server child and remove the temp store before leaving.
process.once('SIGINT', () => {
  progress('interrupted; stopping the server and removing the store');
  void (async () => {
    for (const undo of [...pending].reverse()) await undo().catch(() => undefined);
    process.exit(130);
  })();
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
