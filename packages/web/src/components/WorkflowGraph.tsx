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
import { NODE_HEIGHT, NODE_WIDTH } from '../graph/flow-elements.js';
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
const MIN_OPENING_ZOOM = 0.4;
/** Roughly what fitToFreeArea keeps clear, to tell whether the graph opened whole (then it needs no minimap). */
const FIT_PADDING = 0.12;

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
        ...WORKFLOW_NODE_SIZE,
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
  // A graph that opens whole needs no minimap, which would only cover its lower right corner.
  const [whole, setWhole] = useState(false);
  const instance = useRef<ReactFlowInstance<WorkflowFlowNode>>(undefined);
  const onInit = async (flow: ReactFlowInstance<WorkflowFlowNode>) => {
    instance.current = flow;
    applyLevelOfDetail(frame.current, flow.getViewport());
    await fitToFreeArea(flow, frame.current, { maxZoom: 1, minZoom: MIN_OPENING_ZOOM });
    const at = selected === undefined ? undefined : layout.positions.get(selected);
    // The zoom the fit wanted, as xyflow computes it (the frame over the layout's size and padding).
    const element = frame.current;
    const fitZoom = element
      ? Math.min(
          element.clientWidth / (layout.width * (1 + FIT_PADDING)),
          element.clientHeight / (layout.height * (1 + FIT_PADDING)),
        )
      : 0;
    // Whole on screen at the opening zoom, if with less than the padding.
    setWhole(fitZoom * (1 + FIT_PADDING) >= MIN_OPENING_ZOOM);
    const fits = fitZoom >= MIN_OPENING_ZOOM;
    if (fits || !at) return;
    await flow.setCenter(at.x + NODE_WIDTH / 2, at.y + NODE_HEIGHT / 2, { zoom: MIN_OPENING_ZOOM });
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
            onFit={() => {
              if (instance.current) void fitToFreeArea(instance.current, frame.current, { maxZoom: 1 });
            }}
          />
          {!whole && <MiniMap<WorkflowFlowNode> pannable zoomable nodeColor={minimapColor} />}
        </ReactFlow>
      </div>
    </ReactFlowProvider>
  );
}
