import { useMemo, useRef, useState } from 'react';
import {
  Background,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  type Edge,
  type Node,
  type NodeTypes,
  type ReactFlowInstance,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { WorkflowModel } from '../api/workflow.js';
import { edgeShape, type LayoutResult } from '../graph/layout.js';
import { NODE_HEIGHT, NODE_WIDTH, sized } from '../graph/flow-elements.js';
import { fitToFreeArea } from '../graph/free-area.js';
import { GraphControls } from './GraphControls.js';
import { WorkflowDatasetGraphNode, type WorkflowDatasetNodeData } from './WorkflowDatasetGraphNode.js';
import { WorkflowRunGraphNode, type WorkflowRunNodeData } from './WorkflowRunGraphNode.js';
import { applyLevelOfDetail } from './LineageGraph.js';

const nodeTypes: NodeTypes = { run: WorkflowRunGraphNode, dataset: WorkflowDatasetGraphNode };

type WorkflowFlowNode = Node<WorkflowRunNodeData, 'run'> | Node<WorkflowDatasetNodeData, 'dataset'>;

/** The box every workflow node gets from the layout (the lineage graph's size, so the styles fit). */
export const WORKFLOW_NODE_SIZE = { width: NODE_WIDTH, height: NODE_HEIGHT } as const;

/**
 * The smallest zoom the graph opens at: short names and states stay readable at the level of detail's label
 * size (durations from the near level on). A pipeline too large to fit at it, even wrapped into bands by the
 * layout, opens on the selected node (the failed one by default); the minimap and the controls reach the rest.
 */
const MIN_OPENING_ZOOM = 0.39;
/** Between the boxes and the frame's edges or the controls: little, so that 30 runs still open whole at 1440x900. */
const FIT_MARGIN = 8;

const minimapColor = (node: WorkflowFlowNode): string => {
  if (node.type === 'dataset') return '#94a3b8';
  const { state, ran } = node.data.node.child;
  if (!ran) return '#f59e0b';
  return state === 'FAILED' ? '#dc2626' : state === 'RUNNING' ? '#2563eb' : '#16a34a';
};

/**
 * A parent run's children as a graph, laid out by the explorer's layered layout (in its worker): runs and the
 * datasets between them, left to right in the order data flowed, a long chain wrapped into bands read like lines
 * of text (the edge to a band's start runs back under the band before). Edges into a failed run, and out of it,
 * are red. Names follow the lineage graph's level of detail.
 */
export function WorkflowGraph({
  model,
  layout,
  selected,
  onSelect,
}: {
  model: WorkflowModel;
  layout: LayoutResult;
  selected: string | undefined;
  onSelect: (id: string) => void;
}) {
  const { nodes, edges } = useMemo(() => {
    const nodes: WorkflowFlowNode[] = [...model.nodes.values()].map((node) => {
      const common = {
        id: node.id,
        position: layout.positions.get(node.id) ?? { x: 0, y: 0 },
        ...sized(WORKFLOW_NODE_SIZE.width, WORKFLOW_NODE_SIZE.height),
      };
      return node.kind === 'run'
        ? { ...common, type: 'run' as const, data: { node, selected: node.id === selected } }
        : { ...common, type: 'dataset' as const, data: { node, selected: node.id === selected } };
    });
    const failed = new Set(
      [...model.nodes.values()]
        .filter((n) => n.kind === 'run' && n.child.state === 'FAILED')
        .map((n) => n.id),
    );
    const x = (id: string) => layout.positions.get(id)?.x ?? 0;
    const edges: Edge[] = model.edges.map(({ source, target }) => ({
      id: `${source}->${target}`,
      source,
      target,
      sourceHandle: 'out',
      targetHandle: 'in',
      ...edgeShape(x(source), x(target)),
      className: failed.has(source) || failed.has(target) ? 'is-cause-path' : '',
    }));
    return { nodes, edges };
  }, [model, layout, selected]);
  const frame = useRef<HTMLDivElement>(null);
  // A graph that opens whole needs no minimap, which would only cover its lower right corner: the fit is tried
  // without it, and it appears only when the graph does not fit at a readable zoom.
  const [whole, setWhole] = useState(true);
  const instance = useRef<ReactFlowInstance<WorkflowFlowNode>>(undefined);
  const onInit = async (flow: ReactFlowInstance<WorkflowFlowNode>) => {
    instance.current = flow;
    applyLevelOfDetail(frame.current, flow.getViewport());
    const padding = await fitToFreeArea(flow, frame.current, { maxZoom: 1, margin: FIT_MARGIN });
    if (!padding || flow.getZoom() >= MIN_OPENING_ZOOM) return;
    const at = selected === undefined ? undefined : layout.positions.get(selected);
    if (at) await flow.setCenter(at.x + NODE_WIDTH / 2, at.y + NODE_HEIGHT / 2, { zoom: MIN_OPENING_ZOOM });
    // Else where the pipeline starts: its first band, read from the top left.
    else await flow.setViewport({ x: padding.left, y: padding.top, zoom: MIN_OPENING_ZOOM });
    // The fit kept clear of controls that a graph drawn from the top left at the readable zoom may not reach:
    // the minimap is for a graph that still does not fit the frame.
    setWhole(fitsFrame(flow, frame.current));
  };
  return (
    <ReactFlowProvider>
      <div className="graph-canvas" data-lod="near" ref={frame}>
        <ReactFlow<WorkflowFlowNode>
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          onNodeClick={(_, node) => onSelect(node.id)}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          onlyRenderVisibleElements={nodes.length > 300}
          minZoom={0.05}
          maxZoom={2}
          onInit={(flow) => void onInit(flow)}
          onMove={(_, viewport) => applyLevelOfDetail(frame.current, viewport)}
          proOptions={{ hideAttribution: true }}
        >
          <Background gap={24} color="#e2e8f0" />
          <GraphControls
            // Bottom right: a wrapped chain's last band is the short one, and starts at the left.
            position="bottom-right"
            onFit={() => {
              if (instance.current)
                void fitToFreeArea(instance.current, frame.current, { maxZoom: 1, margin: FIT_MARGIN });
            }}
          />
          {!whole && (
            <MiniMap<WorkflowFlowNode> position="top-right" pannable zoomable nodeColor={minimapColor} />
          )}
        </ReactFlow>
      </div>
    </ReactFlowProvider>
  );
}

/** Whether every node lies inside the frame at the flow's present viewport. */
function fitsFrame(flow: ReactFlowInstance<WorkflowFlowNode>, frame: HTMLElement | null): boolean {
  if (!frame) return false;
  const bounds = flow.getNodesBounds(flow.getNodes());
  const { x, y, zoom } = flow.getViewport();
  return (
    x + bounds.x * zoom >= 0 &&
    y + bounds.y * zoom >= 0 &&
    x + (bounds.x + bounds.width) * zoom <= frame.clientWidth &&
    y + (bounds.y + bounds.height) * zoom <= frame.clientHeight
  );
}
