import { useCallback, useEffect, useMemo, useRef, useState, type MouseEvent as ReactMouseEvent } from 'react';
import {
  Background,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  type Edge,
  type NodeMouseHandler,
  type NodeTypes,
  type ReactFlowInstance,
  type Viewport,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import {
  NODE_HEIGHT,
  NODE_WIDTH,
  VIRTUALIZE_ABOVE,
  flowElements,
  type FlowInput,
  type FlowNode,
} from '../graph/flow-elements.js';
import { fitToFreeArea } from '../graph/free-area.js';
import { backgroundGap, hitTest, sceneOf } from '../graph/scene.js';
import { GraphControls } from './GraphControls.js';
import { DatasetGraphNode } from './DatasetGraphNode.js';
import { GraphCanvas, canvasCauseText } from './GraphCanvas.js';
import { GraphOverview, type OverviewUpdate } from './GraphOverview.js';
import { GraphActionsContext, type GraphActions } from './GraphActions.js';
import { GroupGraphNode } from './GroupGraphNode.js';
import { JobGraphNode } from './JobGraphNode.js';

const noNodes: FlowNode[] = [];
const noEdges: Edge[] = [];
const nodeTypes: NodeTypes = { dataset: DatasetGraphNode, job: JobGraphNode, group: GroupGraphNode };

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

/** `detail`: datasets list their columns inside the node; `near`: full names; `mid`, `far`: short names. */
export type LevelOfDetail = 'detail' | 'near' | 'mid' | 'far';
const nearZoom = 0.95;
/** The zoom from which a dataset's columns are listed inside its node (see `.graph-node__columns`). */
export const detailZoom = 1.5;

/**
 * Level of detail, from the zoom: `near` shows everything; `mid` and `far` show only a node's short name, drawn
 * larger the further out one is so it stays about 13 px on screen. Set as attributes on the frame, so a zoom
 * restyles nodes through CSS without rendering one React component again.
 */
export function levelOfDetail(zoom: number): { lod: LevelOfDetail; labelScale: number } {
  // Near only where full names are 11 px or more on screen; below, short names drawn at about 13 px. Detail
  // where a dataset's column names, drawn 7.4 px tall in the node, are 11 px on screen.
  const lod = zoom >= detailZoom ? 'detail' : zoom >= nearZoom ? 'near' : zoom >= 0.3 ? 'mid' : 'far';
  // Quarter steps: the style changes a few times over a zoom gesture, not at every frame.
  const labelScale = zoom >= nearZoom ? 1 : Math.min(5, Math.round(4 / Math.max(zoom, 0.05)) / 4);
  return { lod, labelScale };
}

interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The part of the graph on screen, in graph units. */
const visibleRect = (viewport: Viewport, frame: { width: number; height: number }): Rect => ({
  x: -viewport.x / viewport.zoom,
  y: -viewport.y / viewport.zoom,
  width: frame.width / viewport.zoom,
  height: frame.height / viewport.zoom,
});

const contains = (outer: Rect, inner: Rect): boolean =>
  inner.x >= outer.x &&
  inner.y >= outer.y &&
  inner.x + inner.width <= outer.x + outer.width &&
  inner.y + inner.height <= outer.y + outer.height;

const grow = (rect: Rect, by: number): Rect => ({
  x: rect.x - rect.width * by,
  y: rect.y - rect.height * by,
  width: rect.width * (1 + 2 * by),
  height: rect.height * (1 + 2 * by),
});

/** Sets the level of detail of `viewport` on a graph's frame (see {@link levelOfDetail}); the workflow's too. */
export function applyLevelOfDetail(frame: HTMLElement | null, viewport: Viewport): void {
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
  const large = nodes.length > VIRTUALIZE_ABOVE;
  // A large graph's edges, column edges among them, are all on the canvas.
  const scene = useMemo(
    () => (large ? sceneOf(nodes, edges, canvasCauseText) : undefined),
    [large, nodes, edges],
  );
  const domEdges = large ? noEdges : edges;
  // A large graph gives xyflow only the nodes in a window around the screen, from the near level on: xyflow
  // renders every node it has not measured yet, so all 5,000 would be mounted at once. The window is a third
  // wider than the screen on each side and moves only when the screen leaves it, so a pan mounts a strip of
  // nodes now and then, not nodes at every frame.
  const [domWindow, setDomWindow] = useState<Rect>();
  const domNodes = !large || domWindow !== undefined;
  const showDom = (viewport: Viewport) => {
    if (!large) return;
    if (viewport.zoom < nearZoom) return setDomWindow(undefined);
    const screen = visibleRect(viewport, frameSize.current);
    setDomWindow((current) => (current && contains(current, screen) ? current : grow(screen, 1 / 3)));
  };
  const shownNodes = useMemo(() => {
    if (!large) return nodes;
    if (!domWindow || !scene) return noNodes;
    const inside = new Set<string>();
    for (const node of nodes) {
      const box = scene.byId.get(node.id)!;
      if (box.x > domWindow.x + domWindow.width || box.x + box.width < domWindow.x) continue;
      if (box.y > domWindow.y + domWindow.height || box.y + box.height < domWindow.y) continue;
      inside.add(node.id);
      // xyflow needs a child's group beside it.
      if (node.parentId) inside.add(node.parentId);
    }
    return nodes.filter((node) => inside.has(node.id));
  }, [large, nodes, scene, domWindow]);
  const pickOnCanvas = (event: ReactMouseEvent): string | undefined => {
    const flow = instance.current;
    if (!scene || domNodes || !flow) return undefined;
    const at = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY });
    const box = hitTest(scene, at.x, at.y);
    return box && box.kind !== 'group' ? box.id : undefined;
  };
  // A large graph fitted to the screen is a field of unreadable dots that costs a render of every node; it
  // opens on its root at a readable zoom instead, and the minimap gives the overview.
  const root = input.layout.positions.get(input.rootId);
  // A small graph opens fitted to the part of the frame its zoom buttons and minimap leave free.
  const fit = () => instance.current && fitToFreeArea(instance.current, frame.current, { maxZoom: 1 });
  const onInit = (flow: ReactFlowInstance<FlowNode>) => {
    instance.current = flow;
    if (large && root) void flow.setCenter(root.x + NODE_WIDTH / 2, root.y + NODE_HEIGHT / 2, { zoom: 0.8 });
    else void fit();
    applyLevelOfDetail(frame.current, flow.getViewport());
    showDom(flow.getViewport());
    onReady?.(flow);
  };
  // The frame's size, kept from a resize observer: reading it on each move would force a layout per frame.
  const frameSize = useRef({ width: 0, height: 0 });
  const settle = useRef(0);
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const measure = () => (frameSize.current = { width: element.clientWidth, height: element.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => {
      observer.disconnect();
      clearTimeout(settle.current);
    };
  }, []);
  // A fitted graph stays fitted when its frame changes size, until the person pans or zooms it.
  const moved = useRef(false);
  useEffect(() => {
    const element = frame.current;
    if (!element || large) return;
    const observer = new ResizeObserver(() => {
      if (!moved.current) void fit();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [large]);
  useEffect(() => {
    const flow = instance.current;
    const at =
      focus && (scene?.byId.get(focus.id) ?? flow?.getInternalNode(focus.id)?.internals.positionAbsolute);
    if (!flow || !at) return;
    const { x, y } = at;
    void flow.setCenter(x + NODE_WIDTH / 2, y + NODE_HEIGHT / 2, {
      zoom: Math.max(flow.getZoom(), 0.75),
      duration: 200,
    });
    // Only a new focus moves the view, not a new scene.
  }, [focus]);
  return (
    <GraphActionsContext.Provider value={actions}>
      <ReactFlowProvider>
        <div className="graph-canvas" ref={frame} data-lod="near">
          <ReactFlow<FlowNode>
            nodes={shownNodes}
            edges={domEdges}
            nodeTypes={nodeTypes}
            onNodeClick={handleClick}
            onPaneClick={(event) => {
              const picked = pickOnCanvas(event);
              if (picked) onNodeClick(picked, event.shiftKey);
              else onPaneClick?.();
            }}
            {...(scene
              ? {
                  onPaneMouseMove: (event: ReactMouseEvent) => {
                    const pane = event.currentTarget as HTMLElement;
                    pane.style.cursor = pickOnCanvas(event) ? 'pointer' : '';
                  },
                }
              : {})}
            nodesDraggable={false}
            nodesConnectable={false}
            elementsSelectable={false}
            onlyRenderVisibleElements={false}
            minZoom={0.02}
            maxZoom={2}
            onInit={onInit}
            onMove={(_, viewport) => {
              applyLevelOfDetail(frame.current, viewport);
              showDom(viewport);
              overview.current?.(viewport, frameSize.current);
              // While a large graph moves, its DOM nodes are one layer the compositor moves and scales as a
              // picture (will-change), not painted again at each zoom step; 150 ms after the last move they
              // are painted sharp at the zoom reached. Measured: a third less renderer CPU per frame.
              if (large && frame.current) {
                const element = frame.current;
                element.dataset.moving = '';
                clearTimeout(settle.current);
                settle.current = window.setTimeout(() => delete element.dataset.moving, 150);
              }
            }}
            onMoveStart={(event) => {
              // Programmatic moves (fit, centre) have no event; a person's pan or zoom has one.
              if (event) moved.current = true;
            }}
            proOptions={{ hideAttribution: true }}
          >
            {!large && <Background gap={backgroundGap} color="#e2e8f0" />}
            {scene && <GraphCanvas scene={scene} withNodes={!domNodes} />}
            <GraphControls
              // The buttons are a person's zoom too (their moves have no event): a refit must not undo them.
              onZoomIn={() => (moved.current = true)}
              onZoomOut={() => (moved.current = true)}
              onFit={() => {
                moved.current = false;
                void fit();
              }}
            />
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
