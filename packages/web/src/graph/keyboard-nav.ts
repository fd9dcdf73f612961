import { groupIdOf } from './flow-elements.js';
import type { LayoutResult, Point } from './layout.js';
import type { LineageModel } from './lineage-model.js';

export type NavKey = 'ArrowLeft' | 'ArrowRight' | 'ArrowUp' | 'ArrowDown';

/** A node's top-left corner on the canvas (nodes in a group are placed relative to it). */
export function absolutePosition(model: LineageModel, layout: LayoutResult, id: string): Point | undefined {
  const at = layout.positions.get(id);
  const node = model.nodes.get(id);
  if (!at || !node) return undefined;
  const group = node.type === 'JOB' ? groupIdOf(node) : undefined;
  const offset = group ? layout.positions.get(group) : undefined;
  return offset ? { x: at.x + offset.x, y: at.y + offset.y } : at;
}

/**
 * The node a key moves the selection to: left and right follow edges (upstream, downstream; the neighbour
 * nearest in height first), up and down go to the nearest node above or below in the same layer (the same
 * column of the left-to-right layout). Undefined when there is none that way.
 */
export function nextNode(
  model: LineageModel,
  layout: LayoutResult,
  from: string,
  key: NavKey,
): string | undefined {
  const here = absolutePosition(model, layout, from);
  if (!here) return undefined;
  const distance = (id: string) => {
    const at = absolutePosition(model, layout, id);
    return at ? Math.abs(at.y - here.y) + Math.abs(at.x - here.x) / 1000 : Infinity;
  };
  if (key === 'ArrowLeft' || key === 'ArrowRight') {
    const neighbours = (key === 'ArrowRight' ? model.out : model.in).get(from) ?? [];
    return [...neighbours].sort((a, b) => distance(a) - distance(b))[0];
  }
  let best: string | undefined;
  let bestGap = Infinity;
  for (const id of model.nodes.keys()) {
    const at = absolutePosition(model, layout, id);
    if (!at || id === from || Math.abs(at.x - here.x) > 1) continue;
    const gap = key === 'ArrowDown' ? at.y - here.y : here.y - at.y;
    if (gap > 0 && gap < bestGap) {
      best = id;
      bestGap = gap;
    }
  }
  return best;
}
