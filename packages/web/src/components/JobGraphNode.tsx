import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { CauseBadges } from './CauseBadges.js';
import { shortName } from '../format.js';
import type { JobNodeData } from '../graph/flow-elements.js';
import { jobRunLabel } from '../graph/lineage-model.js';

/** A job box, coloured by the state of its latest run. */
export const JobGraphNode = memo(function JobGraphNode({ data }: NodeProps<Node<JobNodeData, 'job'>>) {
  const { node, state, isRoot } = data;
  const stateClass = (state ?? 'none').toLowerCase();
  return (
    <div
      className={`graph-node graph-node--job graph-node--${stateClass}${isRoot ? ' graph-node--root' : ''}`}
      data-testid="job-node"
      data-state={state ?? 'NONE'}
    >
      <Handle type="target" position={Position.Left} id="in" />
      <div className="graph-node__kind">
        Job · <span className="graph-node__state">{jobRunLabel(node)}</span>
      </div>
      <div className="graph-node__name" title={node.data.name}>
        <span className="graph-node__full">{node.data.simpleName || node.data.name}</span>
        <span className="graph-node__short">{shortName(node.data.simpleName || node.data.name)}</span>
      </div>
      <div className="graph-node__namespace" title={node.data.namespace}>
        {node.data.namespace}
      </div>
      <CauseBadges causes={data.causes} />
      <Handle type="source" position={Position.Right} id="out" />
    </div>
  );
});
