import type { Dataset, Job, LineageGraphResponse } from './types.js';

/** What the server names a namespace, dataset or job the caller may not read. */
export const REDACTED = '(redacted)';

/** Whether a node is the placeholder of a namespace the caller may not read (see {@link withRedactedPlaceholders}). */
export const isRedacted = (node: { readonly data: { readonly namespace: string } }): boolean =>
  node.data.namespace === REDACTED;

const placeholder = {
  id: { namespace: REDACTED, name: REDACTED },
  name: REDACTED,
  namespace: REDACTED,
  createdAt: '',
  updatedAt: '',
  description: null,
  facets: {},
};

/**
 * A caller who may not read every namespace gets a node of a hidden namespace as a placeholder without data (its id
 * `dataset:(redacted):1`), so that the graph's shape stays true. The views read every node's data: give such a
 * node data that names it `(redacted)` and holds nothing.
 */
export function withRedactedPlaceholders(response: LineageGraphResponse): LineageGraphResponse {
  if (response.graph.every((node) => node.data !== null)) return response;
  return {
    ...response,
    graph: response.graph.map((node) => {
      if (node.data !== null) return node;
      if (node.type === 'JOB') {
        const data: Job = {
          ...placeholder,
          type: 'BATCH',
          simpleName: REDACTED,
          parentJobName: null,
          inputs: [],
          outputs: [],
          location: null,
          latestRun: null,
        };
        return { ...node, data };
      }
      const data: Dataset = {
        ...placeholder,
        type: 'DB_TABLE',
        physicalName: REDACTED,
        sourceName: REDACTED,
        fields: [],
        tags: [],
        lastModifiedAt: null,
      };
      return { ...node, data };
    }),
  };
}
