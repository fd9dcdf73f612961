/**
 * What every analysis reads: the store, the read model (committed names and ids), and the two lineage graphs, seen
 * through narrow views. The views are the seam for time travel: an as-of analysis will pass graphs and a
 * `time.at` of the past, and every module here already bounds its SQL by `time.at`.
 */
import type { DatasetAliases } from '../read-model/aliases.js';
import { HeadwaterError } from '../core/errors.js';
import type { ColumnInput, FieldRef } from '../read-model/column-graph.js';
import type { GraphNode, LineageDirection, Subgraph } from '../read-model/lineage-graph.js';
import type { Queryable } from '../store/db.js';
import { entityKey } from '../store/model-state.js';
import type { ReadModel } from '../store/read-model.js';

/** The job-level lineage an analysis walks (LineageGraph implements it). */
export interface JobGraphView {
  /** Datasets a job reads (0) or writes (1). */
  datasetsOf(jobId: number, direction: 0 | 1): number[];
  /** Jobs that read (0) or write (1) a dataset. */
  jobsOf(datasetId: number, direction: 0 | 1): number[];
  /** The lineage of a node up to `depth` jobs away, now. */
  traverse(start: GraphNode, depth: number, direction: LineageDirection): Subgraph;
  /** The lineage of a node up to `depth` jobs away as of event time `at`, from the store's history. */
  traverseAsOf(
    db: Queryable,
    start: GraphNode,
    depth: number,
    direction: LineageDirection,
    at: number,
  ): Promise<Subgraph>;
}

/** The column-level lineage an analysis walks (ColumnGraph implements it). */
export interface ColumnGraphView {
  fieldsOf(datasetId: number): FieldRef[];
  inputsOf(ref: FieldRef): ColumnInput[];
  outputsOf(ref: FieldRef): FieldRef[];
}

/** The inputs of an analysis. */
export interface AnalysisSource {
  readonly db: Queryable;
  readonly state: ReadModel;
  readonly graph: JobGraphView;
  readonly columnGraph: ColumnGraphView;
}

/**
 * The moment an analysis looks at. `at` is "now" for staleness and bounds every time-based query (writes,
 * assertions, versions, runs later than `at` are ignored).
 */
export interface AnalysisTime {
  readonly at: Date;
}

/** A node an analysis starts from. */
export type AnalysisNode =
  | { readonly kind: 'dataset'; readonly id: number }
  | { readonly kind: 'job'; readonly id: number }
  | { readonly kind: 'datasetField'; readonly datasetId: number; readonly field: string };

/** The nodeId of a dataset. */
export function datasetNodeId(state: ReadModel, id: number): string {
  const cache = state.nodeIds.datasets;
  let nodeId = cache.get(id);
  if (nodeId === undefined) {
    const dataset = state.datasetsById.get(id);
    const namespace = dataset ? (state.namespacesById.get(dataset.namespaceId)?.name ?? '') : '';
    nodeId = `dataset:${namespace}:${dataset?.name ?? `#${id}`}`;
    if (dataset) cache.set(id, nodeId);
  }
  return nodeId;
}

/** The nodeId of a job. */
export function jobNodeId(state: ReadModel, id: number): string {
  const cache = state.nodeIds.jobs;
  let nodeId = cache.get(id);
  if (nodeId === undefined) {
    const job = state.jobsById.get(id);
    const namespace = job ? (state.namespacesById.get(job.namespaceId)?.name ?? '') : '';
    nodeId = `job:${namespace}:${job?.name ?? `#${id}`}`;
    if (job) cache.set(id, nodeId);
  }
  return nodeId;
}

/** The nodeId of a column. */
export function fieldNodeId(state: ReadModel, ref: FieldRef): string {
  let fields = state.nodeIds.fields.get(ref.datasetId);
  if (!fields) state.nodeIds.fields.set(ref.datasetId, (fields = new Map<string, string>()));
  let nodeId = fields.get(ref.field);
  if (nodeId === undefined) {
    nodeId = `datasetField:${datasetNodeId(state, ref.datasetId).slice('dataset:'.length)}:${ref.field}`;
    if (state.datasetsById.has(ref.datasetId)) fields.set(ref.field, nodeId);
  }
  return nodeId;
}

/** The nodeId of any analysis node. */
export function analysisNodeId(state: ReadModel, node: AnalysisNode): string {
  if (node.kind === 'dataset') return datasetNodeId(state, node.id);
  if (node.kind === 'job') return jobNodeId(state, node.id);
  return fieldNodeId(state, node);
}

/**
 * Resolves a parsed nodeId to a visible dataset, job or column, or throws NOT_FOUND naming what is missing.
 * A column need not appear in the current schema: a removed column can still be analysed.
 */
export function resolveAnalysisNode(
  state: ReadModel,
  node:
    | { type: 'dataset' | 'job'; namespace: string; name: string }
    | { type: 'datasetField'; namespace: string; name: string; field: string },
  aliases?: DatasetAliases,
): AnalysisNode {
  const kind = node.type === 'job' ? 'job' : 'dataset';
  const namespace = state.namespaces.get(node.namespace);
  const row = namespace
    ? (kind === 'job' ? state.jobs : state.datasets).get(entityKey(namespace.id, node.name))
    : undefined;
  if (!row || row.isHidden) {
    throw new HeadwaterError(
      'NOT_FOUND',
      `No ${kind} named ${JSON.stringify(node.name)} in namespace ${JSON.stringify(node.namespace)}; ` +
        'search for it with GET /api/v1/search?q=<name>.',
    );
  }
  // An alias is analysed as the dataset it is (the graphs answer with that one).
  const id = kind === 'dataset' && aliases ? aliases.canonicalOf(row.id) : row.id;
  if (node.type === 'datasetField') return { kind: 'datasetField', datasetId: id, field: node.field };
  return { kind, id };
}

/** Code-point order, the same on every platform. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
