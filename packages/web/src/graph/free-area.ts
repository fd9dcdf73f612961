import { getViewportForBounds, type Edge, type Node, type ReactFlowInstance } from '@xyflow/react';

/** A rectangle on screen, in pixels from the graph frame's top-left corner. */
export interface ScreenBox {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Pixels to keep clear on each side of a fitted graph. */
export interface SidePadding {
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
  readonly left: number;
}

/**
 * The padding that fits a graph of `bounds` (graph units) into the part of `frame` its own controls leave free:
 * each control is kept clear either by a band along the frame's edge nearest to it (top or bottom: best beside a
 * wide graph) or by a column (left or right: best beside a tall one), whichever way, over every control, draws
 * the graph largest. Each side also keeps `margin`. The controls are the zoom buttons, the minimap or the large
 * graph's overview, the legend.
 *
 * @example
 * freeAreaPadding({ width: 1000, height: 600 }, [{ x: 15, y: 500, width: 30, height: 85 }], { width: 2000, height: 300 }, 24)
 * // -> { top: 24, right: 24, bottom: 124, left: 24 }: a band along the bottom, since the graph is wide
 */
export function freeAreaPadding(
  frame: { readonly width: number; readonly height: number },
  panels: readonly ScreenBox[],
  bounds: { readonly width: number; readonly height: number },
  margin: number,
): SidePadding {
  const zoomIn = (p: SidePadding) =>
    Math.min(
      (frame.width - p.left - p.right) / Math.max(1, bounds.width),
      (frame.height - p.top - p.bottom) / Math.max(1, bounds.height),
    );
  let best: SidePadding | undefined;
  // At most a handful of controls: every way of keeping each one clear is tried (2^n).
  for (let ways = 0; ways < 1 << panels.length; ways++) {
    const p = { top: margin, right: margin, bottom: margin, left: margin };
    panels.forEach((panel, i) => {
      if (ways & (1 << i)) {
        if (panel.y + panel.height / 2 < frame.height / 2)
          p.top = Math.max(p.top, panel.y + panel.height + margin);
        else p.bottom = Math.max(p.bottom, frame.height - panel.y + margin);
      } else if (panel.x + panel.width / 2 < frame.width / 2) {
        p.left = Math.max(p.left, panel.x + panel.width + margin);
      } else {
        p.right = Math.max(p.right, frame.width - panel.x + margin);
      }
    });
    if (!best || zoomIn(p) > zoomIn(best)) best = p;
  }
  return best!;
}

/**
 * The controls drawn over a graph: xyflow's panels (the zoom buttons, the minimap), the large graph's overview, and
 * what a page lays over its graph frame (the legend), marked `data-graph-overlay`.
 */
export const GRAPH_OVERLAYS = '.react-flow__panel, .graph-overview, [data-graph-overlay]';

/**
 * Fits the graph to its frame so that no node is drawn under the zoom buttons, the minimap or the legend, at any
 * screen size: fitted with a margin alone when that leaves every control over empty space (the short last band of
 * a wrapped chain, a ragged layered graph's empty corner), else fitted to the part of the frame the controls leave
 * free (see {@link freeAreaPadding}). The lineage and workflow views both fit this way, on opening, on a resize and
 * from the fit button. Returns the padding used (none when there is nothing to fit).
 */
export async function fitToFreeArea<N extends Node, E extends Edge>(
  flow: ReactFlowInstance<N, E>,
  frame: HTMLElement | null,
  options: {
    readonly maxZoom: number;
    readonly minZoom?: number;
    /** Pixels between the boxes and the frame's edges or a control; default 2.5 % of the frame, at least 16. */
    readonly margin?: number;
  },
): Promise<SidePadding | undefined> {
  const nodes = flow.getNodes();
  if (!frame || nodes.length === 0) return undefined;
  const origin = frame.getBoundingClientRect();
  // The page's overlays are the frame's siblings, over it.
  const panels = [...(frame.parentElement ?? frame).querySelectorAll(GRAPH_OVERLAYS)].map((element) => {
    const box = element.getBoundingClientRect();
    return { x: box.left - origin.left, y: box.top - origin.top, width: box.width, height: box.height };
  });
  const size = { width: frame.clientWidth, height: frame.clientHeight };
  const margin = options.margin ?? Math.max(16, Math.round(Math.min(size.width, size.height) * 0.025));
  const bounds = flow.getNodesBounds(nodes);
  const plain = { top: margin, right: margin, bottom: margin, left: margin };
  const boxes = nodes.flatMap((node) => {
    const internal = flow.getInternalNode(node.id);
    if (!internal || node.type === 'group') return [];
    const { x, y } = internal.internals.positionAbsolute;
    return [
      {
        x,
        y,
        width: internal.measured.width ?? node.width ?? 0,
        height: internal.measured.height ?? node.height ?? 0,
      },
    ];
  });
  const clearOfPanels = (padding: SidePadding) => {
    const view = getViewportForBounds(
      bounds,
      size.width,
      size.height,
      options.minZoom ?? 0,
      options.maxZoom,
      pixels(padding),
    );
    return boxes.every((box) => {
      const left = view.x + box.x * view.zoom;
      const top = view.y + box.y * view.zoom;
      const right = left + box.width * view.zoom;
      const bottom = top + box.height * view.zoom;
      return panels.every(
        (panel) =>
          right <= panel.x ||
          left >= panel.x + panel.width ||
          bottom <= panel.y ||
          top >= panel.y + panel.height,
      );
    });
  };
  const padding = clearOfPanels(plain) ? plain : freeAreaPadding(size, panels, bounds, margin);
  await flow.fitView({
    padding: pixels(padding),
    maxZoom: options.maxZoom,
    ...(options.minZoom === undefined ? {} : { minZoom: options.minZoom }),
  });
  return padding;
}

const pixels = (padding: SidePadding) =>
  ({
    top: `${padding.top}px`,
    right: `${padding.right}px`,
    bottom: `${padding.bottom}px`,
    left: `${padding.left}px`,
  }) as const;
