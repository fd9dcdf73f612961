/**
 * Column paths: every column upstream or downstream of a column (or of every column of a dataset), any number
 * of hops away, each with the column before it on a shortest path and the transformations of that hop. Pure:
 * reads the column graph.
 */
import { Closed, StringEnum, Type, type Static } from '../core/json-schema.js';
import { ColumnTransformationSchema, type FieldRef } from '../read-model/column-graph.js';
import { compareText, fieldNodeId, datasetNodeId, type AnalysisSource } from './context.js';
import { walkColumns, type WalkDirection } from './walk.js';

/** One hop of a path, in data-flow order: from an input column to the output column it feeds. */
export const ColumnHopSchema = Closed({
  origin: Type.String(),
  destination: Type.String(),
  transformations: Type.Array(ColumnTransformationSchema),
});
export type ColumnHop = Static<typeof ColumnHopSchema>;

/** A column reached. */
export const ColumnPathSchema = Closed({
  nodeId: Type.String({ description: 'datasetField id' }),
  dataset: Type.String(),
  field: Type.String(),
  distance: Type.Integer({ description: 'Hops from the start' }),
  via: Type.String({ description: 'The column one hop closer to the start on a shortest path' }),
  transformations: Type.Array(ColumnTransformationSchema, {
    description: 'The transformations of the hop between `via` and this column',
  }),
});
export type ColumnPath = Static<typeof ColumnPathSchema>;

/** The answer of a column-paths query. */
export const ColumnPathsResultSchema = Closed({
  start: Type.String(),
  direction: StringEnum(['upstream', 'downstream']),
  columns: Type.Array(ColumnPathSchema, {
    description: 'The columns reached, the start(s) excluded, by distance then nodeId',
  }),
  edges: Type.Array(ColumnHopSchema, {
    description: 'Every column-lineage edge between the start(s) and the columns reached, in data-flow order',
  }),
});
export type ColumnPathsResult = Static<typeof ColumnPathsResultSchema>;

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
