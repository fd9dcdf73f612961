import type { CauseKind, RootCauseResult } from '../api/analysis.js';
import { edgeKey, type Highlight, type LineageModel } from './lineage-model.js';

/** The server's root causes drawn on the graph: the nodes and edges of their paths, and each cause's kinds. */
export interface CauseHighlight extends Highlight {
  /** Node id to the kinds of cause found there, in the server's order. */
  readonly causes: ReadonlyMap<string, readonly CauseKind[]>;
}

export const noCauses: CauseHighlight = { nodes: new Set(), edges: new Set(), causes: new Map() };

/**
 * Where root cause starts for a node of the graph: a dataset itself; for a job, the datasets it writes (the
 * server's analysis starts at data, and a job's outputs are what it makes wrong).
 */
export function rootCauseTargets(model: LineageModel, nodeId: string): string[] {
  const node = model.nodes.get(nodeId);
  if (!node) return [];
  if (node.type === 'DATASET') return [nodeId];
  return (model.out.get(nodeId) ?? []).filter((id) => model.nodes.get(id)?.type === 'DATASET');
}

/**
 * Turns root-cause answers into what the graph highlights. A cause's `path` runs from the target upstream to the
 * cause, so each consecutive pair is an edge in the other (data-flow) direction. Nothing is recomputed here.
 */
export function causeHighlight(results: readonly RootCauseResult[]): CauseHighlight {
  const nodes = new Set<string>();
  const edges = new Set<string>();
  const causes = new Map<string, CauseKind[]>();
  for (const result of results) {
    for (const cause of result.causes) {
      const kinds = causes.get(cause.nodeId) ?? [];
      if (!kinds.includes(cause.kind)) kinds.push(cause.kind);
      causes.set(cause.nodeId, kinds);
      cause.path.forEach((id, i) => {
        nodes.add(id);
        const upstream = cause.path[i + 1];
        if (upstream !== undefined) edges.add(edgeKey(upstream, id));
      });
    }
  }
  return { nodes, edges, causes };
}
