import type { BatchIngestResult } from './batch-ingest.js';
import type { LineageQueryResult } from './lineage-query.js';
import type { StoreName } from './options.js';
import type { WriteActivity } from './pg-activity.js';
import type { SingleIngestResult } from './single-ingest.js';
import type { CpuUse } from './stats.js';
import type { StoredEventsCheck } from './stored-events.js';

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
  /** What PostgreSQL wrote during each ingest measurement (PostgreSQL store only). */
  readonly activity?: Partial<Record<'single' | 'batch' | 'graphLoad', WriteActivity>>;
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
} as const;

/** CPU used by other processes during a measurement above which the table warns. */
const BUSY_MACHINE_PCT = 25;

const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'n/a');
const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
const cpuText = (cpu: CpuUse) =>
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
    ].map((cpu) => cpu?.otherPct ?? 0),
  );
  if (busiest >= BUSY_MACHINE_PCT) {
    rows.push([
      'WARNING',
      `other processes used up to ${busiest.toFixed(0)} % of a core during a measurement: on a small machine ` +
        'these figures understate the server; rerun when the machine is idle',
    ]);
  }
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
  return figures;
}
