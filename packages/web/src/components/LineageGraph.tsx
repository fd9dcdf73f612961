import { useMemo } from 'react';
import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  type NodeMouseHandler,
  type NodeTypes,
  type ReactFlowInstance,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import {
  NODE_HEIGHT,
  NODE_WIDTH,
  flowElements,
  type FlowInput,
  type FlowNode,
} from '../graph/flow-elements.js';
import { DatasetGraphNode } from './DatasetGraphNode.js';
import { GraphActionsContext, type GraphActions } from './GraphActions.js';
import { GroupGraphNode } from './GroupGraphNode.js';
import { JobGraphNode } from './JobGraphNode.js';

const nodeTypes: NodeTypes = { dataset: DatasetGraphNode, job: JobGraphNode, group: GroupGraphNode };

/** Above this many nodes only what is on screen is rendered; below it, panning stays smoother without. */
const virtualizeAbove = 300;

const minimapColor = (node: FlowNode): string => {
  if (node.type === 'dataset') return '#94a3b8';
  if (node.type === 'group') return 'transparent';
  const state = node.data.state;
  return state === 'FAILED' || state === 'ABORTED' ? '#dc2626' : state === 'RUNNING' ? '#2563eb' : '#16a34a';
};

export interface LineageGraphProps {
  /** Memoise it: a new object lays out the same elements again. */
  readonly input: FlowInput;
  readonly actions: GraphActions;
  /** A click selects; a shift-click picks the other end of a path to highlight. */
  readonly onNodeClick: (id: string, withShift: boolean) => void;
  readonly onPaneClick?: () => void;
}

/**
 * The lineage graph: pan, zoom, minimap, and nodes that never move on selection (see {@link flowElements}).
 */
export function LineageGraph(props: LineageGraphProps) {
  const { input, actions, onNodeClick, onPaneClick } = props;
  const { nodes, edges } = useMemo(() => flowElements(input), [input]);
  const handleClick: NodeMouseHandler<FlowNode> = (event, node) => {
    if (node.type !== 'group') onNodeClick(node.id, event.shiftKey);
  };
  const large = nodes.length > virtualizeAbove;
  // A large graph fitted to the screen is a field of unreadable dots that costs a render of every node; it
  // opens on its root at a readable zoom instead, and the minimap gives the overview.
  const root = input.layout.positions.get(input.rootId);
  const onInit = (instance: ReactFlowInstance<FlowNode>) => {
    if (large && root)
      void instance.setCenter(root.x + NODE_WIDTH / 2, root.y + NODE_HEIGHT / 2, { zoom: 0.8 });
  };
  return (
    <GraphActionsContext.Provider value={actions}>
      <ReactFlowProvider>
        <ReactFlow<FlowNode>
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          onNodeClick={handleClick}
          {...(onPaneClick ? { onPaneClick } : {})}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          onlyRenderVisibleElements={large}
          minZoom={0.02}
          maxZoom={2}
          fitView={!large}
          fitViewOptions={{ padding: 0.15, maxZoom: 1 }}
          onInit={onInit}
          proOptions={{ hideAttribution: true }}
        >
          <Background gap={24} color="#e2e8f0" />
          <Controls showInteractive={false} />
          <MiniMap<FlowNode> pannable zoomable nodeColor={minimapColor} />
        </ReactFlow>
      </ReactFlowProvider>
    </GraphActionsContext.Provider>
  );
}
