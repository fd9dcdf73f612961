import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { WorkflowDatasetNode } from '../api/workflow.js';
import { formatBytes, shortName } from '../format.js';

export type WorkflowDatasetNodeData = { node: WorkflowDatasetNode; selected: boolean } & Record<
  string,
  unknown
>;

/** `100 rows · 2.0 KiB`, or what of it was reported; null when nothing was. */
export function datasetCounts(node: Pick<WorkflowDatasetNode, 'rowCount' | 'bytes'>): string | null {
  const parts = [
    node.rowCount === null ? '' : `${node.rowCount.toLocaleString('en-US')} rows`,
    node.bytes === null ? '' : formatBytes(node.bytes),
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : null;
}

/** A dataset in the workflow graph, with the row count and size its writer reported. */
export const WorkflowDatasetGraphNode = memo(function WorkflowDatasetGraphNode({
  data,
}: NodeProps<Node<WorkflowDatasetNodeData, 'dataset'>>) {
  const { node } = data;
  return (
    <div
      className={`graph-node graph-node--dataset${data.selected ? ' is-selected' : ''}`}
      data-testid="workflow-dataset"
    >
      <Handle type="target" position={Position.Left} id="in" />
      <div className="graph-node__kind">Dataset</div>
      <div className="graph-node__name" title={node.name}>
        <span className="graph-node__full">{node.name}</span>
        <span className="graph-node__short">{shortName(node.name)}</span>
      </div>
      <div className="graph-node__namespace">{datasetCounts(node) ?? 'no counts reported'}</div>
      <Handle type="source" position={Position.Right} id="out" />
    </div>
  );
});
