/**
 * Walks of the lineage graphs that keep, for every node reached, its distance from the start and one shortest
 * path to it. Pure: they read only the graph views. Neighbours are expanded in nodeId order, so the path kept
 * for a node (the first shortest one in that order) is the same on every run and every backend. Paths are kept
 * as links back to the start (trails), which share their prefixes: a walk costs what it reaches, not what it
 * reaches times its depth.
 */
import type { ColumnTransformation, FieldRef } from '../read-model/column-graph.js';
import {
  analysisNodeId,
  compareText,
  type AnalysisNode,
  type ColumnGraphView,
  type JobGraphView,
} from './context.js';
import type { ReadModel } from '../store/read-model.js';

/** Which way a walk goes: against the data flow (to producers) or with it (to consumers). */
export type WalkDirection = 'upstream' | 'downstream';

/** The last node of a path, linked to the one before it (null at the start). */
export interface Trail {
  readonly node: AnalysisNode;
  readonly previous: Trail | null;
}

/** The nodes of a trail, from the start. */
export function trailNodes(trail: Trail): AnalysisNode[] {
  const nodes: AnalysisNode[] = [];
  for (let step: Trail | null = trail; step; step = step.previous) nodes.push(step.node);
  return nodes.reverse();
}

/** A dataset or job a walk reached. */
export interface Reached {
  readonly node: { readonly kind: 'dataset' | 'job'; readonly id: number };
  /** Edges from the start: a dataset's writer is 1 upstream, the writer's inputs 2. */
  readonly distance: number;
  /** From the start to the node. Columns stand for their datasets in the trails of a column walk. */
  readonly trail: Trail;
}

/** A column a column walk reached. */
export interface ReachedColumn {
  readonly ref: FieldRef;
  /** Column hops from the start (one hop is one job). */
  readonly distance: number;
  /** The column one hop closer to the start (null for a start). */
  readonly previous: ReachedColumn | null;
  /** The transformations of the hop between `previous` and this column. */
  readonly transformations: readonly ColumnTransformation[];
}

/** The columns from the start to `column`, both included. */
export function columnPath(column: ReachedColumn): ReachedColumn[] {
  const path: ReachedColumn[] = [];
  for (let step: ReachedColumn | null = column; step; step = step.previous) path.push(step);
  return path.reverse();
}

const nodeKey = (node: AnalysisNode): string =>
  node.kind === 'datasetField' ? `f:${node.datasetId}:${node.field}` : `${node.kind}:${node.id}`;

/**
 * Breadth-first walk of the job-level graph from a dataset or job, every node once at its smallest distance.
 * The start itself is the first entry, at distance 0.
 */
export function walkJobGraph(
  state: ReadModel,
  graph: JobGraphView,
  start: { kind: 'dataset' | 'job'; id: number },
  direction: WalkDirection,
): Reached[] {
  const up = direction === 'upstream';
  const reached: Reached[] = [{ node: start, distance: 0, trail: { node: start, previous: null } }];
  const seen = new Set([nodeKey(start)]);
  let frontier = reached;
  for (let distance = 1; frontier.length > 0; distance++) {
    const next: Reached[] = [];
    for (const from of frontier) {
      const neighbours: { kind: 'dataset' | 'job'; id: number }[] =
        from.node.kind === 'dataset'
          ? graph.jobsOf(from.node.id, up ? 1 : 0).map((id) => ({ kind: 'job', id }))
          : graph.datasetsOf(from.node.id, up ? 0 : 1).map((id) => ({ kind: 'dataset', id }));
      for (const node of sortNodes(state, neighbours)) {
        const key = nodeKey(node);
        if (seen.has(key)) continue;
        seen.add(key);
        next.push({ node, distance, trail: { node, previous: from.trail } });
      }
    }
    reached.push(...next);
    frontier = next;
  }
  return reached;
}

/**
 * Breadth-first walk of the column graph from `starts` (distance 0), every column once at its smallest
 * distance, in (distance, nodeId) order.
 */
export function walkColumns(
  state: ReadModel,
  columnGraph: ColumnGraphView,
  starts: readonly FieldRef[],
  direction: WalkDirection,
  maxDepth = Number.POSITIVE_INFINITY,
): ReachedColumn[] {
  const key = (ref: FieldRef) => `${ref.datasetId}\u0000${ref.field}`;
  const byId = (refs: readonly FieldRef[]) =>
    refs
      .map((ref) => ({ ref, id: analysisNodeId(state, { kind: 'datasetField', ...ref }) }))
      .sort((a, b) => compareText(a.id, b.id))
      .map(({ ref }) => ref);
  const reached: ReachedColumn[] = byId(starts).map((ref) => ({
    ref,
    distance: 0,
    previous: null,
    transformations: [],
  }));
  const seen = new Set(reached.map((column) => key(column.ref)));
  let frontier = reached;
  for (let distance = 1; distance <= maxDepth && frontier.length > 0; distance++) {
    const next: ReachedColumn[] = [];
    for (const from of frontier) {
      const neighbours =
        direction === 'upstream'
          ? columnGraph.inputsOf(from.ref)
          : columnGraph.outputsOf(from.ref).map((ref) => ({ ...ref, transformations: null }));
      const transformationsOf = new Map(neighbours.map((n) => [key(n), n.transformations] as const));
      for (const ref of byId(neighbours)) {
        if (seen.has(key(ref))) continue;
        seen.add(key(ref));
        const hop =
          transformationsOf.get(key(ref)) ??
          columnGraph.inputsOf(ref).find((input) => key(input) === key(from.ref))?.transformations ??
          [];
        next.push({
          ref: { datasetId: ref.datasetId, field: ref.field },
          distance,
          previous: from,
          transformations: hop,
        });
      }
    }
    // Each level in nodeId order: the order callers list columns in.
    const ids = new Map(
      next.map((column) => [column, analysisNodeId(state, { kind: 'datasetField', ...column.ref })]),
    );
    next.sort((a, b) => compareText(ids.get(a)!, ids.get(b)!));
    reached.push(...next);
    frontier = next;
  }
  return reached;
}

/**
 * The datasets and jobs a column walk passes through, with job-level distances (a column `k` hops away sits
 * in a dataset `2k` edges away; the job between hop `k - 1` and `k` is `2k - 1` away) and paths that show the
 * columns. A job counts when it writes one column of a hop and reads the other's dataset.
 */
export function nodesOfColumnWalk(
  state: ReadModel,
  graph: JobGraphView,
  columns: readonly ReachedColumn[],
  direction: WalkDirection,
): Reached[] {
  const up = direction === 'upstream';
  const best = new Map<string, Reached>();
  const offer = (reached: Reached) => {
    const key = nodeKey(reached.node);
    if (!best.has(key)) best.set(key, reached);
  };
  const jobsBetween = connectingJobsMemo(state, graph);
  // The trail of a column: its predecessor's (which comes first, columns being in distance order), the job
  // between them, then the column.
  const trails = new Map<ReachedColumn, Trail>();
  // Columns come in (distance, nodeId) order, so the first offer for a node is its shortest, first path.
  for (const column of columns) {
    const previous = column.previous;
    const before = previous ? (trails.get(previous) ?? null) : null;
    const jobs = previous ? jobsBetween(previous.ref, column.ref, up) : [];
    const first = jobs[0];
    const viaJob: Trail | null =
      first !== undefined ? { node: { kind: 'job', id: first }, previous: before } : before;
    const trail: Trail = { node: { kind: 'datasetField', ...column.ref }, previous: viaJob };
    trails.set(column, trail);
    offer({ node: { kind: 'dataset', id: column.ref.datasetId }, distance: 2 * column.distance, trail });
    for (const job of jobs) {
      const node = { kind: 'job' as const, id: job };
      offer({ node, distance: 2 * column.distance - 1, trail: { node, previous: before } });
    }
  }
  return [...best.values()].sort(
    (a, b) =>
      a.distance - b.distance || compareText(analysisNodeId(state, a.node), analysisNodeId(state, b.node)),
  );
}

/**
 * {@link connectingJobs}, remembering the answer per pair of datasets: within one analysis, many columns share a
 * hop between the same two datasets.
 */
export function connectingJobsMemo(
  state: ReadModel,
  graph: JobGraphView,
): (from: FieldRef, to: FieldRef, up: boolean) => number[] {
  const memo = new Map<string, number[]>();
  return (from, to, up) => {
    const key = `${from.datasetId}:${to.datasetId}:${up ? 1 : 0}`;
    let jobs = memo.get(key);
    if (!jobs) memo.set(key, (jobs = connectingJobs(state, graph, from, to, up)));
    return jobs;
  };
}

/**
 * Jobs between two columns of a hop, in nodeId order: the jobs that write the output column's dataset and read
 * the input column's. `up` says `from` is the output (an upstream hop).
 */
export function connectingJobs(
  state: ReadModel,
  graph: JobGraphView,
  from: FieldRef,
  to: FieldRef,
  up: boolean,
): number[] {
  const [input, output] = up ? [to, from] : [from, to];
  const readers = new Set(graph.jobsOf(input.datasetId, 0));
  return sortNodes(
    state,
    graph
      .jobsOf(output.datasetId, 1)
      .filter((job) => readers.has(job))
      .map((id) => ({ kind: 'job' as const, id })),
  ).map((node) => node.id);
}

function sortNodes<T extends { kind: 'dataset' | 'job'; id: number }>(state: ReadModel, nodes: T[]): T[] {
  return nodes
    .map((node) => ({ node, id: analysisNodeId(state, node) }))
    .sort((a, b) => compareText(a.id, b.id))
    .map(({ node }) => node);
}
