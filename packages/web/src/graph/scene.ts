import type { Edge } from '@xyflow/react';
import { shortName } from '../format.js';
import type { CauseKind } from '../api/analysis.js';
import { FIELD_ROW_HEIGHT, NODE_HEIGHT, fieldHandleY, type FlowNode } from './flow-elements.js';
import { jobRunLabel } from './lineage-model.js';

/** A node as the canvas draws it: an absolute box (graph units) and what its look depends on. */
export interface SceneBox {
  readonly id: string;
  readonly kind: 'dataset' | 'job' | 'group';
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  /** The short name, as the DOM node shows it below the near level of detail. */
  readonly label: string;
  /** Upper-case kind line: `DATASET`, `JOB · FAILED`. */
  readonly caption: string;
  readonly state: string | undefined;
  readonly classes: ReadonlySet<string>;
  readonly isRoot: boolean;
  readonly causes: string;
  readonly collapsed: boolean;
  /** An expanded dataset's column names, in the order of its rows; empty otherwise. */
  readonly fields: readonly string[];
}

/** An edge as a cubic curve from the source's right side to the target's left side. */
export interface SceneEdge {
  readonly sx: number;
  readonly sy: number;
  readonly tx: number;
  readonly ty: number;
  /** `is-cause-path`, `is-path`, `is-dimmed`, `is-column` (column to column) or '' (plain). */
  readonly style: string;
}

/**
 * What the canvas draws for a large graph, from the same xyflow nodes and edges the DOM renders: positions made
 * absolute (a node in a group is relative to it), boxes in drawing order (groups first) and edges between the
 * handles xyflow would use (the middle of the left and right sides).
 */
export interface Scene {
  readonly boxes: readonly SceneBox[];
  readonly edges: readonly SceneEdge[];
  readonly byId: ReadonlyMap<string, SceneBox>;
}

const edgeStyles = ['is-column', 'is-cause-path', 'is-path', 'is-dimmed'] as const;

/**
 * Where an edge meets a box: at an expanded dataset's column row for a column handle (`in:field`, `out:field`),
 * else the middle of the side, as xyflow places the handles of the DOM nodes.
 */
function handleY(box: SceneBox, handle: string | null | undefined): number {
  const field = handle?.slice(handle.indexOf(':') + 1);
  const index = handle?.includes(':') ? box.fields.indexOf(field!) : -1;
  return index < 0 ? box.y + box.height / 2 : box.y + fieldHandleY(box.height, box.fields.length, index);
}

/** Builds the {@link Scene} of a graph; linear in its size, once per change of the elements, never per frame. */
export function sceneOf(
  nodes: readonly FlowNode[],
  edges: readonly Edge[],
  causeText: (kinds: readonly CauseKind[]) => string,
): Scene {
  const relative = new Map(nodes.map((n) => [n.id, n]));
  const byId = new Map<string, SceneBox>();
  const boxes: SceneBox[] = [];
  for (const node of nodes) {
    const parent = node.parentId ? relative.get(node.parentId) : undefined;
    const classes = new Set((node.className ?? '').split(' ').filter(Boolean));
    const common = {
      id: node.id,
      x: node.position.x + (parent?.position.x ?? 0),
      y: node.position.y + (parent?.position.y ?? 0),
      width: node.width ?? 0,
      height: node.height ?? 0,
      classes,
    };
    let box: SceneBox;
    if (node.type === 'group') {
      box = {
        ...common,
        kind: 'group',
        label: node.data.label,
        caption: node.data.collapsed ? `${node.data.childCount} jobs` : '',
        state: node.data.state,
        isRoot: false,
        causes: '',
        collapsed: node.data.collapsed,
        fields: [],
      };
    } else {
      const causes = causeText(node.data.causes);
      const name =
        node.type === 'job'
          ? node.data.node.data.simpleName || node.data.node.data.name
          : node.data.node.data.name;
      box = {
        ...common,
        kind: node.type,
        label: shortName(name),
        caption: node.type === 'job' ? `JOB · ${jobRunLabel(node.data.node).toUpperCase()}` : 'DATASET',
        state: node.type === 'job' ? node.data.state : undefined,
        isRoot: node.data.isRoot,
        causes,
        collapsed: false,
        fields:
          node.type === 'dataset' && node.data.expanded ? node.data.node.data.fields.map((f) => f.name) : [],
      };
    }
    byId.set(node.id, box);
    boxes.push(box);
  }
  // Groups first, so the jobs inside are drawn over their frame.
  boxes.sort((a, b) => Number(b.kind === 'group') - Number(a.kind === 'group'));
  const sceneEdges: SceneEdge[] = [];
  for (const edge of edges) {
    const source = byId.get(edge.source);
    const target = byId.get(edge.target);
    if (!source || !target) continue;
    const classes = edge.className ?? '';
    sceneEdges.push({
      sx: source.x + source.width,
      sy: handleY(source, edge.sourceHandle),
      tx: target.x,
      ty: handleY(target, edge.targetHandle),
      style: edgeStyles.find((s) => classes.includes(s)) ?? '',
    });
  }
  return { boxes, edges: sceneEdges, byId };
}

/** The topmost node (not a group frame unless nothing else is there) under a point in graph units. */
export function hitTest(scene: Scene, x: number, y: number): SceneBox | undefined {
  let group: SceneBox | undefined;
  for (const box of scene.boxes) {
    if (x < box.x || x > box.x + box.width || y < box.y || y > box.y + box.height) continue;
    if (box.kind !== 'group' || box.collapsed) return box;
    group = box;
  }
  return group;
}

/** The viewport as xyflow keeps it: screen = graph * zoom + offset. */
export interface SceneViewport {
  readonly x: number;
  readonly y: number;
  readonly zoom: number;
}

/** Colours and fonts, read once from the page's CSS custom properties so the canvas matches the DOM nodes. */
export interface ScenePalette {
  readonly font: string;
  /**
   * The background's dot in a square tile of `pixels` canvas pixels (the gap at the zoom drawn, rounded); null
   * where canvases cannot make patterns.
   */
  readonly dots: (pixels: number) => CanvasPattern | null;
  readonly colors: Readonly<Record<string, string>>;
}

/** The spacing of the background's dots, in graph units (the small graphs' xyflow background uses it too). */
export const backgroundGap = 24;

/** Screen pixels of node names on the canvas: the size the DOM's level of detail aims at. */
export const CANVAS_LABEL_PX = 13;
const captionPx = 10;

/** Whether at this zoom the canvas draws names (boxes too small for a word are drawn without). */
export const canvasDrawsLabels = (zoom: number): boolean => 240 * zoom >= 44;

/** What one {@link drawScene} drew: boxes and column-to-column edges (on screen or within its margin). */
export interface SceneDrawn {
  readonly nodes: number;
  readonly columnEdges: number;
}

/** Column names of an expanded dataset are drawn on the canvas from this zoom on (about 7 px tall). */
const canvasFieldZoom = 0.6;

/**
 * Draws the scene in screen space: edges, culled to the visible rectangle and stroked in one path per style, then
 * node boxes with their short names at {@link CANVAS_LABEL_PX}. With `withNodes` false only edges are drawn (the
 * DOM shows the nodes). Column edges are drawn as the DOM draws them: dashed, in the column colour, from and to
 * the rows of expanded datasets.
 */
export function drawScene(
  context: CanvasRenderingContext2D,
  scene: Scene,
  viewport: SceneViewport,
  size: { readonly width: number; readonly height: number; readonly pixelRatio: number },
  palette: ScenePalette,
  withNodes: boolean,
  measure: (text: string, font: string) => number,
): SceneDrawn {
  const { x: ox, y: oy, zoom } = viewport;
  context.setTransform(size.pixelRatio, 0, 0, size.pixelRatio, 0, 0);
  // Opaque: the frame's white under everything, so that the compositor blends nothing under the canvas.
  context.fillStyle = palette.colors.background!;
  context.fillRect(0, 0, size.width, size.height);
  // The visible rectangle in graph units, with a margin for curves that bulge out of their end points' box.
  const left = -ox / zoom;
  const top = -oy / zoom;
  const right = left + size.width / zoom;
  const bottom = top + size.height / zoom;
  const colors = palette.colors;
  // The dotted background, here rather than xyflow's <Background>: its SVG pattern, re-rasterised at every
  // frame of a pan, cost about a third of the frame rate at 5,000 nodes.
  const tile = Math.round(backgroundGap * zoom * size.pixelRatio);
  const dots = tile >= 6 ? palette.dots(tile) : null;
  if (dots) {
    // One fill with a tile of canvas pixels moved by whole pixels, not a call per dot: a pattern scaled to the
    // zoom is resampled pixel by pixel, which cost about a fifth of a redraw. The gap is rounded to a pixel.
    dots.setTransform(
      new DOMMatrix([1, 0, 0, 1, Math.round(ox * size.pixelRatio), Math.round(oy * size.pixelRatio)]),
    );
    context.setTransform(1, 0, 0, 1, 0, 0);
    context.fillStyle = dots;
    context.fillRect(0, 0, size.width * size.pixelRatio, size.height * size.pixelRatio);
    context.setTransform(size.pixelRatio, 0, 0, size.pixelRatio, 0, 0);
  }
  let columnEdges = 0;
  for (const style of ['', 'is-dimmed', 'is-path', 'is-cause-path', 'is-column']) {
    context.beginPath();
    let any = false;
    for (const e of scene.edges) {
      if (e.style !== style) continue;
      if (Math.max(e.sx, e.tx) < left || Math.min(e.sx, e.tx) > right) continue;
      if (Math.max(e.sy, e.ty) < top || Math.min(e.sy, e.ty) > bottom) continue;
      // The curve xyflow's default edge draws between a right and a left handle.
      const distance = e.tx - e.sx;
      const offset = distance >= 0 ? 0.5 * distance : 0.25 * 25 * Math.sqrt(-distance);
      const sx = e.sx * zoom + ox;
      const sy = e.sy * zoom + oy;
      const tx = e.tx * zoom + ox;
      const ty = e.ty * zoom + oy;
      context.moveTo(sx, sy);
      context.bezierCurveTo(sx + offset * zoom, sy, tx - offset * zoom, ty, tx, ty);
      any = true;
      if (style === 'is-column') columnEdges++;
    }
    if (!any) continue;
    const highlighted = style === 'is-path' || style === 'is-cause-path';
    context.strokeStyle =
      style === 'is-cause-path'
        ? colors.failed!
        : style === 'is-path'
          ? colors.path!
          : style === 'is-column'
            ? colors.column!
            : colors.edge!;
    context.globalAlpha = style === 'is-dimmed' ? 0.2 : 1;
    context.lineWidth = highlighted ? 3 : style === 'is-column' ? 1.5 : 1;
    context.setLineDash(style === 'is-cause-path' ? [10, 3] : style === 'is-column' ? [5, 4] : []);
    context.stroke();
  }
  context.setLineDash([]);
  context.globalAlpha = 1;
  if (!withNodes) return { nodes: 0, columnEdges };

  const labels = canvasDrawsLabels(zoom);
  const labelFont = `600 ${CANVAS_LABEL_PX}px ${palette.font}`;
  const captionFont = `${captionPx}px ${palette.font}`;
  let drawn = 0;
  for (const box of scene.boxes) {
    if (box.x > right || box.x + box.width < left || box.y > bottom || box.y + box.height < top) continue;
    drawn++;
    const x = box.x * zoom + ox;
    const y = box.y * zoom + oy;
    const w = box.width * zoom;
    const h = box.height * zoom;
    context.globalAlpha = box.classes.has('is-dimmed') ? 0.25 : 1;
    const border = borderColor(box, colors);
    const radius = Math.min(8 * zoom, h / 2);
    if (box.kind === 'group' && !box.collapsed) {
      context.fillStyle = 'rgba(241, 245, 249, 0.5)';
      context.strokeStyle = box.state === 'FAILED' ? '#fca5a5' : '#cbd5e1';
      context.lineWidth = Math.max(1, 2 * zoom);
      context.setLineDash([6, 4]);
      context.beginPath();
      context.roundRect(x, y, w, h, radius);
      context.fill();
      context.stroke();
      context.setLineDash([]);
      if (labels)
        drawText(
          context,
          box.label,
          x + 8,
          y + 4 + CANVAS_LABEL_PX,
          w - 16,
          labelFont,
          colors.text!,
          measure,
        );
      continue;
    }
    context.fillStyle = fillColor(box);
    context.beginPath();
    context.roundRect(x, y, w, h, radius);
    context.fill();
    context.lineWidth = Math.max(1, 2 * zoom);
    context.strokeStyle = border;
    context.stroke();
    if (box.kind !== 'dataset') {
      // A job's (and a collapsed group's) thick left border: its state, before any word is read.
      context.fillStyle = border;
      context.fillRect(x, y + radius / 2, Math.max(2, 8 * zoom), h - radius);
    }
    const ring = box.classes.has('is-selected') ? colors.accent : box.isRoot ? '#fde68a' : undefined;
    if (ring || box.classes.has('is-path')) {
      context.lineWidth = 3;
      context.strokeStyle = ring ?? colors.path!;
      context.beginPath();
      context.roundRect(x - 3, y - 3, w + 6, h + 6, radius + 3);
      context.stroke();
    }
    if (box.fields.length > 0 && zoom >= canvasFieldZoom) drawFields(context, box, x, y, w, zoom, palette);
    if (!labels) continue;
    const inner = x + Math.max(4, 10 * zoom) + (box.kind === 'dataset' ? 0 : 4 * zoom);
    const room = w - (inner - x) - 4;
    // An expanded dataset's names stay in the head of its box, above its rows.
    const head = box.fields.length > 0 ? Math.min(h, NODE_HEIGHT * zoom) : h;
    if (head >= captionPx + CANVAS_LABEL_PX + 6) {
      const gap = (head - captionPx - CANVAS_LABEL_PX - 3) / 2;
      drawText(
        context,
        box.caption,
        inner,
        y + gap + captionPx - 1,
        room,
        captionFont,
        colors.muted!,
        measure,
      );
      drawText(
        context,
        box.label,
        inner,
        y + gap + captionPx + 3 + CANVAS_LABEL_PX - 2,
        room,
        labelFont,
        colors.text!,
        measure,
      );
    } else {
      drawText(
        context,
        box.label,
        inner,
        y + head / 2 + CANVAS_LABEL_PX / 2 - 2,
        room,
        labelFont,
        colors.text!,
        measure,
      );
    }
    if (box.causes) {
      context.font = `700 ${captionPx}px ${palette.font}`;
      const width = measure(box.causes, context.font) + 8;
      context.fillStyle = colors.failed!;
      context.fillRect(x, y - captionPx - 7, width, captionPx + 4);
      context.fillStyle = 'white';
      context.fillText(box.causes, x + 4, y - 6);
    }
  }
  context.globalAlpha = 1;
  return { nodes: drawn, columnEdges };
}

/** An expanded dataset's column rows, where the DOM lists them (see {@link fieldHandleY}). */
function drawFields(
  context: CanvasRenderingContext2D,
  box: SceneBox,
  x: number,
  y: number,
  w: number,
  zoom: number,
  palette: ScenePalette,
): void {
  const first = y + fieldHandleY(box.height, box.fields.length, 0) * zoom - (FIELD_ROW_HEIGHT / 2) * zoom;
  context.fillStyle = palette.colors.muted!;
  context.fillRect(x + 2, first - 1, w - 4, 1);
  context.font = `${11.5 * zoom}px ui-monospace, Menlo, monospace`;
  context.fillStyle = palette.colors.text!;
  box.fields.forEach((field, i) => {
    const middle = y + fieldHandleY(box.height, box.fields.length, i) * zoom;
    context.fillText(field, x + 10 * zoom, middle + 4 * zoom, w - 20 * zoom);
  });
}

function borderColor(box: SceneBox, colors: Readonly<Record<string, string>>): string {
  if (box.kind === 'dataset') return box.classes.has('is-cause-path') ? colors.failed! : colors.dataset!;
  switch (box.state) {
    case 'COMPLETED':
      return colors.completed!;
    case 'FAILED':
      return colors.failed!;
    case 'ABORTED':
      return colors.aborted!;
    case 'RUNNING':
      return colors.running!;
    default:
      return colors.new!;
  }
}

function fillColor(box: SceneBox): string {
  if (box.kind === 'dataset') return 'white';
  return box.state === 'FAILED' ? '#fef2f2' : box.state === 'ABORTED' ? '#fffbeb' : '#f8fafc';
}

/** Draws `text` at a baseline, cut with an ellipsis to `room` pixels. */
function drawText(
  context: CanvasRenderingContext2D,
  text: string,
  x: number,
  baseline: number,
  room: number,
  font: string,
  color: string,
  measure: (text: string, font: string) => number,
): void {
  if (room < 12 || !text) return;
  let shown = text;
  const width = measure(text, font);
  if (width > room) {
    const keep = Math.max(1, Math.floor((text.length * (room - 8)) / width));
    shown = `${text.slice(0, keep)}…`;
  }
  context.font = font;
  context.fillStyle = color;
  context.fillText(shown, x, baseline);
}
