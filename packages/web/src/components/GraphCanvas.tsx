import { useEffect, useRef } from 'react';
import { useStoreApi } from '@xyflow/react';
import type { CauseKind } from '../api/analysis.js';
import {
  CANVAS_LABEL_PX,
  canvasDrawsLabels,
  drawScene,
  type Scene,
  type ScenePalette,
} from '../graph/scene.js';
import { causeLabels, causeMarks } from './RootCause.js';

/** The words of a node's cause badges on the canvas, as {@link CauseBadges} writes them. */
export const canvasCauseText = (kinds: readonly CauseKind[]): string =>
  kinds.map((kind) => `${causeMarks[kind]} ${causeLabels[kind]}`).join('  ');

/** How much of the screen's width and height the canvas reaches beyond each side. */
const margin = 0.25;

/** The background's dot patterns, one per tile size in canvas pixels, made on first use. */
function dotPatterns(context: CanvasRenderingContext2D): (pixels: number) => CanvasPattern | null {
  const made = new Map<number, CanvasPattern | null>();
  return (pixels) => {
    if (made.has(pixels)) return made.get(pixels)!;
    const tile = document.createElement('canvas');
    tile.width = pixels;
    tile.height = pixels;
    const dot = tile.getContext('2d');
    // xyflow's dotted background: a dot at each tile's corner, in #e2e8f0 (LineageGraph's colour).
    if (dot) {
      dot.fillStyle = '#e2e8f0';
      dot.fillRect(0, 0, 1, 1);
    }
    const pattern = dot ? context.createPattern(tile, 'repeat') : null;
    made.set(pixels, pattern);
    return pattern;
  };
}

function paletteOf(element: Element, context: CanvasRenderingContext2D): ScenePalette {
  const style = getComputedStyle(element);
  const color = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    font: style.fontFamily || 'sans-serif',
    dots: dotPatterns(context),
    colors: {
      edge: color('--xy-edge-stroke-default', '#b1b1b7'),
      text: color('--text', '#111827'),
      muted: color('--muted', '#6b7280'),
      accent: color('--accent', '#0f4c5c'),
      path: color('--path', '#0891b2'),
      failed: color('--failed', '#dc2626'),
      completed: color('--completed', '#16a34a'),
      aborted: color('--aborted', '#b45309'),
      running: color('--running', '#2563eb'),
      new: color('--new', '#6b7280'),
      dataset: color('--dataset', '#94a3b8'),
      column: color('--column', '#7c3aed'),
      background: color('--graph-background', 'white'),
    },
  };
}

/**
 * A large graph's edges, and its nodes when they are too small to read in full, drawn on one canvas under
 * xyflow's nodes. It redraws on each change of the viewport straight from xyflow's store, without a React
 * render: a frame costs one pass over the boxes and edges (those off screen are skipped) and no DOM change. The
 * canvas says what it drew in `data-drawn-nodes`, `data-drawn-column-edges` and, when names are on it, `data-label-px` (their size on
 * screen), for the benchmark and the tests.
 */
export function GraphCanvas({ scene, withNodes }: { scene: Scene; withNodes: boolean }) {
  const store = useStoreApi();
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const element = canvas.current;
    // Opaque (it paints the frame's background itself): the software compositor then draws the canvas as an
    // opaque quad and skips what is under it.
    const context = element?.getContext('2d', { alpha: false });
    if (!element || !context) return;
    const palette = paletteOf(element, context);
    const widths = new Map<string, number>();
    const measure = (text: string, font: string) => {
      const key = `${font}\n${text}`;
      let width = widths.get(key);
      if (width === undefined) {
        context.font = font;
        width = context.measureText(text).width;
        widths.set(key, width);
      }
      return width;
    };
    // The canvas covers the screen and a margin around it, drawn at one viewport and then moved and scaled
    // with a CSS transform (the compositor's work) while the screen stays inside it and the zoom within a
    // quarter of the one it was drawn at; only then, and once a move ends, is it drawn again.
    const screen = { width: 0, height: 0 };
    const size = { width: 0, height: 0, pixelRatio: window.devicePixelRatio || 1 };
    let drawnAt: { x: number; y: number; zoom: number } | undefined;
    const redraw = (x: number, y: number, zoom: number) => {
      const mx = screen.width * margin;
      const my = screen.height * margin;
      const drawn = drawScene(
        context,
        scene,
        { x: x + mx, y: y + my, zoom },
        size,
        palette,
        withNodes,
        measure,
      );
      drawnAt = { x: x + mx, y: y + my, zoom };
      element.dataset.drawnNodes = String(drawn.nodes);
      element.dataset.drawnColumnEdges = String(drawn.columnEdges);
      if (withNodes && drawn.nodes > 0 && canvasDrawsLabels(zoom))
        element.dataset.labelPx = String(CANVAS_LABEL_PX);
      else delete element.dataset.labelPx;
    };
    const place = (exact: boolean) => {
      const [x, y, zoom] = store.getState().transform;
      let k = drawnAt ? zoom / drawnAt.zoom : 1;
      let tx = drawnAt ? x - drawnAt.x * k : 0;
      let ty = drawnAt ? y - drawnAt.y * k : 0;
      const covered =
        tx <= 0 && ty <= 0 && tx + size.width * k >= screen.width && ty + size.height * k >= screen.height;
      if (
        !drawnAt ||
        !covered ||
        k > 1.25 ||
        k < 0.8 ||
        (exact && (k !== 1 || tx !== -screen.width * margin))
      ) {
        redraw(x, y, zoom);
        k = 1;
        tx = -screen.width * margin;
        ty = -screen.height * margin;
      }
      element.style.transform = `translate(${tx}px, ${ty}px) scale(${k})`;
    };
    let settle = 0;
    const observer = new ResizeObserver(() => {
      const parent = element.parentElement;
      if (!parent) return;
      screen.width = parent.clientWidth;
      screen.height = parent.clientHeight;
      size.width = Math.ceil(screen.width * (1 + 2 * margin));
      size.height = Math.ceil(screen.height * (1 + 2 * margin));
      element.style.width = `${size.width}px`;
      element.style.height = `${size.height}px`;
      element.width = Math.round(size.width * size.pixelRatio);
      element.height = Math.round(size.height * size.pixelRatio);
      drawnAt = undefined;
      place(true);
    });
    if (element.parentElement) observer.observe(element.parentElement);
    let last = store.getState().transform;
    const unsubscribe = store.subscribe((state) => {
      if (state.transform === last) return;
      last = state.transform;
      place(false);
      // Sharp again once the view rests: drawn at the exact zoom 150 ms after the last move.
      clearTimeout(settle);
      settle = window.setTimeout(() => place(true), 150);
    });
    return () => {
      observer.disconnect();
      unsubscribe();
      clearTimeout(settle);
    };
  }, [scene, withNodes, store]);
  return <canvas ref={canvas} className="graph-canvas__layer" aria-hidden="true" />;
}
