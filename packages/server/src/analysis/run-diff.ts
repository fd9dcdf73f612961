/**
 * Run diff: what differs between two runs (usually of one job): the dataset versions they read and wrote and
 * the schema changes between them, assertions that flipped, duration and row counts, datasets added and removed.
 */
import { HeadwaterError } from '../core/errors.js';
import {
  runAssertions,
  runIoDetails,
  runOutcomes,
  type AssertionRecord,
  type RunIoDetail,
  type RunOutcome,
} from '../store/queries/analysis.js';
import type { ReadModel } from '../store/read-model.js';
import { compareText, datasetNodeId, jobNodeId, type AnalysisSource } from './context.js';
import { diffSchemas, type SchemaChange } from './schema.js';

/** One of the two runs. */
export interface RunSummary {
  readonly id: string;
  readonly job: string;
  readonly state: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  /** endedAt - startedAt, null while either is unknown. */
  readonly durationMs: number | null;
}

/** A change of a number between the runs; `change` is null unless both are known. */
export interface NumberChange {
  readonly from: number | null;
  readonly to: number | null;
  readonly change: number | null;
}

/** How one input or output differs between the runs. */
export interface DatasetDiff {
  readonly dataset: string;
  /** added: only the second run named it; removed: only the first; versionChanged: both, other versions. */
  readonly status: 'added' | 'removed' | 'unchanged' | 'versionChanged';
  readonly fromVersion: string | null;
  readonly toVersion: string | null;
  /** Between the two versions, when both runs named the dataset with different versions. */
  readonly schemaChange: SchemaChange | null;
  /** outputStatistics (outputs), inputStatistics or dataQualityMetrics (inputs) rowCount. */
  readonly rowCount: NumberChange;
}

/** An assertion that passed in one run and failed in the other. */
export interface FlippedAssertion {
  readonly dataset: string;
  readonly assertion: string;
  readonly column: string;
  /** The assertion's name, when the producer gave one (two of one type on one column differ by it). */
  readonly name: string | null;
  readonly from: boolean;
  readonly to: boolean;
}

/** The answer of a run diff. */
export interface RunDiffResult {
  readonly from: RunSummary;
  readonly to: RunSummary;
  readonly sameJob: boolean;
  readonly duration: NumberChange;
  readonly inputs: DatasetDiff[];
  readonly outputs: DatasetDiff[];
  /** Datasets only one run read (input) or wrote (output), as edges of the job. */
  readonly edges: {
    readonly added: { readonly direction: 'input' | 'output'; readonly dataset: string }[];
    readonly removed: { readonly direction: 'input' | 'output'; readonly dataset: string }[];
  };
  readonly assertions: FlippedAssertion[];
}

const numberChange = (from: number | null, to: number | null): NumberChange => ({
  from,
  to,
  change: from !== null && to !== null ? to - from : null,
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The row count a run reported for one of its datasets. */
export function rowCountOf(io: RunIoDetail | undefined): number | null {
  if (!io) return null;
  const names = io.direction === 1 ? ['outputStatistics'] : ['inputStatistics', 'dataQualityMetrics'];
  for (const name of names) {
    const facet = io.facets[name];
    if (isObject(facet) && typeof facet.rowCount === 'number') return facet.rowCount;
  }
  return null;
}

function summary(source: AnalysisSource, run: RunOutcome): RunSummary {
  return {
    id: run.uuid,
    job: jobNodeId(source.state, run.jobId),
    state: run.state,
    startedAt: run.startedAt?.toISOString() ?? null,
    endedAt: run.endedAt?.toISOString() ?? null,
    durationMs: run.startedAt && run.endedAt ? run.endedAt.getTime() - run.startedAt.getTime() : null,
  };
}

/** The assertions (by dataset and identity) that passed in `before` and failed in `after`, or back. */
export function flippedAssertions(
  state: ReadModel,
  before: readonly AssertionRecord[],
  after: readonly AssertionRecord[],
): FlippedAssertion[] {
  const key = (a: AssertionRecord) => `${a.datasetId}\u0000${a.identity}`;
  const earlier = new Map(before.map((a) => [key(a), a]));
  const flipped: FlippedAssertion[] = [];
  for (const later of after) {
    const previous = earlier.get(key(later));
    if (previous && previous.success !== later.success) {
      flipped.push({
        dataset: datasetNodeId(state, later.datasetId),
        assertion: later.assertion,
        column: later.column,
        name: later.name,
        from: previous.success,
        to: later.success,
      });
    }
  }
  return flipped.sort(
    (a, b) =>
      compareText(a.dataset, b.dataset) ||
      compareText(a.assertion, b.assertion) ||
      compareText(a.column, b.column) ||
      compareText(a.name ?? '', b.name ?? ''),
  );
}

/** Compares two runs (three queries). Throws NOT_FOUND naming a run that does not exist. */
export async function runDiff(source: AnalysisSource, fromId: string, toId: string): Promise<RunDiffResult> {
  const { db, state } = source;
  const [runs, io, assertions] = await Promise.all([
    runOutcomes(db, [fromId, toId]),
    runIoDetails(db, [fromId, toId]),
    runAssertions(db, [fromId, toId]),
  ]);
  const find = (id: string) => {
    const run = runs.get(id);
    if (!run) {
      throw new HeadwaterError(
        'NOT_FOUND',
        `Run ${id} not found. List a job's runs with GET /api/v1/namespaces/{namespace}/jobs/{job}/runs.`,
      );
    }
    return run;
  };
  const from = find(fromId);
  const to = find(toId);
  const fromSummary = summary(source, from);
  const toSummary = summary(source, to);

  const edges: RunDiffResult['edges'] = { added: [], removed: [] };
  const datasetsOf = (direction: number): DatasetDiff[] => {
    const before = new Map(
      io.filter((e) => e.runUuid === fromId && e.direction === direction).map((e) => [e.datasetId, e]),
    );
    const after = new Map(
      io.filter((e) => e.runUuid === toId && e.direction === direction).map((e) => [e.datasetId, e]),
    );
    const ids = [...new Set([...before.keys(), ...after.keys()])];
    const diffs = ids.map((id): DatasetDiff => {
      const a = before.get(id);
      const b = after.get(id);
      const dataset = datasetNodeId(state, id);
      const status = !a ? 'added' : !b ? 'removed' : a.version === b.version ? 'unchanged' : 'versionChanged';
      if (status === 'added' || status === 'removed') {
        edges[status].push({ direction: direction === 0 ? 'input' : 'output', dataset });
      }
      return {
        dataset,
        status,
        fromVersion: a?.version ?? null,
        toVersion: b?.version ?? null,
        schemaChange: status === 'versionChanged' ? diffSchemas(a!.fields, b!.fields) : null,
        rowCount: numberChange(rowCountOf(a), rowCountOf(b)),
      };
    });
    return diffs.sort((x, y) => compareText(x.dataset, y.dataset));
  };
  const inputs = datasetsOf(0);
  const outputs = datasetsOf(1);
  for (const list of [edges.added, edges.removed]) {
    list.sort((a, b) => compareText(a.direction, b.direction) || compareText(a.dataset, b.dataset));
  }

  const flipped = flippedAssertions(
    state,
    assertions.filter((a) => a.runUuid === fromId),
    assertions.filter((a) => a.runUuid === toId),
  );
  return {
    from: fromSummary,
    to: toSummary,
    sameJob: from.jobId === to.jobId,
    duration: numberChange(fromSummary.durationMs, toSummary.durationMs),
    inputs,
    outputs,
    edges,
    assertions: flipped,
  };
}
