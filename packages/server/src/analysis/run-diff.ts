/**
 * Run diff: what differs between two runs (usually of one job): the dataset versions they read and wrote and
 * the schema changes between them, assertions that flipped, duration and row counts, datasets added and removed.
 */
import { HeadwaterError } from '../core/errors.js';
import { Closed, Nullable, StringEnum, Time, Type, type Static } from '../core/json-schema.js';
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
import { diffSchemas, SchemaChangeSchema } from './schema.js';

/** One of the two runs. */
export const RunSummarySchema = Closed({
  id: Type.String(),
  job: Type.String(),
  state: Type.String(),
  startedAt: Nullable(Time()),
  endedAt: Nullable(Time()),
  durationMs: Nullable(Type.Integer(), { description: 'endedAt - startedAt, null while either is unknown' }),
});
export type RunSummary = Static<typeof RunSummarySchema>;

/** A change of a number between the runs; `change` is null unless both are known. */
export const NumberChangeSchema = Closed({
  from: Nullable(Type.Number()),
  to: Nullable(Type.Number()),
  change: Nullable(Type.Number()),
});
export type NumberChange = Static<typeof NumberChangeSchema>;

/** How one input or output differs between the runs. */
export const DatasetDiffSchema = Closed({
  dataset: Type.String(),
  status: StringEnum(['added', 'removed', 'unchanged', 'versionChanged'], {
    description:
      'added: only the second run named it; removed: only the first; versionChanged: both, other versions',
  }),
  fromVersion: Nullable(Type.String()),
  toVersion: Nullable(Type.String()),
  schemaChange: Nullable(SchemaChangeSchema, {
    description: 'Between the two versions, when both runs named the dataset with different versions',
  }),
  rowCount: NumberChangeSchema,
});
export type DatasetDiff = Static<typeof DatasetDiffSchema>;

/** An assertion that passed in one run and failed in the other. */
export const FlippedAssertionSchema = Closed({
  dataset: Type.String(),
  assertion: Type.String(),
  column: Type.String(),
  name: Nullable(Type.String(), {
    description:
      "The assertion's name, when the producer gave one (two of one type on one column differ by it)",
  }),
  from: Type.Boolean(),
  to: Type.Boolean(),
});
export type FlippedAssertion = Static<typeof FlippedAssertionSchema>;

/** A dataset only one run read (input) or wrote (output), as an edge of the job. */
const edgeChange = () => Closed({ direction: StringEnum(['input', 'output']), dataset: Type.String() });

/** The answer of a run diff. */
export const RunDiffResultSchema = Closed({
  from: RunSummarySchema,
  to: RunSummarySchema,
  sameJob: Type.Boolean(),
  duration: NumberChangeSchema,
  inputs: Type.Array(DatasetDiffSchema),
  outputs: Type.Array(DatasetDiffSchema),
  edges: Closed(
    { added: Type.Array(edgeChange()), removed: Type.Array(edgeChange()) },
    { description: 'Datasets only one run read (input) or wrote (output), as edges of the job' },
  ),
  assertions: Type.Array(FlippedAssertionSchema),
});
export type RunDiffResult = Static<typeof RunDiffResultSchema>;

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
