import type { LayoutRequest, LayoutResult, Point } from './layout.js';

const layerGap = 72;
const nodeGap = 24;
const groupPadding = { top: 36, side: 12 };
/** Between two bands of a wrapped layout: room for the edge that runs back to the next band's start. */
const bandGap = 96;
/** A graph narrower than this (8 layers of boxes; about 1,600 px on screen at a readable zoom) is never wrapped. */
const wrapWiderThan = 2_400;
const sweeps = 4;

/**
 * The explorer's one layout, at every size: longest-path layering, a few barycenter sweeps to reduce crossings,
 * child jobs of a group kept together in each layer, and evenly spaced rows. Linear in the graph's size (5,000
 * nodes in well under 100 ms, where ELK's layered algorithm takes 10 s or more), so the same picture is drawn
 * whether a graph has 10 nodes or 10,000. Each group is the box around its children. Asked to (`wrap`), a long
 * chain is cut into bands of layers, one under the other (see {@link bandsOf}).
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

  // The child jobs of one group stay together in each layer, where their group's members are on average, so
  // that the group's box holds them and nothing else of that layer.
  for (const row of layers) {
    const slots = new Map<string, { sum: number; count: number }>();
    row.forEach((v, i) => {
      const parent = request.nodes[v]!.parent;
      if (parent === undefined) return;
      const slot = slots.get(parent) ?? { sum: 0, count: 0 };
      slot.sum += i;
      slot.count++;
      slots.set(parent, slot);
    });
    if (slots.size === 0) continue;
    const key = new Map(
      row.map((v, i) => {
        const slot = slots.get(request.nodes[v]!.parent ?? '');
        return [v, slot ? slot.sum / slot.count : i] as const;
      }),
    );
    row.sort(
      (a, b) =>
        key.get(a)! - key.get(b)! ||
        (request.nodes[a]!.parent ?? '').localeCompare(request.nodes[b]!.parent ?? '') ||
        order[a]! - order[b]!,
    );
    renumber(row);
  }

  // Each layer's boxes stacked from y = 0; its width, its extent (with a group's bottom border) and the bottom of
  // its last box, by which it is centred.
  const positions = new Map<string, Point>();
  const columns = layers.map((row) => {
    let width = 0;
    let y = 0;
    let previousParent: string | undefined;
    for (const v of row) {
      const node = request.nodes[v]!;
      // Room for a group's header above its first child and its border below its last.
      if (node.parent !== previousParent) {
        if (previousParent !== undefined) y += groupPadding.side;
        if (node.parent !== undefined) y += groupPadding.top;
      }
      previousParent = node.parent;
      positions.set(node.id, { x: 0, y });
      y += node.height + nodeGap;
      width = Math.max(width, node.width);
    }
    const last = request.nodes[row.at(-1)!]!;
    const bottom = positions.get(last.id)!.y + last.height;
    if (previousParent !== undefined) y += groupPadding.side;
    return { width, extent: y - nodeGap, bottom };
  });
  // A group's jobs stay in one band: no break between two layers a group has members in.
  const groupLayers = new Map<string, { first: number; last: number }>();
  request.nodes.forEach((node, v) => {
    if (node.parent === undefined) return;
    const span = groupLayers.get(node.parent) ?? { first: layer[v]!, last: layer[v]! };
    groupLayers.set(node.parent, {
      first: Math.min(span.first, layer[v]!),
      last: Math.max(span.last, layer[v]!),
    });
  });
  const breakable = columns.map(() => true);
  for (const { first, last } of groupLayers.values()) breakable.fill(false, first, last);
  let width = 0;
  let top = 0;
  for (const band of bandsOf(columns, breakable, request.wrap?.aspect)) {
    const bandHeight = Math.max(...band.map((l) => columns[l]!.extent));
    let x = 0;
    for (const l of band) {
      // Each layer centred vertically on the band's tallest, so that short layers do not all hug its top.
      const shift = top + (bandHeight - columns[l]!.bottom) / 2;
      for (const v of layers[l]!) {
        const at = positions.get(request.nodes[v]!.id)!;
        at.x = x;
        at.y += shift;
      }
      x += columns[l]!.width + layerGap;
    }
    width = Math.max(width, x - layerGap);
    top += bandHeight + bandGap;
  }
  const height = Math.max(0, top - bandGap);

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

/**
 * The layers of each band, left to right, bands top to bottom. One band unless `aspect` is given and the graph is
 * wider than {@link wrapWiderThan} and more than twice as wide as `aspect` for its height (a long chain): then it is cut into bands, at layers `breakable`
 * after, of as many layers as bring the whole closest to `aspect`. It depends on the graph only, not on the
 * screen, so the same graph is always drawn the same.
 */
function bandsOf(
  columns: readonly { readonly width: number; readonly extent: number }[],
  breakable: readonly boolean[],
  aspect: number | undefined,
): number[][] {
  const all = columns.map((_, l) => l);
  const wholeWidth = columns.reduce((sum, c) => sum + c.width + layerGap, -layerGap);
  const wholeHeight = Math.max(0, ...columns.map((c) => c.extent));
  if (!aspect || wholeWidth <= wrapWiderThan || wholeWidth <= 2 * aspect * wholeHeight) return [all];
  const cut = (most: number): number[][] => {
    const bands: number[][] = [];
    for (let start = 0; start < columns.length;) {
      let end = Math.min(columns.length, start + most);
      while (end < columns.length && !breakable[end - 1]) end++;
      bands.push(all.slice(start, end));
      start = end;
    }
    return bands;
  };
  let best = [all];
  let bestScore = Math.abs(Math.log(wholeWidth / wholeHeight / aspect));
  for (let most = 1; most < columns.length; most++) {
    const bands = cut(most);
    const width = Math.max(
      ...bands.map((band) => band.reduce((sum, l) => sum + columns[l]!.width + layerGap, -layerGap)),
    );
    const height =
      bands.reduce((sum, band) => sum + Math.max(...band.map((l) => columns[l]!.extent)), 0) +
      (bands.length - 1) * bandGap;
    const score = Math.abs(Math.log(width / height / aspect));
    if (score < bestScore) [best, bestScore] = [bands, score];
  }
  return best;
}
