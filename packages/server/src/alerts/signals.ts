/**
 * The signals incidents stand on, read from the lineage model as it is now, and the root cause each one is grouped
 * under. A signal is a fact that stays true until something new happens, so it is computed from state rather than
 * from the event that caused it: the engine (incidents.ts) can compute it again after any commit, a restart or a
 * takeover, and get the same answer.
 *
 * - `run_failed`: the latest run of a job that executed FAILED or ABORTED (a skipped or reused run is neither), and
 *   its retry grace (rules.ts) has passed since it ended. Until then it is pending: a retry that completes first
 *   makes it no longer the latest, and it never was a signal.
 * - `assertion_failed`: the latest evaluated result of a standing assertion on a dataset failed (latestAssertions
 *   in store/queries/analysis.ts: retired assertions and skipped results are not failures).
 * - `run_overdue`: the latest executed run of a job is still RUNNING past {@link overdueAfterMs} of its start: twice
 *   the longest of its last 10 completed runs, and at least 5 minutes (a job with fewer than 3 has no history to
 *   judge by).
 * - `run_missing`: a job that keeps a schedule (its runs' `nominalTime`, at least 3) has not started a run since
 *   its next nominal start, half an interval (at least 5 minutes) after it ({@link missingRun}). Only looked for
 *   when the reading is asked to (the engine's periodic pass): a run that does not come is no commit.
 *
 * Grouping: a signal belongs under the signal that explains it, so that one broken load is one incident however
 * much breaks downstream of it.
 * - A failed run with a failed child run (a DAG whose task failed) is explained by the child.
 * - Otherwise root cause's walk (analysis/root-cause.ts) names the deepest failed run upstream of the signal's node
 *   (`explainedBy`); when that run is itself a signal, it is the root. While it is pending, so is the signal it
 *   explains (both wait for the retry); when no rule alerts on it, the signal is its own root.
 */
import type { AnalysisSource } from '../analysis/context.js';
import { datasetNodeId, jobNodeId } from '../analysis/context.js';
import { median, rootCause, type Cause } from '../analysis/root-cause.js';
import { parseNodeId } from '../core/node-id.js';
import {
  latestFailedAssertions,
  latestRunOfJobs,
  runOutcomes,
  type RunOutcome,
} from '../store/queries/analysis.js';
import { completedDurations, failedChildRuns, nominalStarts } from '../store/queries/incidents.js';
import { entityKey, type RunRow } from '../store/model-state.js';
import { runStateOf } from '../model/run-state.js';
import type { ReadModel } from '../store/read-model.js';
import type { AlertsConfig } from './config.js';
import type { SignalKind } from './config-schema.js';
import { matchingRules, retryGraceMs, type SignalSubject } from './rules.js';

/** A job or dataset of the model, with its names. */
export interface SignalNode {
  readonly type: 'job' | 'dataset';
  readonly id: number;
  readonly namespace: string;
  readonly name: string;
  readonly nodeId: string;
}

/** A failing assertion's result. */
export interface FailedAssertion {
  readonly assertion: string;
  readonly name: string | null;
  readonly column: string | null;
  readonly expected: string | null;
  readonly actual: string | null;
  readonly runUuid: string;
  readonly at: string;
}

/** One signal. */
export interface Signal {
  /** Its identity, stable while it lasts: `run:<uuid>`, or `assertion:<dataset id>:<identity>:<run uuid>`. */
  readonly key: string;
  readonly kind: SignalKind;
  readonly node: SignalNode;
  /** When it happened: the run's end, or the result's time. */
  readonly at: Date;
  readonly runUuid: string;
  readonly errorMessage: string | null;
  readonly assertion?: FailedAssertion;
  /** The job whose run reported a failed assertion. */
  readonly reporter?: SignalNode;
  /** For an overdue or missing run: when it was due. */
  readonly expectedBy?: Date;
}

/** A signal whose grace has not passed: it becomes one at `dueAt`, if nothing changes first. */
export interface PendingSignal {
  readonly node: SignalNode;
  readonly runUuid: string;
  readonly dueAt: number;
}

/** A signal under its root. */
export interface GroupedSignal {
  readonly signal: Signal;
  /** The root's signal (the signal itself when it is its own root). */
  readonly root: Signal;
}

/** What is wrong now among some nodes. */
export interface SignalReading {
  readonly grouped: readonly GroupedSignal[];
  readonly pending: readonly PendingSignal[];
  /** The latest executed run of each job looked at (to tell whether a failure is over). */
  readonly latestRuns: ReadonlyMap<number, RunOutcome>;
  /** The datasets looked at that have a failing assertion. */
  readonly failingDatasets: ReadonlySet<number>;
}

/** The nodes to look at. */
export interface SignalScope {
  readonly jobs: ReadonlySet<number>;
  readonly datasets: ReadonlySet<number>;
}

const FAILED_STATES: ReadonlySet<string> = new Set(['FAILED', 'ABORTED']);
const isFailedRun = (run: RunOutcome | undefined): run is RunOutcome =>
  run !== undefined && run.execution === 'executed' && FAILED_STATES.has(run.state);

/**
 * Whether a run a commit wrote can raise a signal of its job there and then: it executed and failed. Any other
 * change (a start, a completion, a skip) can only end a signal already open or pending, or make a run overdue;
 * the engine looks at open roots and pending signals on every reconciliation, and at running runs on its timer.
 */
export const mayRaiseSignal = (run: Pick<RunRow, 'aggregate' | 'execution'>): boolean =>
  (run.execution ?? 'executed') === 'executed' && FAILED_STATES.has(runStateOf(run.aggregate));

/** Completed runs (or nominal times) a job needs before it can be overdue (or missing). */
const HISTORY_MIN = 3;
const TIME_FLOOR_MS = 5 * 60_000;

/** How long after its start a run is overdue, from the durations of the job's last completed runs. */
export function overdueAfterMs(durations: readonly number[]): number | undefined {
  if (durations.length < HISTORY_MIN) return undefined;
  return Math.max(2 * Math.max(...durations), TIME_FLOOR_MS);
}

/**
 * The run a schedule expects next and when it counts as missing, from a job's nominal start times (newest first):
 * the next is the newest plus the median interval between them; it is missing half an interval later (at least
 * 5 minutes). Undefined without a schedule (fewer than 3 times, or an interval under a minute).
 */
export function missingRun(nominals: readonly Date[]): { expected: number; missingAt: number } | undefined {
  if (nominals.length < HISTORY_MIN) return undefined;
  const gaps = nominals.slice(1).map((time, i) => nominals[i]!.getTime() - time.getTime());
  const interval = median(gaps);
  if (!(interval >= 60_000)) return undefined;
  const expected = nominals[0]!.getTime() + interval;
  return { expected, missingAt: expected + Math.max(interval / 2, TIME_FLOOR_MS) };
}

/** The visible job or dataset with this id, with its names; undefined when it is unknown or hidden. */
export function signalNode(state: ReadModel, type: 'job' | 'dataset', id: number): SignalNode | undefined {
  const row = type === 'job' ? state.jobsById.get(id) : state.datasetsById.get(id);
  if (row === undefined || row.isHidden) return undefined;
  const namespace = state.namespacesById.get(row.namespaceId);
  if (namespace === undefined || namespace.isHidden) return undefined;
  return {
    type,
    id,
    namespace: namespace.name,
    name: row.name,
    nodeId: type === 'job' ? jobNodeId(state, id) : datasetNodeId(state, id),
  };
}

/** The node of a job or dataset nodeId, when it is visible. */
export function nodeOfId(state: ReadModel, nodeId: string): SignalNode | undefined {
  let parsed;
  try {
    parsed = parseNodeId(nodeId);
  } catch {
    return undefined;
  }
  if (parsed.type !== 'job' && parsed.type !== 'dataset') return undefined;
  const namespace = state.namespaces.get(parsed.namespace);
  if (namespace === undefined) return undefined;
  const row = (parsed.type === 'job' ? state.jobs : state.datasets).get(entityKey(namespace.id, parsed.name));
  return row === undefined ? undefined : signalNode(state, parsed.type, row.id);
}

/** What rules are matched against, for a signal. */
export function subjectOf(signal: Pick<Signal, 'kind' | 'node' | 'reporter'>): SignalSubject {
  return signal.node.type === 'job'
    ? { kind: signal.kind, namespace: signal.node.namespace, job: signal.node.name }
    : {
        kind: signal.kind,
        namespace: signal.node.namespace,
        dataset: signal.node.name,
        ...(signal.reporter === undefined ? {} : { job: signal.reporter.name }),
      };
}

/**
 * When each failed run was first seen, epoch ms: a retry grace runs from the run's end or from then, whichever is
 * later, so that a failure that arrives late (a backfill, a producer that buffered its events) still waits for
 * its retry. Kept by the engine in memory, for the failures of the last grace or so; after a restart a failure
 * not yet told of waits its grace again.
 */
export type FirstSeen = Map<string, { readonly at: number; used: number }>;

/** The signal of a failed run, or its pending form while its grace lasts; undefined when no rule alerts on it. */
function runSignal(
  config: AlertsConfig,
  node: SignalNode,
  run: { uuid: string; endedAt: Date | null; errorMessage: string | null },
  nowMs: number,
  firstSeen: FirstSeen,
): { signal: Signal } | { pending: PendingSignal } | undefined {
  const at = run.endedAt ?? new Date(nowMs);
  const signal: Signal = {
    key: `run:${run.uuid}`,
    kind: 'run_failed',
    node,
    at,
    runUuid: run.uuid,
    errorMessage: run.errorMessage,
  };
  const grace = retryGraceMs(config, subjectOf(signal));
  if (grace === undefined) return undefined;
  let seen = firstSeen.get(run.uuid);
  if (seen === undefined) firstSeen.set(run.uuid, (seen = { at: nowMs, used: nowMs }));
  seen.used = nowMs;
  const dueAt = Math.max(at.getTime(), seen.at) + grace;
  return dueAt > nowMs ? { pending: { node, runUuid: run.uuid, dueAt } } : { signal };
}

/**
 * Reads the signals among the nodes of `scope` and groups each under its root. Two queries for the scope, then
 * per failed run one for its children and per signal one root-cause walk (six queries): failures are few.
 */
export async function readSignals(
  source: AnalysisSource,
  config: AlertsConfig,
  scope: SignalScope,
  nowMs: number,
  firstSeen: FirstSeen,
  {
    missing = false,
    known,
  }: {
    readonly missing?: boolean;
    /** Which of these signal keys are grouped into an incident already: those are left out of `grouped`. */
    readonly known?: (keys: readonly string[]) => Promise<ReadonlySet<string>>;
  } = {},
): Promise<SignalReading> {
  const { db, state } = source;
  const now = new Date(nowMs);
  const jobIds = [...scope.jobs].filter((id) => signalNode(state, 'job', id) !== undefined);
  const datasetIds = [...scope.datasets].filter((id) => signalNode(state, 'dataset', id) !== undefined);
  const [latestRuns, failedAssertions] = await Promise.all([
    latestRunOfJobs(db, jobIds, now),
    latestFailedAssertions(db, datasetIds, now),
  ]);

  const signals: Signal[] = [];
  const pending: PendingSignal[] = [];
  const pendingRuns = new Set<string>();
  for (const [jobId, run] of latestRuns) {
    const node = signalNode(state, 'job', jobId);
    if (node === undefined || !isFailedRun(run)) continue;
    const found = runSignal(config, node, run, nowMs, firstSeen);
    if (found === undefined) continue;
    if ('pending' in found) {
      pending.push(found.pending);
      pendingRuns.add(run.uuid);
    } else signals.push(found.signal);
  }
  const alerted = (signal: Signal) => matchingRules(config, subjectOf(signal)).length > 0;
  const running = [...latestRuns.values()].filter(
    (run) => run.execution === 'executed' && run.state === 'RUNNING',
  );
  const [durations, nominals] = await Promise.all([
    completedDurations(
      db,
      running.map((run) => run.jobId),
      10,
    ),
    missing ? nominalStarts(db, jobIds, 10) : new Map<number, Date[]>(),
  ]);
  for (const run of running) {
    const node = signalNode(state, 'job', run.jobId);
    const after = overdueAfterMs(durations.get(run.jobId) ?? []);
    if (node === undefined || after === undefined || run.startedAt === null) continue;
    const dueAt = run.startedAt.getTime() + after;
    if (dueAt > nowMs) continue;
    const signal: Signal = {
      key: `overdue:${run.uuid}`,
      kind: 'run_overdue',
      node,
      at: new Date(dueAt),
      runUuid: run.uuid,
      errorMessage: null,
      expectedBy: new Date(dueAt),
    };
    if (alerted(signal)) signals.push(signal);
  }
  for (const [jobId, times] of nominals) {
    const node = signalNode(state, 'job', jobId);
    const expected = missingRun(times);
    const latest = latestRuns.get(jobId);
    if (node === undefined || expected === undefined || expected.missingAt > nowMs) continue;
    // A run under way or started since the expected time (even one without a nominal time) is not missing.
    const started = latest?.startedAt?.getTime();
    if (latest?.state === 'RUNNING' || (started !== undefined && started >= expected.expected)) continue;
    const signal: Signal = {
      key: `missing:${jobId}:${new Date(expected.expected).toISOString()}`,
      kind: 'run_missing',
      node,
      at: new Date(expected.missingAt),
      // No run: the one expected never came.
      runUuid: '',
      errorMessage: null,
      expectedBy: new Date(expected.expected),
    };
    if (alerted(signal)) signals.push(signal);
  }

  const failingDatasets = new Set<number>();
  const reporterRuns = await runOutcomes(db, [...new Set(failedAssertions.map((record) => record.runUuid))]);
  for (const record of failedAssertions) {
    const node = signalNode(state, 'dataset', record.datasetId);
    if (node === undefined) continue;
    failingDatasets.add(record.datasetId);
    const reporterJob = reporterRuns.get(record.runUuid)?.jobId;
    const reporter = reporterJob === undefined ? undefined : signalNode(state, 'job', reporterJob);
    const signal: Signal = {
      key: `assertion:${record.datasetId}:${record.identity}:${record.runUuid}`,
      kind: 'assertion_failed',
      node,
      at: record.at,
      runUuid: record.runUuid,
      errorMessage: null,
      assertion: {
        assertion: record.assertion,
        name: record.name,
        column: record.column || null,
        expected: record.expected,
        actual: record.actual,
        runUuid: record.runUuid,
        at: record.at.toISOString(),
      },
      ...(reporter === undefined ? {} : { reporter }),
    };
    if (alerted(signal)) signals.push(signal);
  }

  // Signals already grouped into an incident keep their incident: no walk finds their root again (the walks
  // are the costly part, and an open incident's root stays in every reconciliation's scope).
  if (known !== undefined && signals.length > 0) {
    const grouped = await known(signals.map((signal) => signal.key));
    for (let i = signals.length - 1; i >= 0; i--) if (grouped.has(signals[i]!.key)) signals.splice(i, 1);
  }

  // A failed run with a failed child is explained by the child (or by what explains the child).
  const children = await failedChildRuns(
    db,
    signals.filter((s) => s.kind === 'run_failed').map((s) => s.runUuid),
  );
  const childJobs = [...new Set([...children.values()].flat().map((child) => child.jobId))];
  const childLatest = await latestRunOfJobs(
    db,
    childJobs.filter((id) => !latestRuns.has(id)),
    now,
  );
  const latestOf = (jobId: number) => latestRuns.get(jobId) ?? childLatest.get(jobId);

  const grouped: GroupedSignal[] = [];
  // A root still in its grace defers what it explains until it is due.
  type Root = Signal | { readonly pendingUntil: number };
  const rootMemo = new Map<string, Promise<Root>>();
  const rootOf = (signal: Signal, depth: number): Promise<Root> => {
    let found = rootMemo.get(signal.key);
    if (found === undefined) {
      found = findRoot(signal, depth);
      rootMemo.set(signal.key, found);
    }
    return found;
  };
  const findRoot = async (signal: Signal, depth: number): Promise<Root> => {
    // A run that is late or did not come is where its own story starts.
    if (depth > 8 || signal.kind === 'run_overdue' || signal.kind === 'run_missing') return signal;
    if (signal.kind === 'run_failed') {
      for (const child of children.get(signal.runUuid) ?? []) {
        const latest = latestOf(child.jobId);
        const node = signalNode(state, 'job', child.jobId);
        // Only a child whose failure stands (no retry of it completed since) explains its parent.
        if (node === undefined || latest?.uuid !== child.uuid || !isFailedRun(latest)) continue;
        const found = runSignal(config, node, latest, nowMs, firstSeen);
        if (found === undefined) continue;
        if ('pending' in found) return { pendingUntil: found.pending.dueAt };
        return rootOf(found.signal, depth + 1);
      }
    }
    const result = await rootCause(source, { kind: signal.node.type, id: signal.node.id }, { at: now });
    const own = result.causes.find(
      (cause) =>
        cause.nodeId === signal.node.nodeId &&
        cause.kind === (signal.kind === 'run_failed' ? 'failedRun' : 'failedAssertion'),
    );
    const explainedBy = own?.explainedBy ?? null;
    if (explainedBy === null) return signal;
    const cause = result.causes.find((c) => c.kind === 'failedRun' && c.nodeId === explainedBy);
    const upstream = cause === undefined ? undefined : upstreamSignal(state, config, cause, nowMs, firstSeen);
    if (upstream === undefined) return signal;
    if ('pending' in upstream) return { pendingUntil: upstream.pending.dueAt };
    return rootOf(upstream.signal, depth + 1);
  };
  for (const signal of signals) {
    const root = await rootOf(signal, 0);
    if ('pendingUntil' in root) {
      pending.push({ node: signal.node, runUuid: signal.runUuid, dueAt: root.pendingUntil });
      continue;
    }
    grouped.push({ signal, root });
  }
  return { grouped, pending, latestRuns, failingDatasets };
}

/** The signal of a failed run upstream, named by a root-cause cause. */
function upstreamSignal(
  state: ReadModel,
  config: AlertsConfig,
  cause: Cause,
  nowMs: number,
  firstSeen: FirstSeen,
): { signal: Signal } | { pending: PendingSignal } | undefined {
  const node = nodeOfId(state, cause.nodeId);
  if (node === undefined || cause.run === null) return undefined;
  return runSignal(
    config,
    node,
    {
      uuid: cause.run.id,
      endedAt: cause.run.endedAt === null ? null : new Date(cause.run.endedAt),
      errorMessage: cause.errorMessage,
    },
    nowMs,
    firstSeen,
  );
}
