import type { LayoutRequest, LayoutResult, Point } from './layout.js';

const layerGap = 72;
const nodeGap = 24;
const groupPadding = { top: 36, side: 12 };
const sweeps = 4;

/**
 * A linear-time layered layout for graphs too large for ELK to lay out interactively: longest-path layering,
 * a few barycenter sweeps to reduce crossings, and evenly spaced rows. Same input and output as
 * {@link layoutGraph}; child jobs are placed like any node and their group is the box around them.
 */
export function fastLayeredLayout(request: LayoutRequest): LayoutResult {
  const started = performance.now();
  const ids = request.nodes.map((n) => n.id);
  const index = new Map(ids.map((id, i) => [id, i]));
  const preds: number[][] = ids.map(() => []);
  const succs: number[][] = ids.map(() => []);
  for (const edge of request.edges) {
    const s = index.get(edge.source);
    const t = index.get(edge.target);
    if (s === undefined || t === undefined || s === t) continue;
    succs[s]!.push(t);
    preds[t]!.push(s);
  }

  // Longest path from the sources (Kahn's order); nodes on cycles are placed after their placed predecessors.
  const layer = new Array<number>(ids.length).fill(0);
  const remaining = preds.map((p) => p.length);
  const queue: number[] = [];
  remaining.forEach((count, i) => count === 0 && queue.push(i));
  const placed = new Uint8Array(ids.length);
  for (let head = 0; head < ids.length; head++) {
    if (head === queue.length) {
      const next = placed.findIndex((p) => p === 0);
      queue.push(next);
    }
    const v = queue[head]!;
    placed[v] = 1;
    for (const w of succs[v]!) {
      if (placed[w]) continue;
      layer[w] = Math.max(layer[w]!, layer[v]! + 1);
      if (--remaining[w]! === 0) queue.push(w);
    }
  }

  const layers: number[][] = [];
  for (const v of queue) (layers[layer[v]!] ??= []).push(v);
  const order = new Float64Array(ids.length);
  const renumber = (row: number[]) => row.forEach((v, i) => (order[v] = i));
  layers.forEach(renumber);
  const barycenter = (v: number, neighbours: number[]) =>
    neighbours.length === 0
      ? order[v]!
      : neighbours.reduce((sum, u) => sum + order[u]!, 0) / neighbours.length;
  for (let sweep = 0; sweep < sweeps; sweep++) {
    const down = sweep % 2 === 0;
    const sequence = down ? layers.slice(1) : layers.slice(0, -1).reverse();
    for (const row of sequence) {
      const keys = new Map(row.map((v) => [v, barycenter(v, down ? preds[v]! : succs[v]!)]));
      row.sort((a, b) => keys.get(a)! - keys.get(b)!);
      renumber(row);
    }
  }

  const positions = new Map<string, Point>();
  let height = 0;
  let x = 0;
  for (const row of layers) {
    let columnWidth = 0;
    let y = 0;
    for (const v of row) {
      const node = request.nodes[v]!;
      positions.set(node.id, { x, y });
      y += node.height + nodeGap;
      columnWidth = Math.max(columnWidth, node.width);
    }
    height = Math.max(height, y - nodeGap);
    x += columnWidth + layerGap;
  }
  const width = Math.max(0, x - layerGap);
  // Centre each layer vertically on the tallest, so that short layers do not all hug the top.
  for (const row of layers) {
    const last = request.nodes[row.at(-1)!]!;
    const bottom = positions.get(last.id)!.y + last.height;
    const shift = (height - bottom) / 2;
    for (const v of row) positions.get(request.nodes[v]!.id)!.y += shift;
  }

  const groupSizes = new Map<string, { width: number; height: number }>();
  const members = new Map<string, string[]>();
  for (const node of request.nodes)
    if (node.parent)
      (members.get(node.parent) ?? members.set(node.parent, []).get(node.parent)!).push(node.id);
  const sizeOf = new Map(request.nodes.map((n) => [n.id, n]));
  for (const [group, children] of members) {
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (const id of children) {
      const p = positions.get(id)!;
      const n = sizeOf.get(id)!;
      minX = Math.min(minX, p.x);
      minY = Math.min(minY, p.y);
      maxX = Math.max(maxX, p.x + n.width);
      maxY = Math.max(maxY, p.y + n.height);
    }
    const origin = { x: minX - groupPadding.side, y: minY - groupPadding.top };
    positions.set(group, origin);
    groupSizes.set(group, {
      width: maxX - minX + 2 * groupPadding.side,
      height: maxY - minY + groupPadding.top + groupPadding.side,
    });
    // xyflow positions a child relative to its parent.
    for (const id of children) {
      const p = positions.get(id)!;
      positions.set(id, { x: p.x - origin.x, y: p.y - origin.y });
    }
  }
  return { positions, groupSizes, width, height, elapsedMs: performance.now() - started };
}
