/**
 * Graph diff: the lineage of a node at two event times, compared. Nodes and edges added and removed, and for
 * what was there both times: dataset versions with their schema changes and row counts, the latest run of each
 * job (state and duration), quality assertions that flipped. Both sides are read from the history (see
 * store/queries/history.ts), so each is what a store holding only the events up to that time would show.
 */
import { HeadwaterError } from '../core/errors.js';
import { Closed, Nullable, StringEnum, Time, Type, type Static } from '../core/json-schema.js';
import {
  LINEAGE_DIRECTIONS,
  type GraphEdge,
  type GraphNode,
  type LineageDirection,
  type Subgraph,
} from '../read-model/lineage-graph.js';
import { runStartedAt } from '../model/run-state.js';
import { latestAssertions } from '../store/queries/analysis.js';
import {
  datasetsAsOf,
  jobsAsOf,
  latestRowCounts,
  namedBetween,
  runsOfJobsAsOf,
  type RunAsOf,
} from '../store/queries/history.js';
import { compareText, datasetNodeId, jobNodeId, type AnalysisSource } from './context.js';
import {
  FlippedAssertionSchema,
  NumberChangeSchema,
  flippedAssertions,
  type NumberChange,
} from './run-diff.js';
import { diffSchemas, SchemaChangeSchema } from './schema.js';

/** An edge of the graph, in data-flow direction, by nodeIds. */
export const EdgeSchema = Closed({ origin: Type.String(), destination: Type.String() });
export type EdgeJson = Static<typeof EdgeSchema>;

/** A dataset in both graphs whose version or row count changed. */
export const DatasetChangeSchema = Closed({
  dataset: Type.String(),
  fromVersion: Nullable(Type.String()),
  toVersion: Nullable(Type.String()),
  schemaChange: Nullable(SchemaChangeSchema, { description: 'Between the two versions, when they differ' }),
  rowCount: Closed(NumberChangeSchema.properties, { description: 'Of the newest write by each time' }),
});
export type DatasetChange = Static<typeof DatasetChangeSchema>;

/** The latest run of a job at one of the two times. */
export const RunAtTimeSchema = Closed({
  id: Type.String(),
  state: Type.String(),
  startedAt: Nullable(Time()),
  endedAt: Nullable(Time()),
  durationMs: Nullable(Type.Integer()),
});
export type RunAtTime = Static<typeof RunAtTimeSchema>;

/** A job in both graphs whose latest run differs. */
export const JobChangeSchema = Closed({
  job: Type.String(),
  from: Nullable(RunAtTimeSchema),
  to: Nullable(RunAtTimeSchema),
  duration: NumberChangeSchema,
});
export type JobChange = Static<typeof JobChangeSchema>;

/** The answer of a graph diff. */
export const GraphDiffResultSchema = Closed({
  nodeId: Type.String(),
  from: Time(),
  to: Time(),
  depth: Type.Integer(),
  direction: StringEnum(LINEAGE_DIRECTIONS),
  nodes: Closed({
    added: Type.Array(Type.String()),
    removed: Type.Array(Type.String()),
    unchanged: Type.Integer(),
  }),
  edges: Closed({
    added: Type.Array(EdgeSchema),
    removed: Type.Array(EdgeSchema),
    unchanged: Type.Integer(),
  }),
  datasets: Type.Array(DatasetChangeSchema),
  jobs: Type.Array(JobChangeSchema),
  assertions: Type.Array(FlippedAssertionSchema),
});
export type GraphDiffResult = Static<typeof GraphDiffResultSchema>;

/** What to compare. */
export interface GraphDiffQuery {
  readonly start: GraphNode;
  readonly from: Date;
  readonly to: Date;
  readonly depth: number;
  readonly direction: LineageDirection;
}

const numberChange = (from: number | null, to: number | null): NumberChange => ({
  from,
  to,
  change: from !== null && to !== null ? to - from : null,
});

function runAtTime(run: RunAsOf | undefined): RunAtTime | null {
  if (!run) return null;
  const started = runStartedAt(run.aggregate);
  const ended = run.aggregate.terminal?.at ?? null;
  return {
    id: run.uuid,
    state: run.aggregate.terminal?.state ?? (started === null ? 'NEW' : 'RUNNING'),
    startedAt: started === null ? null : new Date(started).toISOString(),
    endedAt: ended === null ? null : new Date(ended).toISOString(),
    durationMs: started !== null && ended !== null ? ended - started : null,
  };
}

const sameRun = (a: RunAtTime | null, b: RunAtTime | null) =>
  a?.id === b?.id && a?.state === b?.state && a?.startedAt === b?.startedAt && a?.endedAt === b?.endedAt;

/** Compares the lineage of `query.start` at two times (a fixed number of queries per side). */
export async function graphDiff(source: AnalysisSource, query: GraphDiffQuery): Promise<GraphDiffResult> {
  const { db, state, graph } = source;
  const { start, from, to, depth, direction } = query;
  if (from.getTime() > to.getTime()) {
    throw new HeadwaterError('BAD_REQUEST', '`from` must not be later than `to`.');
  }
  const existed = async (at: Date) =>
    (start.kind === 'dataset'
      ? await datasetsAsOf(db, [start.id], at)
      : await jobsAsOf(db, [start.id], at)
    ).has(start.id);
  const [existedBefore, existsAfter] = await Promise.all([existed(from), existed(to)]);
  if (!existsAfter) {
    throw new HeadwaterError('NOT_FOUND', `The node did not exist at ${to.toISOString()}.`);
  }
  const nothing: Subgraph = { datasets: new Set(), jobs: new Set(), edges: [] };
  const [before, after] = await Promise.all([
    existedBefore ? graph.traverseAsOf(db, start, depth, direction, from.getTime()) : nothing,
    graph.traverseAsOf(db, start, depth, direction, to.getTime()),
  ]);
  const idOf = (node: GraphNode) =>
    node.kind === 'dataset' ? datasetNodeId(state, node.id) : jobNodeId(state, node.id);
  const startId = idOf(start);

  const nodeIds = (subgraph: Subgraph) =>
    new Set([
      ...[...subgraph.datasets].map((id) => datasetNodeId(state, id)),
      ...[...subgraph.jobs].map((id) => jobNodeId(state, id)),
    ]);
  const edgeKey = (edge: GraphEdge) => `${idOf(edge.origin)}\u0000${idOf(edge.destination)}`;
  const edgesOf = (subgraph: Subgraph) => new Map(subgraph.edges.map((edge) => [edgeKey(edge), edge]));
  const [nodesBefore, nodesAfter] = [nodeIds(before), nodeIds(after)];
  const [edgesBefore, edgesAfter] = [edgesOf(before), edgesOf(after)];
  const only = <T>(a: Map<string, T> | Set<string>, b: Map<string, T> | Set<string>) =>
    [...a.keys()].filter((key) => !b.has(key)).sort(compareText);
  const edgeJson = (key: string): EdgeJson => {
    const [origin, destination] = key.split('\u0000') as [string, string];
    return { origin, destination };
  };

  // What was there both times can only have changed if an event named it in between.
  const [datasets, jobs] = await Promise.all([
    namedBetween(
      db,
      'dataset',
      [...after.datasets].filter((id) => before.datasets.has(id)),
      from,
      to,
    ),
    namedBetween(
      db,
      'job',
      [...after.jobs].filter((id) => before.jobs.has(id)),
      from,
      to,
    ),
  ]);
  const [versionsFrom, versionsTo, rowsFrom, rowsTo, runsFrom, runsTo, assertionsFrom, assertionsTo] =
    await Promise.all([
      datasetsAsOf(db, datasets, from),
      datasetsAsOf(db, datasets, to),
      latestRowCounts(db, datasets, from),
      latestRowCounts(db, datasets, to),
      runsOfJobsAsOf(db, jobs, from, 1),
      runsOfJobsAsOf(db, jobs, to, 1),
      latestAssertions(db, datasets, from),
      latestAssertions(db, datasets, to),
    ]);

  const datasetChanges: DatasetChange[] = [];
  for (const id of datasets) {
    const a = versionsFrom.get(id);
    const b = versionsTo.get(id);
    const fromVersion = a?.version ?? null;
    const toVersion = b?.version ?? null;
    const rowCount = numberChange(rowsFrom.get(id) ?? null, rowsTo.get(id) ?? null);
    if (fromVersion === toVersion && rowCount.from === rowCount.to) continue;
    datasetChanges.push({
      dataset: datasetNodeId(state, id),
      fromVersion,
      toVersion,
      schemaChange: fromVersion === toVersion ? null : diffSchemas(a?.fields, b?.fields),
      rowCount,
    });
  }
  datasetChanges.sort((x, y) => compareText(x.dataset, y.dataset));

  const jobChanges: JobChange[] = [];
  for (const id of jobs) {
    const a = runAtTime(runsFrom.get(id)?.runs[0]);
    const b = runAtTime(runsTo.get(id)?.runs[0]);
    if (sameRun(a, b)) continue;
    jobChanges.push({
      job: jobNodeId(state, id),
      from: a,
      to: b,
      duration: numberChange(a?.durationMs ?? null, b?.durationMs ?? null),
    });
  }
  jobChanges.sort((x, y) => compareText(x.job, y.job));

  const flipped = flippedAssertions(state, assertionsFrom, assertionsTo);

  return {
    nodeId: startId,
    from: from.toISOString(),
    to: to.toISOString(),
    depth,
    direction,
    nodes: {
      added: only(nodesAfter, nodesBefore),
      removed: only(nodesBefore, nodesAfter),
      unchanged: [...nodesAfter].filter((id) => nodesBefore.has(id)).length,
    },
    edges: {
      added: only(edgesAfter, edgesBefore).map(edgeJson),
      removed: only(edgesBefore, edgesAfter).map(edgeJson),
      unchanged: [...edgesAfter.keys()].filter((id) => edgesBefore.has(id)).length,
    },
    datasets: datasetChanges,
    jobs: jobChanges,
    assertions: flipped,
  };
}
