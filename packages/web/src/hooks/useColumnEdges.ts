import { useEffect, useState } from 'react';
import { api } from '../api/client.js';
import type { ColumnEdge } from '../graph/flow-elements.js';
import type { LineageModel } from '../graph/lineage-model.js';
import { datasetNodeId } from '../paths.js';

/**
 * Column edges of every expanded dataset, fetched once per dataset from `/column-lineage` and kept while the
 * model stays. Edges between datasets that are not both in the graph are dropped.
 */
export function useColumnEdges(
  model: LineageModel | undefined,
  expanded: ReadonlySet<string>,
  depth: number,
): { edges: readonly ColumnEdge[]; error?: Error } {
  const [byDataset, setByDataset] = useState(new Map<string, ColumnEdge[]>());
  const [error, setError] = useState<Error>();
  useEffect(() => setByDataset(new Map()), [model]);
  useEffect(() => {
    if (!model) return;
    const controller = new AbortController();
    for (const id of expanded) {
      if (byDataset.has(id)) continue;
      api.columnLineage(id, depth, controller.signal).then(
        (response) => {
          const fields = new Map(response.graph.map((node) => [node.id, node.data]));
          const edges: ColumnEdge[] = [];
          for (const node of response.graph) {
            for (const edge of node.inEdges) {
              const from = fields.get(edge.origin);
              const to = fields.get(edge.destination);
              if (!from || !to) continue;
              const source = datasetNodeId(from.namespace, from.dataset);
              const target = datasetNodeId(to.namespace, to.dataset);
              if (model.nodes.has(source) && model.nodes.has(target))
                edges.push({ source, sourceField: from.field, target, targetField: to.field });
            }
          }
          setByDataset((previous) => new Map(previous).set(id, edges));
        },
        (reason: unknown) => {
          if (!controller.signal.aborted)
            setError(reason instanceof Error ? reason : new Error(String(reason)));
        },
      );
    }
    return () => controller.abort();
  }, [model, expanded, depth, byDataset]);
  const seen = new Set<string>();
  const edges: ColumnEdge[] = [];
  for (const id of expanded)
    for (const edge of byDataset.get(id) ?? []) {
      const key = `${edge.source}:${edge.sourceField}->${edge.target}:${edge.targetField}`;
      if (!seen.has(key)) {
        seen.add(key);
        edges.push(edge);
      }
    }
  return { edges, ...(error ? { error } : {}) };
}
