import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { CauseBadges } from './CauseBadges.js';
import type { DatasetNodeData } from '../graph/flow-elements.js';
import { useGraphActions } from './GraphActions.js';
import { shortName } from '../format.js';

/** A dataset box; expanded, it lists its columns, each with its own handles for column edges. */
export const DatasetGraphNode = memo(function DatasetGraphNode({
  data,
}: NodeProps<Node<DatasetNodeData, 'dataset'>>) {
  const { toggleColumns } = useGraphActions();
  const { node, expanded, isRoot } = data;
  const fields = node.data.fields;
  return (
    <div
      className={`graph-node graph-node--dataset${isRoot ? ' graph-node--root' : ''}`}
      data-testid="dataset-node"
    >
      <Handle type="target" position={Position.Left} id="in" />
      <div className="graph-node__kind">Dataset</div>
      <div className="graph-node__name" title={node.data.name}>
        <span className="graph-node__full">{node.data.name}</span>
        <span className="graph-node__short">{shortName(node.data.name)}</span>
      </div>
      <div className="graph-node__namespace" title={node.data.namespace}>
        {node.data.namespace}
      </div>
      {fields.length > 0 && (
        <button
          type="button"
          className="graph-node__toggle nodrag"
          aria-expanded={expanded}
          onClick={(event) => {
            event.stopPropagation();
            toggleColumns(node.id);
          }}
        >
          {expanded ? 'Hide columns' : `${fields.length} columns`}
        </button>
      )}
      {expanded && (
        <ul className="graph-node__fields">
          {fields.map((field) => (
            <li key={field.name} className="graph-node__field">
              <Handle type="target" position={Position.Left} id={`in:${field.name}`} />
              <span>{field.name}</span>
              <span className="graph-node__type">{field.type ?? ''}</span>
              <Handle type="source" position={Position.Right} id={`out:${field.name}`} />
            </li>
          ))}
        </ul>
      )}
      <CauseBadges causes={data.causes} />
      <Handle type="source" position={Position.Right} id="out" />
    </div>
  );
});
