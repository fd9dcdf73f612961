import { useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { LineageGraph } from '../components/LineageGraph.js';
import type { ReactFlowInstance } from '@xyflow/react';
import type { FlowInput, FlowNode } from '../graph/flow-elements.js';
import { noCauses } from '../graph/cause-highlight.js';
import { generateLineageGraph } from '../graph/generate.js';
import { buildLineageModel } from '../graph/lineage-model.js';
import { layoutGraph, type LayoutResult } from '../graph/layout.js';
import { layoutRequestOf } from '../graph/flow-elements.js';

/** What the page reports on `window.__headwaterBench` once the graph is on screen. */
export interface GraphBenchResult {
  nodes: number;
  edges: number;
  layoutMs: number;
  /** From the end of the layout to nodes and edges drawn. */
  renderMs: number;
  totalMs: number;
  /**
   * From the page's first render until node names are drawn at least {@link readablePx} px tall on screen
   * (level of detail included): when a person can read the graph, not just see boxes.
   */
  readableMs: number;
  /** With `interact=1`: pan and zoom driven frame by frame after the graph is drawn. */
  panZoom?: PanZoomResult;
}

/** What the pan-and-zoom phase measured. */
export interface PanZoomResult {
  readonly frames: number;
  readonly fps: number;
  readonly p50FrameMs: number;
  readonly p95FrameMs: number;
  readonly maxFrameMs: number;
}

/** A label this tall on screen is readable; the level of detail aims at 13 px. */
const readablePx = 11;
/** Frames of the pan-and-zoom phase: about 5 s at 60 frames/s. */
const panZoomFrames = 300;

/** The height of the first drawn node name, in screen pixels: in a DOM node, or on a large graph's canvas. */
function drawnLabelPx(): number {
  const onCanvas = document.querySelector<HTMLElement>('.graph-canvas__layer[data-label-px]');
  if (onCanvas) return Number(onCanvas.dataset.labelPx);
  const name = [...document.querySelectorAll<HTMLElement>('.graph-node__name span')].find(
    (span) => span.offsetParent !== null,
  );
  return name ? name.getBoundingClientRect().height : 0;
}

/** Whether nodes and edges are on screen: xyflow's (drawn hidden, measured, then shown) or the canvas's. */
function graphDrawn(): boolean {
  const canvas = document.querySelector<HTMLElement>('.graph-canvas__layer[data-drawn-nodes]');
  if (canvas && Number(canvas.dataset.drawnNodes) > 0) return true;
  const shown = document.querySelector(
    '.react-flow__node[style*="visibility: visible"], .react-flow__node:not([style*="visibility"])',
  );
  return shown !== null && document.querySelector('.react-flow__edge') !== null;
}

/**
 * Pans and zooms through the graph once per animation frame (a wave across the canvas, zoom swinging between
 * 0.4 and 1.2 so the level of detail changes too) and measures the time between frames.
 */
function measurePanZoom(flow: ReactFlowInstance<FlowNode>): Promise<PanZoomResult> {
  const start = flow.getViewport();
  const stamps: number[] = [];
  return new Promise((resolve) => {
    const step = (now: number) => {
      const i = stamps.push(now);
      if (i > panZoomFrames) {
        const gaps = stamps
          .slice(1)
          .map((t, k) => t - stamps[k]!)
          .sort((a, b) => a - b);
        const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))]!;
        const elapsed = stamps.at(-1)! - stamps[0]!;
        resolve({
          frames: gaps.length,
          fps: Math.round((gaps.length / elapsed) * 1000 * 10) / 10,
          p50FrameMs: Math.round(at(0.5) * 10) / 10,
          p95FrameMs: Math.round(at(0.95) * 10) / 10,
          maxFrameMs: Math.round(gaps.at(-1)! * 10) / 10,
        });
        return;
      }
      void flow.setViewport({
        x: start.x - i * 12,
        y: start.y + Math.sin(i / 25) * 300,
        zoom: 0.8 + 0.4 * Math.sin(i / 40),
      });
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
}

declare global {
  interface Window {
    __headwaterBench?: GraphBenchResult;
    /** With `interact=1`: the load's figures, once readable and before the pan and zoom. */
    __headwaterBenchReady?: GraphBenchResult;
    /** Set by the harness (with `hold=1`) to start the pan and zoom. */
    __headwaterBenchGo?: boolean;
  }
}

const empty = { nodes: new Set<string>(), edges: new Set<string>() };
const noActions = { toggleColumns: () => undefined, toggleGroup: () => undefined };

/**
 * `/bench/graph?nodes=2000[&interact=1[&hold=1]]`: generates a lineage graph, lays it out and renders it with the same code as the
 * lineage page, then publishes the timings on `window.__headwaterBench` (for `npm run bench` through
 * playwright) and on the page.
 */
export function BenchGraphPage() {
  const [params] = useSearchParams();
  const count = Math.max(2, Math.min(20_000, Number(params.get('nodes') ?? 2000) || 2000));
  const [started] = useState(() => performance.now());
  const model = useMemo(() => buildLineageModel(generateLineageGraph(count)), [count]);
  const [layout, setLayout] = useState<{ result: LayoutResult; at: number }>();
  const [result, setResult] = useState<GraphBenchResult>();
  const interact = params.get('interact') === '1';
  const hold = params.get('hold') === '1';
  const [ready, setReady] = useState<(flow: ReactFlowInstance<FlowNode>) => void>();
  const [flowReady] = useState(
    () => new Promise<ReactFlowInstance<FlowNode>>((resolve) => setReady(() => resolve)),
  );

  useEffect(() => {
    void layoutGraph(layoutRequestOf(model)).then((result) => setLayout({ result, at: performance.now() }));
  }, [model]);

  useEffect(() => {
    if (!layout) return;
    let frame = 0;
    // Poll, once per frame, until the graph is drawn and then readable.
    let drawnAt: number | undefined;
    const check = () => {
      if (drawnAt === undefined && graphDrawn()) drawnAt = performance.now();
      if (drawnAt === undefined || drawnLabelPx() < readablePx) {
        frame = requestAnimationFrame(check);
        return;
      }
      const now = performance.now();
      let edges = 0;
      for (const targets of model.out.values()) edges += targets.length;
      const measured = {
        nodes: model.nodes.size,
        edges,
        layoutMs: Math.round(layout.result.elapsedMs),
        renderMs: Math.round(drawnAt - layout.at),
        totalMs: Math.round(drawnAt - started),
        readableMs: Math.round(now - started),
      };
      if (!interact) {
        window.__headwaterBench = measured;
        setResult(measured);
        return;
      }
      // With `hold=1` the harness reads the browser's CPU counters first, then says go.
      window.__headwaterBenchReady = measured;
      const go = new Promise<void>((resolve) => {
        const poll = () => (!hold || window.__headwaterBenchGo ? resolve() : requestAnimationFrame(poll));
        poll();
      });
      void Promise.all([flowReady, go])
        .then(([flow]) => measurePanZoom(flow))
        .then((panZoom) => {
          const withPanZoom = { ...measured, panZoom };
          window.__headwaterBench = withPanZoom;
          setResult(withPanZoom);
        });
    };
    frame = requestAnimationFrame(check);
    return () => cancelAnimationFrame(frame);
  }, [layout, model, started, interact, hold, flowReady]);

  const firstId = model.nodes.keys().next().value ?? '';
  const input = useMemo<FlowInput | undefined>(
    () =>
      layout && {
        model,
        layout: layout.result,
        rootId: firstId,
        selectedId: undefined,
        causes: noCauses,
        path: empty,
        expandedColumns: new Set(),
        columnEdges: [],
        collapsedGroups: new Set(),
      },
    [layout, model, firstId],
  );
  return (
    <div className="lineage-page">
      <p className="toolbar" data-testid="bench-result">
        {result
          ? `${result.nodes} nodes, ${result.edges} edges: layout ${result.layoutMs} ms, render ${result.renderMs} ms, readable after ${result.readableMs} ms` +
            (result.panZoom
              ? `; pan and zoom ${result.panZoom.fps} frames/s (p95 ${result.panZoom.p95FrameMs} ms)`
              : '')
          : `Laying out ${model.nodes.size} nodes…`}
      </p>
      <div className="graph-frame graph-frame--full">
        {input && (
          <LineageGraph
            input={input}
            actions={noActions}
            onNodeClick={() => undefined}
            {...(ready ? { onReady: ready } : {})}
          />
        )}
      </div>
    </div>
  );
}
