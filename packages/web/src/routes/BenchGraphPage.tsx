import { useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { LineageGraph } from '../components/LineageGraph.js';
import type { FlowInput } from '../graph/flow-elements.js';
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
}

declare global {
  interface Window {
    __headwaterBench?: GraphBenchResult;
  }
}

const empty = { nodes: new Set<string>(), edges: new Set<string>() };
const noActions = { toggleColumns: () => undefined, toggleGroup: () => undefined };

/**
 * `/bench/graph?nodes=2000`: generates a lineage graph, lays it out and renders it with the same code as the
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

  useEffect(() => {
    void layoutGraph(layoutRequestOf(model)).then((result) => setLayout({ result, at: performance.now() }));
  }, [model]);

  useEffect(() => {
    if (!layout) return;
    let frame = 0;
    // xyflow draws nodes hidden, measures them, then shows them and their edges: poll until that happened.
    const check = () => {
      const shown = document.querySelector(
        '.react-flow__node[style*="visibility: visible"], .react-flow__node:not([style*="visibility"])',
      );
      if (shown && document.querySelector('.react-flow__edge')) {
        const now = performance.now();
        let edges = 0;
        for (const targets of model.out.values()) edges += targets.length;
        const measured = {
          nodes: model.nodes.size,
          edges,
          layoutMs: Math.round(layout.result.elapsedMs),
          renderMs: Math.round(now - layout.at),
          totalMs: Math.round(now - started),
        };
        window.__headwaterBench = measured;
        setResult(measured);
      } else frame = requestAnimationFrame(check);
    };
    frame = requestAnimationFrame(check);
    return () => cancelAnimationFrame(frame);
  }, [layout, model, started]);

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
          ? `${result.nodes} nodes, ${result.edges} edges: layout ${result.layoutMs} ms, render ${result.renderMs} ms, total ${result.totalMs} ms`
          : `Laying out ${model.nodes.size} nodes…`}
      </p>
      <div className="graph-frame graph-frame--full">
        {input && <LineageGraph input={input} actions={noActions} onNodeClick={() => undefined} />}
      </div>
    </div>
  );
}
