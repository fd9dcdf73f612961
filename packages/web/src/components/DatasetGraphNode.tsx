import { memo, useEffect, useRef } from 'react';
import { Handle, Position, useUpdateNodeInternals, type Node, type NodeProps } from '@xyflow/react';
import { CauseBadges } from './CauseBadges.js';
import type { DatasetNodeData } from '../graph/flow-elements.js';
import { useGraphActions } from './GraphActions.js';
import { shortName } from '../format.js';

/** Column names that fit in the box at the `detail` level of detail: three rows of three. */
const columnsInBox = 9;

/**
 * A dataset box. Zoomed in to the `detail` level it lists up to {@link columnsInBox} column names inside its box
 * (CSS shows them; no render on zoom); expanded on demand, it lists every column with its type and its own
 * handles for column edges, and pushes the boxes below it down.
 */
export const DatasetGraphNode = memo(function DatasetGraphNode({
  id,
  data,
}: NodeProps<Node<DatasetNodeData, 'dataset'>>) {
  const { toggleColumns } = useGraphActions();
  const { node, expanded, isRoot } = data;
  const fields = node.data.fields;
  // Its column handles come and go with the list. xyflow keeps the handles it measured (flow-elements' `sized`)
  // and measures a node again when its box is resized or when told: told here, so that column edges do not wait
  // on a resize observation.
  const updateNodeInternals = useUpdateNodeInternals();
  const handleNames = expanded ? fields.map((field) => field.name).join('\n') : '';
  const measuredNames = useRef(handleNames);
  useEffect(() => {
    if (measuredNames.current === handleNames) return;
    measuredNames.current = handleNames;
    updateNodeInternals(id);
  }, [updateNodeInternals, id, handleNames]);
  return (
    <div
      className={`graph-node graph-node--dataset${isRoot ? ' graph-node--root' : ''}${expanded ? ' graph-node--expanded' : ''}`}
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
      {!expanded && fields.length > 0 && (
        <ul className="graph-node__columns" aria-label={`Columns of ${node.data.name}`}>
          {(fields.length > columnsInBox ? fields.slice(0, columnsInBox - 1) : fields).map((field) => (
            <li key={field.name} title={field.type ? `${field.name} ${field.type}` : field.name}>
              {field.name}
            </li>
          ))}
          {fields.length > columnsInBox && (
            <li className="graph-node__columns-more">+{fields.length - columnsInBox + 1} more</li>
          )}
        </ul>
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
