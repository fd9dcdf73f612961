/**
 * Column paths: every column upstream or downstream of a column (or of every column of a dataset), any number
 * of hops away, each with the column before it on a shortest path and the transformations of that hop. Pure:
 * reads the column graph.
 */
import type { ColumnTransformation, FieldRef } from '../read-model/column-graph.js';
import { compareText, fieldNodeId, datasetNodeId, type AnalysisSource } from './context.js';
import { walkColumns, type WalkDirection } from './walk.js';

/** One hop of a path, in data-flow order: from an input column to the output column it feeds. */
export interface ColumnHop {
  readonly origin: string;
  readonly destination: string;
  readonly transformations: ColumnTransformation[];
}

/** A column reached. */
export interface ColumnPath {
  /** datasetField id. */
  readonly nodeId: string;
  readonly dataset: string;
  readonly field: string;
  /** Hops from the start. */
  readonly distance: number;
  /** The column one hop closer to the start on a shortest path: follow `via` back for the whole path. */
  readonly via: string;
  /** The transformations of the hop between `via` and this column. */
  readonly transformations: ColumnTransformation[];
}

/** The answer of a column-paths query. */
export interface ColumnPathsResult {
  readonly start: string;
  readonly direction: WalkDirection;
  /** The columns reached, the start(s) excluded, by distance then nodeId. */
  readonly columns: ColumnPath[];
  /** Every column-lineage edge between the start(s) and the columns reached, in data-flow order. */
  readonly edges: ColumnHop[];
}

/**
 * The columns upstream or downstream of `starts`, at most `depth` hops away.
 *
 * @example
 * columnPaths(source, 'datasetField:ns:mart:revenue', [{ datasetId: 3, field: 'revenue' }], 'upstream', 20);
 */
export function columnPaths(
  source: AnalysisSource,
  start: string,
  starts: readonly FieldRef[],
  direction: WalkDirection,
  depth: number,
): ColumnPathsResult {
  const { state, columnGraph } = source;
  const id = (ref: FieldRef) => fieldNodeId(state, ref);
  const walk = walkColumns(state, columnGraph, starts, direction, depth);
  const columns = walk
    .filter((column) => column.distance > 0)
    .map((column) => ({
      nodeId: id(column.ref),
      dataset: datasetNodeId(state, column.ref.datasetId),
      field: column.ref.field,
      distance: column.distance,
      via: id(column.previous!.ref),
      transformations: [...column.transformations],
    }));
  const reached = new Set(walk.map((column) => id(column.ref)));
  const edges: ColumnHop[] = [];
  for (const column of walk) {
    // Each edge once: listed from its output column.
    for (const input of columnGraph.inputsOf(column.ref)) {
      if (!reached.has(id(input))) continue;
      edges.push({
        origin: id(input),
        destination: id(column.ref),
        transformations: [...input.transformations],
      });
    }
  }
  edges.sort((a, b) => compareText(a.origin, b.origin) || compareText(a.destination, b.destination));
  return { start, direction, columns, edges };
}
