import type { ELK, ElkNode, LayoutOptions } from 'elkjs/lib/elk-api.js';
import { fastLayeredLayout } from './fast-layout.js';

/** A box to place. `parent` names a group (a parent job) the box is drawn inside. */
export interface LayoutNode {
  readonly id: string;
  readonly width: number;
  readonly height: number;
  readonly parent?: string;
}

export interface LayoutEdge {
  readonly source: string;
  readonly target: string;
}

export interface LayoutRequest {
  readonly nodes: readonly LayoutNode[];
  readonly edges: readonly LayoutEdge[];
  /** Ids of groups; their size is computed from what they hold. */
  readonly groups?: readonly string[];
}

export interface Point {
  x: number;
  y: number;
}

export interface LayoutResult {
  /** Top-left corners: relative to the group for a node in a group (as xyflow wants), else absolute. */
  readonly positions: ReadonlyMap<string, Point>;
  readonly groupSizes: ReadonlyMap<string, { width: number; height: number }>;
  readonly width: number;
  readonly height: number;
  readonly elapsedMs: number;
}

/** Left to right, the way data flows in the rest of the UI. */
const baseOptions: LayoutOptions = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.spacing.nodeNode': '24',
  'elk.layered.spacing.nodeNodeBetweenLayers': '72',
  'elk.spacing.componentComponent': '48',
  'elk.padding': '[top=16,left=16,bottom=16,right=16]',
  // xyflow draws its own edges between handles, so ELK's orthogonal routing would be wasted work.
  'elk.edgeRouting': 'POLYLINE',
};

/**
 * ELK (Java compiled to JavaScript) takes 2-5 s for 2,000 nodes even with its cheapest settings; above this many
 * nodes the linear-time {@link fastLayeredLayout} is used instead, so a large graph appears in well under a
 * second. Below it, ELK's better crossing minimisation is worth its time.
 */
export const elkMaxNodes = 400;

let elk: ELK | undefined;

/**
 * Lays out a lineage graph with ELK's layered algorithm (above {@link elkMaxNodes} nodes, with
 * {@link fastLayeredLayout}). Pure (no DOM), so it runs the same in the browser,
 * in a worker or in Node for a benchmark.
 *
 * @example
 * const { positions } = await layoutGraph({ nodes: [{ id: 'a', width: 200, height: 50 }], edges: [] });
 */
export async function layoutGraph(request: LayoutRequest): Promise<LayoutResult> {
  if (request.nodes.length > elkMaxNodes) return fastLayeredLayout(request);
  const started = performance.now();
  // Loaded on first use: ELK is most of the app's size, and pages without a graph do not need it.
  elk ??= new (await import('elkjs/lib/elk.bundled.js')).default();
  const groups = new Map<string, ElkNode>();
  for (const id of request.groups ?? [])
    groups.set(id, {
      id,
      children: [],
      layoutOptions: { 'elk.padding': '[top=36,left=12,bottom=12,right=12]' },
    });
  const root: ElkNode = {
    id: '__root',
    layoutOptions: {
      ...baseOptions,
      ...(groups.size > 0 ? { 'elk.hierarchyHandling': 'INCLUDE_CHILDREN' } : {}),
    },
    children: [],
    edges: request.edges.map((edge, index) => ({
      id: `e${index}`,
      sources: [edge.source],
      targets: [edge.target],
    })),
  };
  for (const node of request.nodes) {
    const box: ElkNode = { id: node.id, width: node.width, height: node.height };
    const group = node.parent === undefined ? undefined : groups.get(node.parent);
    (group ? group.children! : root.children!).push(box);
  }
  for (const group of groups.values()) if (group.children!.length > 0) root.children!.push(group);

  const laidOut = await elk.layout(root);
  const positions = new Map<string, Point>();
  const groupSizes = new Map<string, { width: number; height: number }>();
  for (const child of laidOut.children ?? []) {
    positions.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
    if (groups.has(child.id)) {
      groupSizes.set(child.id, { width: child.width ?? 0, height: child.height ?? 0 });
      for (const inner of child.children ?? []) positions.set(inner.id, { x: inner.x ?? 0, y: inner.y ?? 0 });
    }
  }
  return {
    positions,
    groupSizes,
    width: laidOut.width ?? 0,
    height: laidOut.height ?? 0,
    elapsedMs: performance.now() - started,
  };
}
