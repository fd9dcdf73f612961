import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { GroupNodeData } from '../graph/flow-elements.js';
import { useGraphActions } from './GraphActions.js';

/** The frame around a parent job's child jobs; collapsed, it stands in for them and takes their edges. */
export const GroupGraphNode = memo(function GroupGraphNode({
  id,
  data,
}: NodeProps<Node<GroupNodeData, 'group'>>) {
  const { toggleGroup } = useGraphActions();
  const stateClass = (data.state ?? 'none').toLowerCase();
  return (
    <div
      className={`graph-group graph-group--${stateClass}${data.collapsed ? ' graph-group--collapsed' : ''}`}
      data-testid="group-node"
    >
      <Handle type="target" position={Position.Left} id="in" />
      <div className="graph-group__header">
        <span className="graph-group__label" title={data.label}>
          {data.label}
        </span>
        <button
          type="button"
          className="graph-group__toggle nodrag"
          aria-expanded={!data.collapsed}
          onClick={(event) => {
            event.stopPropagation();
            toggleGroup(id);
          }}
        >
          {data.collapsed ? `Expand ${data.childCount} jobs` : 'Collapse'}
        </button>
      </div>
      <Handle type="source" position={Position.Right} id="out" />
    </div>
  );
});
