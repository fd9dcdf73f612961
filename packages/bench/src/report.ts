import type { AnalysisResult } from './analysis-bench.js';
import type { BatchIngestResult } from './batch-ingest.js';
import { DEFAULT_MAX_QUEUE_SIZE, type ClientBenchResult } from './client-bench.js';
import type { LineageQueryResult } from './lineage-query.js';
import type { StoreName } from './options.js';
import type { WriteActivity } from './pg-activity.js';
import type { SingleIngestResult } from './single-ingest.js';
import type { CpuUse } from './stats.js';
import type { StoredEventsCheck } from './stored-events.js';
import type { GraphRenderResult } from './ui-bench.js';

/** A measurement that ran, or why it could not. */
export type Outcome<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** Everything measured on one store. */
export interface StoreReport {
  readonly store: StoreName;
  readonly description: string;
  /** Set when the store could not be used at all (e.g. PostgreSQL unreachable). */
  readonly skipped?: string;
  readonly startSeconds?: number;
  readonly single?: Outcome<SingleIngestResult>;
  readonly batch?: Outcome<BatchIngestResult>;
  readonly lineage?: Outcome<LineageQueryResult>;
  readonly analysis?: Outcome<AnalysisResult>;
  /** What PostgreSQL wrote during each ingest measurement (PostgreSQL store only). */
  readonly activity?: Partial<Record<'single' | 'batch' | 'graphLoad' | 'analysisLoad', WriteActivity>>;
  /** Acknowledged events against stored ones, at the end of the run. */
  readonly storedEvents?: StoredEventsCheck;
  /** Set when the run on this store broke off (e.g. the server did not start). */
  readonly failure?: string;
  /** The server CPU profile summary, with --profile. */
  readonly profile?: string;
}

/** The issue's targets. */
export const TARGETS = {
  singleEventsPerSec: 3_000,
  batchEventsPerSec: 15_000,
  lineageP95Ms: 50,
  /** Each analysis answer over a generated 100,000-node graph. */
  analysisP95Ms: 100,
  /** The client's documented bound: emit() resolves within `emitTimeoutMs` (default 5 s). */
  emitResolvedMaxMs: 5_000,
  /** A 2,000-node generated graph lays out and renders in under 3 s (p50 of the measured page loads). */
  graphTotalP50Ms: 3_000,
  panZoomFpsP50: 30,
} as const;

/** Timers fire a little late: a bound counts as kept up to this much over it. */
const TIMER_SLACK_MS = 50;

/** CPU used by other processes during a measurement above which the table warns. */
const BUSY_MACHINE_PCT = 25;

const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'n/a');
const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
/** CPU use in words: server, PostgreSQL, load generator and other processes, as % of one core. */
export const cpuText = (cpu: CpuUse): string =>
  [
    cpu.serverPct === undefined ? undefined : `server ${cpu.serverPct.toFixed(0)} %`,
    cpu.postgresPct === undefined || cpu.postgresPct < 1
      ? undefined
      : `postgres ${cpu.postgresPct.toFixed(0)} %`,
    `load generator ${cpu.loadPct.toFixed(0)} %`,
    cpu.otherPct === undefined ? undefined : `other processes ${cpu.otherPct.toFixed(0)} %`,
  ]
    .filter((part) => part !== undefined)
    .join(' · ');

type Row = readonly [label: string, result: string, target?: string, verdict?: string];

const activityRow = (activity: WriteActivity | undefined): Row[] => {
  if (!activity) return [];
  const tables = activity.rowsPerEventByTable
    .slice(0, 4)
    .map((entry) => `${entry.table} ${entry.rows.toFixed(1)}`)
    .join(', ');
  return [
    [
      '  PostgreSQL writes',
      `${int(activity.transactions)} transactions, ${activity.eventsPerTransaction.toFixed(1)} events each · ` +
        `${activity.rowsPerEvent.toFixed(1)} rows added per event (${tables}${
          activity.rowsPerEventByTable.length > 4 ? ', ...' : ''
        })`,
    ],
  ];
};

/** Renders one store's results as an aligned plain-text table. */
export function formatStoreTable(report: StoreReport): string {
  const heading = `== ${report.description}${
    report.startSeconds === undefined ? '' : ` (server up in ${report.startSeconds.toFixed(1)} s)`
  }`;
  if (report.skipped !== undefined) return `${heading}\n   skipped: ${report.skipped}`;
  const rows: Row[] = [['measurement', 'result', 'target', '']];
  if (report.failure !== undefined) rows.push(['run failed', report.failure]);
  const single = report.single;
  if (single?.ok === false)
    rows.push(['single-event ingest', `failed: ${single.error}`, '≥ 3,000 events/s', 'MISSED']);
  else if (single) {
    const s = single.value;
    rows.push([
      `single-event ingest (${s.clients} clients)`,
      `${int(s.eventsPerSec)} events/s  (${int(s.events)} events in ${s.seconds.toFixed(1)} s)`,
      `≥ ${int(TARGETS.singleEventsPerSec)} events/s`,
      verdict(s.eventsPerSec >= TARGETS.singleEventsPerSec && s.errors.count === 0),
    ]);
    rows.push([
      '  latency',
      `p50 ${ms(s.latencyMs.p50)} · p95 ${ms(s.latencyMs.p95)} · p99 ${ms(s.latencyMs.p99)}`,
    ]);
    rows.push([
      '  event size, bandwidth',
      `${(s.meanEventBytes / 1024).toFixed(1)} KiB mean · ${s.megabytesPerSec.toFixed(1)} MB/s`,
    ]);
    rows.push(['  CPU (% of one core)', cpuText(s.cpu)]);
    rows.push(...activityRow(report.activity?.single));
    if (s.errors.count > 0) rows.push(['  errors', `${s.errors.count}, first: ${s.errors.first ?? ''}`]);
  }
  const batch = report.batch;
  if (batch?.ok === false)
    rows.push(['batch ingest', `failed: ${batch.error}`, '≥ 15,000 events/s', 'MISSED']);
  else if (batch) {
    const b = batch.value;
    rows.push([
      `batch ingest (${b.batchSize}/request, ${b.senders} senders)`,
      `${int(b.eventsPerSec)} events/s  (${int(b.events)} events in ${b.seconds.toFixed(1)} s)`,
      `≥ ${int(TARGETS.batchEventsPerSec)} events/s`,
      verdict(b.eventsPerSec >= TARGETS.batchEventsPerSec && b.errors.count === 0),
    ]);
    rows.push([
      '  request latency',
      `p50 ${ms(b.requestLatencyMs.p50)} · p95 ${ms(b.requestLatencyMs.p95)} · p99 ${ms(b.requestLatencyMs.p99)}`,
    ]);
    rows.push([
      '  event size, bandwidth',
      `${(b.meanEventBytes / 1024).toFixed(1)} KiB mean · ${b.megabytesPerSec.toFixed(1)} MB/s`,
    ]);
    rows.push(['  CPU (% of one core)', cpuText(b.cpu)]);
    rows.push(...activityRow(report.activity?.batch));
    if (b.errors.count > 0) rows.push(['  errors', `${b.errors.count}, first: ${b.errors.first ?? ''}`]);
  }
  const lineage = report.lineage;
  if (lineage?.ok === false)
    rows.push(['lineage query', `failed: ${lineage.error}`, 'p95 ≤ 50 ms', 'MISSED']);
  else if (lineage) {
    const l = lineage.value;
    if (l.status === 'missing') {
      rows.push(['lineage query', l.note, `p95 ≤ ${TARGETS.lineageP95Ms} ms`, 'n/a']);
    } else {
      rows.push([
        `lineage, depth ${l.depth} upstream (${l.clients} clients)`,
        `p50 ${ms(l.latencyMs.p50)} · p95 ${ms(l.latencyMs.p95)} · p99 ${ms(l.latencyMs.p99)}  (${l.queries} queries)`,
        `p95 ≤ ${TARGETS.lineageP95Ms} ms`,
        verdict(l.latencyMs.p95 <= TARGETS.lineageP95Ms && l.errors.count === 0),
      ]);
      rows.push([
        '  answers',
        `${int(l.meanNodes)} nodes mean (reference ${int(l.meanReferenceNodes)}, ${l.mismatches} differ), ` +
          `${(l.meanResponseBytes / 1024).toFixed(0)} KiB · ` +
          `${(100 * l.shareAtFullDepth).toFixed(0)} % reach ${l.depth} job hops`,
      ]);
      rows.push(['  CPU (% of one core)', cpuText(l.cpu)]);
      if (l.errors.count > 0) rows.push(['  errors', `${l.errors.count}, first: ${l.errors.first ?? ''}`]);
    }
    const g = l.graph;
    rows.push([
      '  graph',
      `${int(g.datasets)} datasets + ${int(g.jobs)} jobs, loaded in ${g.seconds.toFixed(1)} s ` +
        `(${int(g.eventsPerSec)} small events/s via batch)`,
    ]);
    rows.push(...activityRow(report.activity?.graphLoad));
  }
  rows.push(...analysisRows(report));
  const stored = report.storedEvents;
  if (stored) {
    const lost = stored.acknowledged - stored.stored;
    rows.push([
      'durability check',
      `${int(stored.stored)} events stored, ${int(stored.acknowledged)} acknowledged` +
        (lost > 0 ? ` (${int(lost)} acknowledged events LOST)` : ''),
      'none lost',
      verdict(lost <= 0),
    ]);
  }
  const busiest = Math.max(
    0,
    ...[
      report.single?.ok ? report.single.value.cpu : undefined,
      report.batch?.ok ? report.batch.value.cpu : undefined,
      report.lineage?.ok && report.lineage.value.status === 'measured' ? report.lineage.value.cpu : undefined,
      ...(report.analysis?.ok
        ? report.analysis.value.endpoints.map((e) => (e.status === 'measured' ? e.cpu : undefined))
        : []),
    ].map((cpu) => cpu?.otherPct ?? 0),
  );
  if (busiest >= BUSY_MACHINE_PCT) {
    rows.push([
      'WARNING',
      `other processes used up to ${busiest.toFixed(0)} % of a core during a measurement: on a small machine ` +
        'these figures understate the server; rerun when the machine is idle',
    ]);
  }
  return table(heading, rows);
}

/** The analysis measurement's rows: the graph, then per endpoint its latency and what its answers held. */
function analysisRows(report: StoreReport): Row[] {
  const analysis = report.analysis;
  const target = `p95 ≤ ${TARGETS.analysisP95Ms} ms`;
  if (!analysis) return [];
  if (!analysis.ok) return [['analysis', `failed: ${analysis.error}`, target, 'MISSED']];
  const a = analysis.value;
  const g = a.graph;
  const rows: Row[] = [
    [
      `analysis (${a.clients} clients)`,
      `${int(g.datasets)} datasets + ${int(g.jobs)} jobs, ${int(g.events)} events (${int(a.secondRunEvents)} of ` +
        `second runs) loaded in ${g.seconds.toFixed(1)} s (${int(g.eventsPerSec)} events/s via batch); ` +
        `as of ${a.asOf}`,
    ],
    ...activityRow(report.activity?.analysisLoad),
  ];
  for (const e of a.endpoints) {
    if (e.status === 'unavailable') {
      rows.push([`  ${e.label}`, `not available on this build: ${e.note}`, target, 'n/a']);
      continue;
    }
    rows.push([
      `  ${e.label}`,
      `p50 ${ms(e.latencyMs.p50)} · p95 ${ms(e.latencyMs.p95)} · max ${ms(e.latencyMs.max)}  (${e.queries} requests` +
        `${e.stoppedAfterSeconds === undefined ? '' : `, stopped after ${e.stoppedAfterSeconds.toFixed(0)} s`})`,
      target,
      verdict(e.latencyMs.p95 <= TARGETS.analysisP95Ms && e.errors.count === 0 && e.failedChecks === 0),
    ]);
    const mean = (value: number) => (value < 100 ? value.toFixed(1) : int(value));
    const reference = e.meanReference === undefined ? '' : ` (reference ${mean(e.meanReference)})`;
    rows.push([
      '    answers',
      `${mean(e.meanSize)} ${e.unit} mean${reference} · ${kib(e.meanResponseBytes)} · ` +
        `${e.failedChecks} failed the check · ${cpuText(e.cpu)}`,
    ]);
    if (e.failedChecks > 0) rows.push(['    first failed check', e.firstFailedCheck ?? '']);
    if (e.errors.count > 0) rows.push(['    errors', `${e.errors.count}, first: ${e.errors.first ?? ''}`]);
  }
  return rows;
}

const kib = (bytes: number) =>
  Number.isFinite(bytes)
    ? bytes < 10_240
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${int(bytes / 1024)} KiB`
    : 'n/a';

/** Aligns the rows in columns under the heading. */
function table(heading: string, rows: readonly Row[]): string {
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  const lines = rows.map((row) =>
    row
      .map((cell, column) => (column < 3 ? (cell ?? '').padEnd(widths[column]!) : (cell ?? '')))
      .join('   ')
      .trimEnd(),
  );
  return [heading, ...lines].join('\n');
}

const round = (value: number, digits = 1): number | null =>
  Number.isFinite(value) ? Number(value.toFixed(digits)) : null;

/** One store's figures for the final JSON line. */
export function storeFigures(report: StoreReport): Record<string, unknown> {
  if (report.skipped !== undefined) return { skipped: report.skipped };
  const figures: Record<string, unknown> = {};
  if (report.failure !== undefined) figures.failure = report.failure;
  if (report.storedEvents) {
    figures.acknowledgedEvents = report.storedEvents.acknowledged;
    figures.storedEvents = report.storedEvents.stored;
  }
  const single = report.activity?.single;
  const batch = report.activity?.batch;
  if (single) figures.singleEventsPerTransaction = round(single.eventsPerTransaction);
  if (single) figures.singleRowsPerEvent = round(single.rowsPerEvent);
  if (batch) figures.batchEventsPerTransaction = round(batch.eventsPerTransaction);
  if (batch) figures.batchRowsPerEvent = round(batch.rowsPerEvent);
  if (report.single?.ok === false) figures.singleError = report.single.error;
  else if (report.single) {
    const s = report.single.value;
    Object.assign(figures, {
      singleEventsPerSec: round(s.eventsPerSec, 0),
      singleP50Ms: round(s.latencyMs.p50),
      singleP95Ms: round(s.latencyMs.p95),
      singleP99Ms: round(s.latencyMs.p99),
      singleEvents: s.events,
      singleErrors: s.errors.count,
      singleClients: s.clients,
      meanEventBytes: round(s.meanEventBytes, 0),
      singleServerCpuPct: round(s.cpu.serverPct ?? NaN, 0),
      singlePostgresCpuPct: round(s.cpu.postgresPct ?? NaN, 0),
      singleOtherCpuPct: round(s.cpu.otherPct ?? NaN, 0),
    });
  }
  if (report.batch?.ok === false) figures.batchError = report.batch.error;
  else if (report.batch) {
    const b = report.batch.value;
    Object.assign(figures, {
      batchEventsPerSec: round(b.eventsPerSec, 0),
      batchSize: b.batchSize,
      batchSenders: b.senders,
      batchRequestP95Ms: round(b.requestLatencyMs.p95),
      batchEvents: b.events,
      batchErrors: b.errors.count,
      batchServerCpuPct: round(b.cpu.serverPct ?? NaN, 0),
      batchPostgresCpuPct: round(b.cpu.postgresPct ?? NaN, 0),
      batchOtherCpuPct: round(b.cpu.otherPct ?? NaN, 0),
    });
  }
  if (report.lineage?.ok === false) figures.lineageError = report.lineage.error;
  else if (report.lineage) {
    const l = report.lineage.value;
    figures.graphNodes = l.graph.datasets + l.graph.jobs;
    figures.graphLoadEventsPerSec = round(l.graph.eventsPerSec, 0);
    if (l.status === 'missing') figures.lineageNote = l.note;
    else {
      Object.assign(figures, {
        lineageP50Ms: round(l.latencyMs.p50),
        lineageP95Ms: round(l.latencyMs.p95),
        lineageP99Ms: round(l.latencyMs.p99),
        lineageMeanNodes: round(l.meanNodes, 0),
        lineageMeanResponseBytes: round(l.meanResponseBytes, 0),
        lineageReferenceMeanNodes: round(l.meanReferenceNodes, 0),
        lineageMismatches: l.mismatches,
        lineageShareAtFullDepth: round(l.shareAtFullDepth, 2),
        lineageQueries: l.queries,
        lineageErrors: l.errors.count,
        lineageOtherCpuPct: round(l.cpu.otherPct ?? NaN, 0),
      });
    }
  }
  if (report.analysis?.ok === false) figures.analysisError = report.analysis.error;
  else if (report.analysis) figures.analysis = analysisFigures(report.analysis.value);
  return figures;
}

/** The analysis measurement's figures, per endpoint by its key. */
function analysisFigures(a: AnalysisResult): Record<string, unknown> {
  const endpoints: Record<string, unknown> = {};
  for (const e of a.endpoints) {
    endpoints[e.key] =
      e.status === 'unavailable'
        ? { unavailable: e.note }
        : {
            p50Ms: round(e.latencyMs.p50),
            p95Ms: round(e.latencyMs.p95),
            maxMs: round(e.latencyMs.max),
            requests: e.queries,
            stoppedAfterSeconds: e.stoppedAfterSeconds === undefined ? null : round(e.stoppedAfterSeconds),
            meanResponseBytes: round(e.meanResponseBytes, 0),
            meanSize: round(e.meanSize),
            meanReference: e.meanReference === undefined ? null : round(e.meanReference),
            unit: e.unit,
            failedChecks: e.failedChecks,
            errors: e.errors.count,
            serverCpuPct: round(e.cpu.serverPct ?? NaN, 0),
            postgresCpuPct: round(e.cpu.postgresPct ?? NaN, 0),
            otherCpuPct: round(e.cpu.otherPct ?? NaN, 0),
          };
  }
  return {
    graphNodes: a.graph.datasets + a.graph.jobs,
    loadEvents: a.graph.events,
    loadEventsPerSec: round(a.graph.eventsPerSec, 0),
    asOf: a.asOf,
    clients: a.clients,
    endpoints,
  };
}

const us = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} µs` : 'n/a');

/** Renders the OpenLineage client's measurements. */
export function formatClientTable(result: Outcome<ClientBenchResult>, description: string): string {
  const heading = `== OpenLineage client (@headwater/openlineage), ${description}`;
  const rows: Row[] = [['measurement', 'result', 'target', '']];
  if (!result.ok) {
    rows.push(['run failed', result.error]);
    return table(heading, rows);
  }
  const down = result.value.backendDown;
  if (!down.ok) rows.push(['emit(), backend down', `failed: ${down.error}`, '', 'MISSED']);
  else {
    const d = down.value;
    rows.push([
      `emit(), backend down (http, closed port)`,
      `caller's thread: p50 ${us(d.syncUs.p50)} · p99 ${us(d.syncUs.p99)} · max ${us(d.syncUs.max)}  ` +
        `(${int(d.emits)} emits)`,
      'no figure set',
    ]);
    rows.push([
      `  of which ${int(d.delivering)} started a delivery`,
      `p50 ${us(d.deliveringSyncUs.p50)} · p99 ${us(d.deliveringSyncUs.p99)} · max ${us(d.deliveringSyncUs.max)}`,
    ]);
    rows.push([
      `  and ${int(d.emits - d.delivering)} were dropped at once`,
      `p50 ${us(d.droppedSyncUs.p50)} · p99 ${us(d.droppedSyncUs.p99)} · max ${us(d.droppedSyncUs.max)}  ` +
        '(1,000 deliveries already in flight)',
    ]);
    rows.push([
      '  until the promise resolves',
      `p50 ${ms(d.resolvedMs.p50)} · p99 ${ms(d.resolvedMs.p99)} · max ${ms(d.resolvedMs.max)}`,
      `≤ ${int(TARGETS.emitResolvedMaxMs)} ms (emitTimeoutMs)`,
      verdict(d.resolvedMs.max <= TARGETS.emitResolvedMaxMs + TIMER_SLACK_MS),
    ]);
    rows.push([
      '  client counters',
      `${int(d.stats.timedOut)} emits resolved at emitTimeoutMs with their delivery still retrying · ` +
        `${int(d.stats.dropped)} dropped · ${int(d.stats.accepted)} accepted`,
    ]);
    rows.push([
      `  close(${int(d.closeBoundMs)} ms) with retries pending`,
      `returned ${String(d.closeResult)} after ${ms(d.closeMs)}`,
      `≤ ${int(d.closeBoundMs)} ms`,
      verdict(d.closeMs <= d.closeBoundMs + TIMER_SLACK_MS),
    ]);
  }
  const asyncHttp = result.value.asyncHttp;
  if (!asyncHttp.ok)
    rows.push(['async_http throughput', `failed: ${asyncHttp.error}`, 'all events stored', 'MISSED']);
  else {
    const a = asyncHttp.value;
    const stored = a.stored;
    rows.push([
      `async_http, batch: true (${a.batchSize}/request)`,
      `${int(a.eventsPerSec)} events/s  (${int(a.events)} events, first emit to close() in ${a.seconds.toFixed(1)} s; ` +
        `emits done after ${a.emitSeconds.toFixed(1)} s)`,
      'no figure set',
    ]);
    rows.push([
      '  delivered',
      `${stored === undefined ? 'unknown' : int(stored)} stored of ${int(a.events)} emitted · ` +
        `${int(a.stats.dropped)} dropped · close() returned ${String(a.closeResult)}`,
      'all stored',
      verdict(stored === a.events && a.stats.dropped === 0),
    ]);
    rows.push([
      `  queue (max_queue_size ${int(a.maxQueueSize)})`,
      `peak ${int(a.peakQueued)} events waiting` +
        (a.peakQueued > DEFAULT_MAX_QUEUE_SIZE
          ? ` (the default max_queue_size of ${int(DEFAULT_MAX_QUEUE_SIZE)} would have dropped ` +
            `${int(a.peakQueued - DEFAULT_MAX_QUEUE_SIZE)} or more)`
          : ''),
    ]);
    rows.push([
      '  event size',
      `${(a.meanEventBytes / 1024).toFixed(1)} KiB mean · ` +
        `${((a.events * a.meanEventBytes) / 1e6 / a.seconds).toFixed(1)} MB/s`,
    ]);
    rows.push(['  CPU (% of one core)', cpuText(a.cpu)]);
  }
  return table(heading, rows);
}

/** Renders the explorer's graph render times. */
export function formatUiTable(result: Outcome<GraphRenderResult>, description: string): string {
  const heading = `== Explorer graph in headless Chromium, ${description}`;
  const rows: Row[] = [['measurement', 'result', 'target', '']];
  const target = `p50 < ${int(TARGETS.graphTotalP50Ms)} ms`;
  if (!result.ok) rows.push(['graph layout + render', `failed: ${result.error}`, target, 'MISSED']);
  else if (result.value.status === 'missing')
    rows.push(['graph layout + render', result.value.note, target, 'n/a']);
  else {
    const u = result.value;
    const first = u.runs[0] ?? u.warmup;
    rows.push([
      `${int(first.nodes)}-node graph, layout + render`,
      `p50 ${ms(u.totalMs.p50)} · max ${ms(u.totalMs.max)}  (${u.runs.length} loads after 1 warm-up)`,
      target,
      verdict(u.totalMs.p50 < TARGETS.graphTotalP50Ms),
    ]);
    rows.push([
      '  of which',
      `layout p50 ${ms(u.layoutMs.p50)} (max ${ms(u.layoutMs.max)}) · render p50 ${ms(u.renderMs.p50)} ` +
        `(max ${ms(u.renderMs.max)})`,
    ]);
    rows.push([
      '  page load to drawn',
      `p50 ${ms(u.wallMs.p50)} · max ${ms(u.wallMs.max)} (also loading the app) · warm-up ${ms(u.warmup.totalMs)} ` +
        `layout + render`,
    ]);
    rows.push(['  graph, browser', `${int(first.nodes)} nodes, ${int(first.edges)} edges · ${u.chromium}`]);
    rows.push(['  readable (names >= 11 px)', `p50 ${ms(u.readableMs.p50)} · max ${ms(u.readableMs.max)}`]);
    const p = u.panZoom;
    rows.push([
      `${int(p.nodes)}-node graph, pan and zoom`,
      `p50 ${p.fps.p50.toFixed(1)} frames/s · min ${p.fpsMin.toFixed(1)} · frame p95 ${ms(p.p95FrameMs.p50)} ` +
        `(${p.loads.length} loads after 1 warm-up, 300 frames each)`,
      `>= ${TARGETS.panZoomFpsP50} frames/s`,
      verdict(p.fps.p50 >= TARGETS.panZoomFpsP50),
    ]);
    rows.push([
      '  CPU per frame (pan and zoom)',
      `main thread p50 ${p.mainThreadCpuMsPerFrame.p50.toFixed(1)} ms · renderer process ` +
        `p50 ${p.rendererCpuMsPerFrame.p50.toFixed(1)} ms · GPU process ` +
        `${p.gpuProcessCpuMsPerFrame ? `p50 ${p.gpuProcessCpuMsPerFrame.p50.toFixed(1)} ms` : 'not read'} ` +
        `(a 30 frames/s budget is 33 ms)`,
    ]);
    rows.push([
      `  ${int(p.nodes)} nodes readable`,
      `p50 ${ms(p.readableMs.p50)} · max ${ms(p.readableMs.max)} after the page's first render`,
    ]);
  }
  return table(heading, rows);
}

/** The client's figures for the final JSON line. */
export function clientFigures(result: Outcome<ClientBenchResult>): Record<string, unknown> {
  if (!result.ok) return { failure: result.error };
  const figures: Record<string, unknown> = {};
  const down = result.value.backendDown;
  if (!down.ok) figures.backendDownError = down.error;
  else {
    const d = down.value;
    Object.assign(figures, {
      downEmits: d.emits,
      downSyncP50Us: round(d.syncUs.p50),
      downSyncP99Us: round(d.syncUs.p99),
      downSyncMaxUs: round(d.syncUs.max),
      downDelivering: d.delivering,
      downDeliveringSyncP50Us: round(d.deliveringSyncUs.p50),
      downDeliveringSyncP99Us: round(d.deliveringSyncUs.p99),
      downDroppedSyncP50Us: round(d.droppedSyncUs.p50),
      downDroppedSyncP99Us: round(d.droppedSyncUs.p99),
      downResolvedP50Ms: round(d.resolvedMs.p50, 3),
      downResolvedP99Ms: round(d.resolvedMs.p99),
      downResolvedMaxMs: round(d.resolvedMs.max),
      downDropped: d.stats.dropped,
      downTimedOut: d.stats.timedOut,
      closeMs: round(d.closeMs),
      closeBoundMs: d.closeBoundMs,
      closeResult: d.closeResult,
    });
  }
  const asyncHttp = result.value.asyncHttp;
  if (!asyncHttp.ok) figures.asyncHttpError = asyncHttp.error;
  else {
    const a = asyncHttp.value;
    Object.assign(figures, {
      asyncEvents: a.events,
      asyncEventsPerSec: round(a.eventsPerSec, 0),
      asyncSeconds: round(a.seconds, 2),
      asyncEmitSeconds: round(a.emitSeconds, 2),
      asyncBatchSize: a.batchSize,
      asyncMaxQueueSize: a.maxQueueSize,
      asyncPeakQueued: a.peakQueued,
      asyncStoredEvents: a.stored ?? null,
      asyncDropped: a.stats.dropped,
      asyncMeanEventBytes: round(a.meanEventBytes, 0),
      asyncServerCpuPct: round(a.cpu.serverPct ?? NaN, 0),
      asyncOtherCpuPct: round(a.cpu.otherPct ?? NaN, 0),
    });
  }
  return figures;
}

/** The graph render figures for the final JSON line. */
export function uiFigures(result: Outcome<GraphRenderResult>): Record<string, unknown> {
  if (!result.ok) return { failure: result.error };
  const u = result.value;
  if (u.status === 'missing') return { skipped: u.note };
  const first = u.runs[0] ?? u.warmup;
  return {
    nodes: first.nodes,
    edges: first.edges,
    runs: u.runs.length,
    totalP50Ms: round(u.totalMs.p50, 0),
    totalMaxMs: round(u.totalMs.max, 0),
    layoutP50Ms: round(u.layoutMs.p50, 0),
    renderP50Ms: round(u.renderMs.p50, 0),
    wallP50Ms: round(u.wallMs.p50, 0),
    readableP50Ms: round(u.readableMs.p50, 0),
    panZoom: {
      nodes: u.panZoom.nodes,
      edges: u.panZoom.edges,
      fpsP50: round(u.panZoom.fps.p50, 1),
      fpsMin: round(u.panZoom.fpsMin, 1),
      frameP95MsP50: round(u.panZoom.p95FrameMs.p50, 1),
      readableP50Ms: round(u.panZoom.readableMs.p50, 0),
      mainThreadCpuMsPerFrameP50: round(u.panZoom.mainThreadCpuMsPerFrame.p50, 1),
      rendererCpuMsPerFrameP50: round(u.panZoom.rendererCpuMsPerFrame.p50, 1),
      gpuProcessCpuMsPerFrameP50: u.panZoom.gpuProcessCpuMsPerFrame
        ? round(u.panZoom.gpuProcessCpuMsPerFrame.p50, 1)
        : null,
    },
    warmupTotalMs: u.warmup.totalMs,
    chromium: u.chromium,
  };
}
