import { useCallback, useEffect, useMemo, useRef } from 'react';
import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  type NodeMouseHandler,
  type NodeTypes,
  type ReactFlowInstance,
  type Viewport,
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
import { GraphOverview, type OverviewUpdate } from './GraphOverview.js';
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
  /** Called with the xyflow instance once it is ready (the benchmark page drives the viewport with it). */
  readonly onReady?: (flow: ReactFlowInstance<FlowNode>) => void;
  /** Bring this node into view (a new `seq` each time), e.g. after the keyboard moved the selection. */
  readonly focus?: { readonly id: string; readonly seq: number } | undefined;
}

/**
 * Level of detail, from the zoom: `near` shows everything; `mid` and `far` show only a node's short name, drawn
 * larger the further out one is so it stays about 13 px on screen. Set as attributes on the frame, so a zoom
 * restyles nodes through CSS without rendering one React component again.
 */
export function levelOfDetail(zoom: number): { lod: 'near' | 'mid' | 'far'; labelScale: number } {
  // Near only where full names are 11 px or more on screen; below, short names drawn at about 13 px.
  const lod = zoom >= 0.95 ? 'near' : zoom >= 0.3 ? 'mid' : 'far';
  // Quarter steps: the style changes a few times over a zoom gesture, not at every frame.
  const labelScale = lod === 'near' ? 1 : Math.min(5, Math.round(4 / Math.max(zoom, 0.05)) / 4);
  return { lod, labelScale };
}

function applyLevelOfDetail(frame: HTMLElement | null, viewport: Viewport): void {
  if (!frame) return;
  const { lod, labelScale } = levelOfDetail(viewport.zoom);
  if (frame.dataset.lod !== lod) frame.dataset.lod = lod;
  const scale = String(labelScale);
  if (frame.style.getPropertyValue('--label-scale') !== scale)
    frame.style.setProperty('--label-scale', scale);
}

/**
 * The lineage graph: pan, zoom, minimap, and nodes that never move on selection (see {@link flowElements}).
 */
export function LineageGraph(props: LineageGraphProps) {
  const { input, actions, onNodeClick, onPaneClick, focus, onReady } = props;
  const frame = useRef<HTMLDivElement>(null);
  const instance = useRef<ReactFlowInstance<FlowNode>>(undefined);
  const overview = useRef<OverviewUpdate>(undefined);
  const setOverview = useCallback((update: OverviewUpdate) => (overview.current = update), []);
  const { nodes, edges } = useMemo(() => flowElements(input), [input]);
  const handleClick: NodeMouseHandler<FlowNode> = (event, node) => {
    if (node.type !== 'group') onNodeClick(node.id, event.shiftKey);
  };
  const large = nodes.length > virtualizeAbove;
  // A large graph fitted to the screen is a field of unreadable dots that costs a render of every node; it
  // opens on its root at a readable zoom instead, and the minimap gives the overview.
  const root = input.layout.positions.get(input.rootId);
  const onInit = (flow: ReactFlowInstance<FlowNode>) => {
    instance.current = flow;
    if (large && root) void flow.setCenter(root.x + NODE_WIDTH / 2, root.y + NODE_HEIGHT / 2, { zoom: 0.8 });
    applyLevelOfDetail(frame.current, flow.getViewport());
    onReady?.(flow);
  };
  // A fitted graph stays fitted when its frame changes size, until the person pans or zooms it.
  const moved = useRef(false);
  useEffect(() => {
    const element = frame.current;
    if (!element || large) return;
    const observer = new ResizeObserver(() => {
      if (!moved.current) void instance.current?.fitView({ padding: 0.15, maxZoom: 1 });
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [large]);
  useEffect(() => {
    const flow = instance.current;
    const node = focus && flow?.getInternalNode(focus.id);
    if (!flow || !node) return;
    const { x, y } = node.internals.positionAbsolute;
    void flow.setCenter(x + NODE_WIDTH / 2, y + NODE_HEIGHT / 2, {
      zoom: Math.max(flow.getZoom(), 0.75),
      duration: 200,
    });
  }, [focus]);
  return (
    <GraphActionsContext.Provider value={actions}>
      <ReactFlowProvider>
        <div className="graph-canvas" ref={frame} data-lod="near">
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
            onMove={(_, viewport) => {
              applyLevelOfDetail(frame.current, viewport);
              if (frame.current)
                overview.current?.(viewport, {
                  width: frame.current.clientWidth,
                  height: frame.current.clientHeight,
                });
            }}
            onMoveStart={(event) => {
              // Programmatic moves (fit, centre) have no event; a person's pan or zoom has one.
              if (event) moved.current = true;
            }}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={24} color="#e2e8f0" />
            <Controls showInteractive={false} />
            {!large && <MiniMap<FlowNode> pannable zoomable nodeColor={minimapColor} />}
          </ReactFlow>
          {large && (
            <GraphOverview
              nodes={nodes}
              onReady={setOverview}
              onJump={(x, y) => void instance.current?.setCenter(x, y, { zoom: instance.current.getZoom() })}
            />
          )}
        </div>
      </ReactFlowProvider>
    </GraphActionsContext.Provider>
  );
}
