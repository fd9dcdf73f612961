/**
 * Walks of the lineage graphs that keep, for every node reached, its distance from the start and one shortest
 * path to it. Pure: they read only the graph views. Neighbours are expanded in nodeId order, so the path kept
 * for a node (the first shortest one in that order) is the same on every run and every backend.
 */
import type { ColumnTransformation, FieldRef } from '../graph/column-graph.js';
import {
  analysisNodeId,
  compareText,
  type AnalysisNode,
  type ColumnGraphView,
  type JobGraphView,
} from './context.js';
import type { ModelState } from '../store/model-state.js';

/** Which way a walk goes: against the data flow (to producers) or with it (to consumers). */
export type WalkDirection = 'upstream' | 'downstream';

/** A dataset or job a walk reached. */
export interface Reached {
  readonly node: { readonly kind: 'dataset' | 'job'; readonly id: number };
  /** Edges from the start: a dataset's writer is 1 upstream, the writer's inputs 2. */
  readonly distance: number;
  /** From the start to the node, both included. Columns appear in the path of a column walk. */
  readonly path: readonly AnalysisNode[];
}

/** A column a column walk reached. */
export interface ReachedColumn {
  readonly ref: FieldRef;
  /** Column hops from the start (one hop is one job). */
  readonly distance: number;
  /** Columns from the start to this one, both included. */
  readonly path: readonly FieldRef[];
  /** The transformations of each hop of `path`: `transformations[i]` joins `path[i]` and `path[i + 1]`. */
  readonly transformations: readonly (readonly ColumnTransformation[])[];
}

const nodeKey = (node: AnalysisNode): string =>
  node.kind === 'datasetField' ? `f:${node.datasetId}:${node.field}` : `${node.kind}:${node.id}`;

/**
 * Breadth-first walk of the job-level graph from a dataset or job, every node once at its smallest distance.
 * The start itself is the first entry, at distance 0.
 */
export function walkJobGraph(
  state: ModelState,
  graph: JobGraphView,
  start: { kind: 'dataset' | 'job'; id: number },
  direction: WalkDirection,
): Reached[] {
  const up = direction === 'upstream';
  const reached: Reached[] = [{ node: start, distance: 0, path: [start] }];
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
        next.push({ node, distance, path: [...from.path, node] });
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
  state: ModelState,
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
    path: [ref],
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
          path: [...from.path, { datasetId: ref.datasetId, field: ref.field }],
          transformations: [...from.transformations, hop],
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
  state: ModelState,
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
  const fieldPath = (column: ReachedColumn): AnalysisNode[] => {
    const path: AnalysisNode[] = [];
    column.path.forEach((ref, index) => {
      if (index > 0) {
        const job = connectingJobs(state, graph, column.path[index - 1]!, ref, up)[0];
        if (job !== undefined) path.push({ kind: 'job', id: job });
      }
      path.push({ kind: 'datasetField', ...ref });
    });
    return path;
  };
  // Columns come in (distance, nodeId) order, so the first offer for a node is its shortest, first path.
  for (const column of columns) {
    const path = fieldPath(column);
    offer({ node: { kind: 'dataset', id: column.ref.datasetId }, distance: 2 * column.distance, path });
    const previous = column.path.at(-2);
    if (previous) {
      const prefix = path.slice(0, -1);
      if (prefix.at(-1)?.kind === 'job') prefix.pop();
      for (const job of connectingJobs(state, graph, previous, column.ref, up)) {
        offer({
          node: { kind: 'job', id: job },
          distance: 2 * column.distance - 1,
          path: [...prefix, { kind: 'job', id: job }],
        });
      }
    }
  }
  return [...best.values()].sort(
    (a, b) =>
      a.distance - b.distance || compareText(analysisNodeId(state, a.node), analysisNodeId(state, b.node)),
  );
}

/**
 * Jobs between two columns of a hop, in nodeId order: the jobs that write the output column's dataset and read
 * the input column's. `up` says `from` is the output (an upstream hop).
 */
export function connectingJobs(
  state: ModelState,
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

function sortNodes<T extends { kind: 'dataset' | 'job'; id: number }>(state: ModelState, nodes: T[]): T[] {
  return nodes
    .map((node) => ({ node, id: analysisNodeId(state, node) }))
    .sort((a, b) => compareText(a.id, b.id))
    .map(({ node }) => node);
}
