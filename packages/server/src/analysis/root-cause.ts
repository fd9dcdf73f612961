/**
 * Root cause: why might a dataset (or a column) be wrong? Walks upstream and reports, nearest first, what went
 * wrong on the way: failed or aborted runs, failing quality assertions, stale inputs and schema changes.
 */
import { Closed, Nullable, StringEnum, Time, Type, type Static } from '../core/json-schema.js';
import type { FieldRef } from '../read-model/column-graph.js';
import {
  completedWrites,
  currentVersionCreators,
  latestFailedAssertions,
  latestRunOfJobs,
  runOutcomes,
  versionsCreatedSince,
  type AssertionRecord,
  type RunOutcome,
  type WriteRecord,
} from '../store/queries/analysis.js';
import { contradictoryStates } from '../model/run-state.js';
import type { ReadModel } from '../store/read-model.js';
import {
  analysisNodeId,
  compareText,
  datasetNodeId,
  jobNodeId,
  type AnalysisNode,
  type AnalysisSource,
  type AnalysisTime,
  type JobGraphView,
} from './context.js';
import { diffSchemas, isEmptyChange, schemaChangeProperties, type SchemaChange } from './schema.js';
import { nodesOfColumnWalk, trailNodes, walkColumns, walkJobGraph, type Reached } from './walk.js';

/** What kind of problem a cause is, in the order causes at the same distance are listed. */
export const CAUSE_KINDS = ['failedRun', 'failedAssertion', 'stale', 'schemaChange'] as const;
export type CauseKind = (typeof CAUSE_KINDS)[number];

/** A run, as a cause names it. */
export const CauseRunSchema = Closed({
  id: Type.String(),
  state: Type.String(),
  startedAt: Nullable(Time()),
  endedAt: Nullable(Time()),
  contradictoryStates: Type.Array(Type.String(), {
    description:
      'Every terminal state the run reported when they contradict each other (FAIL, then COMPLETE), most severe first; else empty',
  }),
});
export type CauseRun = Static<typeof CauseRunSchema>;

/** A failing assertion. */
export const CauseAssertionSchema = Closed({
  assertion: Type.String(),
  column: Type.String(),
  name: Nullable(Type.String(), { description: "The assertion's name, when the producer gave one" }),
  severity: Nullable(Type.String()),
  expected: Nullable(Type.String()),
  actual: Nullable(Type.String()),
  runId: Type.String(),
  at: Time(),
});
export type CauseAssertion = Static<typeof CauseAssertionSchema>;

/** How often one job writes a dataset. */
export const WriterCadenceSchema = Closed({
  job: Type.String({ description: "The job's nodeId" }),
  lastWriteAt: Time(),
  medianIntervalMs: Type.Number({
    description:
      'The median time between its writes, writes closer together than the floor counting as one (a burst), ' +
      'and never less than the floor',
  }),
  writes: Type.Integer({ description: 'How many completed writes of the job the median was taken over' }),
});
export type WriterCadence = Static<typeof WriterCadenceSchema>;

/** How late a dataset is, and the basis: the cadence of each job that writes it regularly. */
export const StalenessSchema = Closed({
  lastWriteAt: Time({ description: 'The last completed write, by any job' }),
  medianIntervalMs: Type.Number({ description: 'The usual interval: that of `job`' }),
  ageMs: Type.Number({ description: '`at` minus the last write' }),
  thresholdMs: Type.Number({ description: '1.5 x the usual interval: older than this is stale' }),
  writes: Type.Integer({ description: 'How many completed writes of `job` its interval was taken over' }),
  job: Type.String({ description: 'The writer that writes the dataset most often' }),
  floorMs: Type.Number({ description: 'Writes closer than this count as one; the least interval' }),
  writers: Type.Array(WriterCadenceSchema, {
    description: 'Every job that writes the dataset regularly (at least three writes), most frequent first',
  }),
});
export type Staleness = Static<typeof StalenessSchema>;

/** A schema change, as a cause reports it. */
export const CauseSchemaChangeSchema = Closed({
  ...schemaChangeProperties,
  fromVersion: Type.String(),
  toVersion: Type.String(),
  createdAt: Time(),
  createdByRun: Nullable(Type.String()),
});
export type CauseSchemaChange = Static<typeof CauseSchemaChangeSchema>;

/** One thing that may explain bad data, with where it is. Kind-specific fields are null (or empty) otherwise. */
export const CauseSchema = Closed({
  kind: StringEnum(CAUSE_KINDS),
  nodeId: Type.String({ description: 'The job (failedRun) or dataset (the other kinds)' }),
  distance: Type.Integer({ description: "Edges from the target: its writer is 1, the writer's inputs 2" }),
  path: Type.Array(Type.String(), {
    description: 'Node ids from the target to nodeId (columns, for a column target)',
  }),
  message: Type.String({ description: 'One line for people' }),
  explainedBy: Nullable(Type.String(), {
    description:
      'The failed run this cause may follow from: the nodeId of the job of a failedRun cause upstream of this ' +
      'one (on a path to the target), the deepest such job that no other failed run is upstream of; null when ' +
      'no failed run is upstream, and for schema changes',
  }),
  errorMessage: Nullable(Type.String(), {
    description: "The message of the failed run's error (errorMessage or spark.exception facet)",
  }),
  run: Nullable(CauseRunSchema, {
    description:
      'The failed run (failedRun), or the run that reported the newest failing result (failedAssertion)',
  }),
  assertions: Type.Array(CauseAssertionSchema),
  staleness: Nullable(StalenessSchema),
  schemaChange: Nullable(CauseSchemaChangeSchema),
});
export type Cause = Static<typeof CauseSchema>;

/** The answer of a root-cause analysis. */
export const RootCauseResultSchema = Closed({
  target: Type.String(),
  at: Time({ description: 'The moment looked at: "now" for staleness' }),
  lastGoodRunAt: Nullable(Time(), {
    description: "End of the target's last COMPLETED write: schema changes since then are reported",
  }),
  checked: Closed(
    { datasets: Type.Integer(), jobs: Type.Integer() },
    { description: 'How many upstream nodes were checked (the target included)' },
  ),
  causes: Type.Array(CauseSchema),
});
export type RootCauseResult = Static<typeof RootCauseResultSchema>;

/** Options of {@link rootCause}. */
export interface RootCauseOptions {
  /**
   * How many of each writing job's last completed writes its usual interval is the median of.
   * @default 10
   */
  readonly writes?: number;
  /**
   * The least usual interval, in ms: writes closer together count as one (bursts, retries).
   * @default 900000 (15 minutes)
   */
  readonly floorMs?: number;
  /**
   * Stale when the last write is older than this many times the usual interval.
   * @default 1.5
   */
  readonly staleFactor?: number;
}

/** Fewer completed writes than this say nothing about a usual interval (two writes are one interval). */
const MIN_WRITES = 3;

const iso = (time: Date | null): string | null => (time === null ? null : time.toISOString());
// A run that did not execute (skipped, reused) failed nothing, whatever its eventType said.
const isFailed = (run: RunOutcome | undefined): run is RunOutcome =>
  run !== undefined && run.execution === 'executed' && (run.state === 'FAILED' || run.state === 'ABORTED');

/** The median of a non-empty list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The default least usual interval: 15 minutes. */
export const STALE_FLOOR_MS = 15 * 60_000;

/**
 * The cadence of one writer from its completed write times, newest first: bursts (writes closer than `floorMs`
 * to the previous one kept) count as one write, and the median interval is at least `floorMs`. Undefined when
 * there are too few writes to tell.
 */
export function writerCadence(writes: readonly Date[], floorMs: number): number | undefined {
  const kept: number[] = [];
  for (const time of writes) {
    const t = time.getTime();
    if (kept.length === 0 || kept.at(-1)! - t >= floorMs) kept.push(t);
  }
  if (kept.length < MIN_WRITES) return undefined;
  const intervals = kept.slice(1).map((t, index) => kept[index]! - t);
  return Math.max(median(intervals), floorMs);
}

/**
 * Whether a dataset is stale at `at`, given its completed writes newest first: its last write, by any job, is
 * older than `factor` times the usual interval of the job that writes it most often ({@link writerCadence}).
 * Undefined when no writer has enough writes to tell.
 */
export function staleness(
  state: ReadModel,
  writes: readonly WriteRecord[],
  at: Date,
  factor = 1.5,
  floorMs = STALE_FLOOR_MS,
): Staleness | undefined {
  if (writes.length === 0) return undefined;
  const byJob = new Map<number, Date[]>();
  for (const write of writes) {
    const list = byJob.get(write.jobId);
    if (list) list.push(write.endedAt);
    else byJob.set(write.jobId, [write.endedAt]);
  }
  const writers: WriterCadence[] = [];
  for (const [jobId, times] of byJob) {
    const interval = writerCadence(times, floorMs);
    if (interval === undefined) continue;
    writers.push({
      job: jobNodeId(state, jobId),
      lastWriteAt: times[0]!.toISOString(),
      medianIntervalMs: interval,
      writes: times.length,
    });
  }
  if (writers.length === 0) return undefined;
  writers.sort((a, b) => a.medianIntervalMs - b.medianIntervalMs || compareText(a.job, b.job));
  const basis = writers[0]!;
  const lastWrite = writes[0]!.endedAt;
  const ageMs = at.getTime() - lastWrite.getTime();
  const thresholdMs = basis.medianIntervalMs * factor;
  if (ageMs <= thresholdMs) return undefined;
  return {
    lastWriteAt: lastWrite.toISOString(),
    medianIntervalMs: basis.medianIntervalMs,
    ageMs,
    thresholdMs,
    writes: basis.writes,
    job: basis.job,
    floorMs,
    writers,
  };
}

/** `93784000` -> `1d 2h 3m`. */
export function formatDuration(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const parts = [days > 0 ? `${days}d` : '', hours > 0 ? `${hours}h` : '', `${minutes % 60}m`];
  return `${ms < 0 ? '-' : ''}${parts.filter(Boolean).join(' ')}`;
}

/** One line describing a schema change: `added a, b; removed c; type changed d (int -> bigint)`. */
export function describeSchemaChange(change: SchemaChange): string {
  const parts: string[] = [];
  if (change.added.length > 0) parts.push(`added ${change.added.map((c) => c.name).join(', ')}`);
  if (change.removed.length > 0) parts.push(`removed ${change.removed.map((c) => c.name).join(', ')}`);
  if (change.typeChanged.length > 0) {
    parts.push(
      `type changed ${change.typeChanged.map((c) => `${c.name} (${c.fromType} -> ${c.toType})`).join(', ')}`,
    );
  }
  return parts.join('; ') || 'no column changes';
}

/** The upstream datasets and jobs of a dataset, column or job target, nearest first, the target first of all. */
export function upstreamOf(source: AnalysisSource, target: AnalysisNode): Reached[] {
  if (target.kind === 'datasetField') {
    const start: FieldRef = { datasetId: target.datasetId, field: target.field };
    const columns = walkColumns(source.state, source.columnGraph, [start], 'upstream');
    return nodesOfColumnWalk(source.state, source.graph, columns, 'upstream');
  }
  return walkJobGraph(source.state, source.graph, target, 'upstream');
}

/**
 * Walks upstream of a dataset or column and reports what may explain bad data in it: first the causes no failed
 * run upstream explains, nearest first, then those one does ({@link Cause.explainedBy}), nearest first (each
 * group then in {@link CAUSE_KINDS} order, then by nodeId):
 * - jobs whose latest run that executed by `at` FAILED or ABORTED, and the run that created the target's current
 *   version if it did (a skipped or reused run is neither a failure nor a completion);
 * - datasets (the target included) where the latest result of a standing assertion that ran, from any run,
 *   failed (see AssertionStatus in store/queries/analysis.ts: skipped results and retired assertions are not);
 * - datasets (the target included) not written by a COMPLETED run that executed for over 1.5 x the usual
 *   interval of the job that writes them most often (the median of its last 10 completed writes, bursts as one,
 *   at least 15 min);
 * - versions of these datasets created after the target's last completed write (all of them if it never had
 *   one), with what changed.
 * Six queries in two rounds, whatever the size of the upstream graph.
 */
export async function rootCause(
  source: AnalysisSource,
  target: AnalysisNode,
  time: AnalysisTime,
  options: RootCauseOptions = {},
): Promise<RootCauseResult> {
  const { db, state } = source;
  const { at } = time;
  const reached = upstreamOf(source, target);
  // A job target (a task that failed before writing its output) has no version of its own: its own runs and
  // what is upstream of it are checked, schema changes are not (they are relative to a dataset's last write).
  const targetDataset =
    target.kind === 'datasetField' ? target.datasetId : target.kind === 'dataset' ? target.id : undefined;
  const datasets = reached.filter((r) => r.node.kind === 'dataset');
  const jobs = reached.filter((r) => r.node.kind === 'job');
  const datasetIds = datasets.map((r) => r.node.id);
  const [latestRuns, creators, failedAssertions, writes] = await Promise.all([
    latestRunOfJobs(
      db,
      jobs.map((r) => r.node.id),
      at,
    ),
    currentVersionCreators(db, targetDataset === undefined ? [] : [targetDataset]),
    latestFailedAssertions(db, datasetIds, at),
    completedWrites(db, datasetIds, at, options.writes ?? 10),
  ]);
  const lastGood = targetDataset === undefined ? null : (writes.get(targetDataset)?.[0]?.endedAt ?? null);
  const creatorUuid = targetDataset === undefined ? undefined : creators.get(targetDataset);
  const assertionsOf = new Map<number, AssertionRecord[]>();
  for (const record of failedAssertions) {
    let list = assertionsOf.get(record.datasetId);
    if (!list) assertionsOf.set(record.datasetId, (list = []));
    list.push(record);
  }
  const newestOf = (records: readonly AssertionRecord[]) =>
    records.reduce((a, b) =>
      b.at > a.at || (b.at.getTime() === a.at.getTime() && b.runUuid > a.runUuid) ? b : a,
    );
  const reporters = [...assertionsOf.values()].map((records) => newestOf(records).runUuid);
  const [versions, outcomes] = await Promise.all([
    versionsCreatedSince(
      db,
      targetDataset === undefined ? [] : datasetIds,
      datasetIds.map(() => lastGood),
      at,
    ),
    runOutcomes(db, [...new Set([...(creatorUuid === undefined ? [] : [creatorUuid]), ...reporters])]),
  ]);

  const pathOf = (r: Reached) => trailNodes(r.trail).map((node) => analysisNodeId(state, node));
  // Every cause has every key, in one order: the JSON reads the same whatever the kind.
  const cause = (
    fields: Pick<Cause, 'kind' | 'nodeId' | 'distance' | 'path' | 'message'> & Partial<Cause>,
  ) => ({
    kind: fields.kind,
    nodeId: fields.nodeId,
    distance: fields.distance,
    path: fields.path,
    message: fields.message,
    explainedBy: null,
    errorMessage: fields.errorMessage ?? null,
    run: fields.run ?? null,
    assertions: fields.assertions ?? [],
    staleness: fields.staleness ?? null,
    schemaChange: fields.schemaChange ?? null,
  });
  const causes: Cause[] = [];
  const causeRun = (run: RunOutcome): CauseRun => ({
    id: run.uuid,
    state: run.state,
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    contradictoryStates: contradictoryStates(run.terminalsSeen),
  });
  const runCause = (r: Reached, run: RunOutcome): Cause => {
    const contradictory = contradictoryStates(run.terminalsSeen);
    return cause({
      kind: 'failedRun',
      nodeId: jobNodeId(state, run.jobId),
      distance: r.distance,
      path: pathOf(r),
      message:
        `${state.jobsById.get(run.jobId)?.name ?? run.jobId}: run ${run.uuid} ${run.state}` +
        `${run.endedAt ? ` at ${run.endedAt.toISOString()}` : ''}` +
        `${run.errorMessage ? `: ${run.errorMessage.split('\n')[0]}` : ''}` +
        `${contradictory.length > 0 ? ` (its events also reported ${contradictory.slice(1).join(', ')})` : ''}`,
      errorMessage: run.errorMessage,
      run: causeRun(run),
    });
  };
  const reportedRuns = new Set<string>();
  for (const r of jobs) {
    const run = latestRuns.get(r.node.id);
    if (!isFailed(run)) continue;
    reportedRuns.add(run.uuid);
    causes.push(runCause(r, run));
  }
  const creator = creatorUuid === undefined ? undefined : outcomes.get(creatorUuid);
  if (isFailed(creator) && !reportedRuns.has(creator.uuid)) {
    const start = reached[0]!;
    causes.push(
      runCause(
        {
          node: { kind: 'job', id: creator.jobId },
          distance: 1,
          trail: { node: { kind: 'job', id: creator.jobId }, previous: start.trail },
        },
        creator,
      ),
    );
  }

  const byDataset = new Map(datasets.map((r) => [r.node.id, r]));
  for (const [datasetId, records] of assertionsOf) {
    const r = byDataset.get(datasetId)!;
    const reporter = outcomes.get(newestOf(records).runUuid);
    causes.push(
      cause({
        kind: 'failedAssertion',
        nodeId: datasetNodeId(state, datasetId),
        distance: r.distance,
        path: pathOf(r),
        message:
          `${records.length} failing assertion${records.length === 1 ? '' : 's'} on ` +
          `${state.datasetsById.get(datasetId)?.name ?? datasetId}: ` +
          records
            .map(
              (a) =>
                `${a.name ?? a.assertion}${a.column ? `(${a.column})` : ''} expected ${a.expected ?? '?'}, got ${a.actual ?? '?'}`,
            )
            .join('; '),
        run: reporter ? causeRun(reporter) : null,
        assertions: records.map((a) => ({
          assertion: a.assertion,
          column: a.column,
          name: a.name,
          severity: a.severity,
          expected: a.expected,
          actual: a.actual,
          runId: a.runUuid,
          at: a.at.toISOString(),
        })),
      }),
    );
  }

  for (const r of datasets) {
    const late = staleness(
      state,
      writes.get(r.node.id) ?? [],
      at,
      options.staleFactor ?? 1.5,
      options.floorMs ?? STALE_FLOOR_MS,
    );
    if (!late) continue;
    causes.push(
      cause({
        kind: 'stale',
        nodeId: datasetNodeId(state, r.node.id),
        distance: r.distance,
        path: pathOf(r),
        message:
          `${state.datasetsById.get(r.node.id)?.name ?? r.node.id} last written ${late.lastWriteAt}, ` +
          `${formatDuration(late.ageMs)} before ${at.toISOString()}; ${late.job.replace(/^job:/, '')} usually ` +
          `writes it every ${formatDuration(late.medianIntervalMs)} (median of its last ${late.writes} writes` +
          `${late.writers.length > 1 ? `; ${late.writers.length} jobs write it` : ''})`,
        staleness: late,
      }),
    );
  }

  for (const version of versions) {
    if (version.previousVersion === null || version.previousFields === null) continue;
    const change = diffSchemas(version.previousFields, version.fields);
    if (isEmptyChange(change)) continue;
    const r = byDataset.get(version.datasetId)!;
    causes.push(
      cause({
        kind: 'schemaChange',
        nodeId: datasetNodeId(state, version.datasetId),
        distance: r.distance,
        path: pathOf(r),
        message:
          `${state.datasetsById.get(version.datasetId)?.name ?? version.datasetId} ` +
          `${change.breaking ? 'breaking ' : ''}schema change at ${version.createdAt.toISOString()}: ` +
          describeSchemaChange(change),
        schemaChange: {
          ...change,
          fromVersion: version.previousVersion,
          toVersion: version.version,
          createdAt: version.createdAt.toISOString(),
          createdByRun: version.createdByRun,
        },
      }),
    );
  }

  const explained = explainCauses(state, source.graph, reached, causes);
  const kindOrder = (kind: CauseKind) => CAUSE_KINDS.indexOf(kind);
  explained.sort(
    (a, b) =>
      Number(a.explainedBy !== null) - Number(b.explainedBy !== null) ||
      a.distance - b.distance ||
      kindOrder(a.kind) - kindOrder(b.kind) ||
      compareText(a.nodeId, b.nodeId) ||
      compareText(a.schemaChange?.createdAt ?? '', b.schemaChange?.createdAt ?? ''),
  );
  return {
    target: analysisNodeId(state, target),
    at: at.toISOString(),
    lastGoodRunAt: iso(lastGood),
    checked: { datasets: datasets.length, jobs: jobs.length },
    causes: explained,
  };
}

/** The kinds of cause a failed run upstream can explain (a schema change is a change, not a consequence). */
const EXPLAINABLE: ReadonlySet<CauseKind> = new Set(['failedRun', 'failedAssertion', 'stale']);

/**
 * Sets each cause's {@link Cause.explainedBy}: among the failed runs' jobs upstream of its node (through nodes of
 * the walk, so on a path to the target), a root one (no other failed run is upstream of it), the deepest first.
 * Each failed job's downstream is walked within `reached` once: O(failed jobs x reached nodes), with few failed
 * jobs.
 */
function explainCauses(
  state: ReadModel,
  graph: JobGraphView,
  reached: readonly Reached[],
  causes: readonly Cause[],
): Cause[] {
  const key = (kind: 'dataset' | 'job', id: number) => `${kind}:${id}`;
  const within = new Set(reached.map((r) => key(r.node.kind, r.node.id)));
  const byNodeId = new Map(reached.map((r) => [analysisNodeId(state, r.node), r]));
  // Every failed job's downstream within the walk, itself excluded.
  const failed: { nodeId: string; distance: number; below: Set<string> }[] = [];
  for (const c of causes) {
    const r = byNodeId.get(c.nodeId);
    if (c.kind !== 'failedRun' || r === undefined || failed.some((f) => f.nodeId === c.nodeId)) continue;
    const below = new Set<string>();
    let frontier: { kind: 'dataset' | 'job'; id: number }[] = [r.node];
    while (frontier.length > 0) {
      const next: typeof frontier = [];
      for (const node of frontier) {
        const neighbours =
          node.kind === 'job'
            ? graph.datasetsOf(node.id, 1).map((id) => ({ kind: 'dataset' as const, id }))
            : graph.jobsOf(node.id, 0).map((id) => ({ kind: 'job' as const, id }));
        for (const n of neighbours) {
          const k = key(n.kind, n.id);
          if (!within.has(k) || below.has(k)) continue;
          below.add(k);
          next.push(n);
        }
      }
      frontier = next;
    }
    below.delete(key(r.node.kind, r.node.id));
    failed.push({ nodeId: c.nodeId, distance: r.distance, below });
  }
  const nodeKey = (nodeId: string) => {
    const r = byNodeId.get(nodeId);
    return r ? key(r.node.kind, r.node.id) : undefined;
  };
  const roots = failed
    .filter((f) => !failed.some((g) => g !== f && g.below.has(nodeKey(f.nodeId)!)))
    .sort((a, b) => b.distance - a.distance || compareText(a.nodeId, b.nodeId));
  return causes.map((c) => {
    const k = nodeKey(c.nodeId);
    if (!EXPLAINABLE.has(c.kind) || k === undefined) return c;
    const root = roots.find((f) => f.nodeId !== c.nodeId && f.below.has(k));
    return root ? { ...c, explainedBy: root.nodeId } : c;
  });
}
