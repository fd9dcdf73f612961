import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { stateMark, type WorkflowRunNode } from '../api/workflow.js';
import { formatDuration, shortName } from '../format.js';

export type WorkflowRunNodeData = { node: WorkflowRunNode; selected: boolean } & Record<string, unknown>;

/**
 * A child run in the workflow graph: its state in colour, as a word and as a mark; its duration. A run that never
 * ran is drawn dashed.
 */
export const WorkflowRunGraphNode = memo(function WorkflowRunGraphNode({
  data,
}: NodeProps<Node<WorkflowRunNodeData, 'run'>>) {
  const { child } = data.node;
  const { mark, label } = stateMark(child);
  const classes = [
    'graph-node',
    'graph-node--job',
    `graph-node--${child.state.toLowerCase()}`,
    child.ran ? '' : 'graph-node--never-ran',
    data.selected ? 'is-selected' : '',
  ];
  return (
    <div
      className={classes.filter(Boolean).join(' ')}
      data-testid="workflow-run"
      data-state={child.state}
      aria-label={`${child.job.name}: ${label}, ${formatDuration(child.durationMs)}`}
    >
      <Handle type="target" position={Position.Left} id="in" />
      <div className="graph-node__kind">
        <span className="graph-node__mark" aria-hidden="true">
          {mark}
        </span>{' '}
        <span className="graph-node__state">{label}</span>
      </div>
      <div className="graph-node__name" title={child.job.name}>
        <span className="graph-node__full">{child.job.name}</span>
        <span className="graph-node__short">{shortName(child.job.name)}</span>
      </div>
      <div className="graph-node__namespace">
        {child.ran ? formatDuration(child.durationMs) : 'did not start'}
      </div>
      <Handle type="source" position={Position.Right} id="out" />
    </div>
  );
});
