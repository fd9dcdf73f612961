import type { DatasetNodeData, JobNodeData, LineageGraphJson, LineageGraphResponse } from './types.js';

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
};

/**
 * A caller who may not read every namespace gets a node of a hidden namespace as a placeholder without data (its id
 * `dataset:(redacted):1`), so that the graph's shape stays true. The views read every node's data: give such a
 * node data that names it `(redacted)` and holds nothing.
 */
export function withRedactedPlaceholders(response: LineageGraphJson): LineageGraphResponse {
  return {
    ...response,
    graph: response.graph.map((node) =>
      node.type === 'JOB'
        ? { ...node, data: node.data ?? jobPlaceholder }
        : { ...node, data: node.data ?? datasetPlaceholder },
    ),
  };
}

const jobPlaceholder: JobNodeData = {
  ...placeholder,
  type: 'BATCH',
  simpleName: REDACTED,
  inputs: [],
  outputs: [],
  location: null,
  latestRun: null,
};

const datasetPlaceholder: DatasetNodeData = {
  ...placeholder,
  type: 'DB_TABLE',
  physicalName: REDACTED,
  sourceName: REDACTED,
  fields: [],
  tags: [],
  lastModifiedAt: null,
  lastLifecycleState: null,
};
