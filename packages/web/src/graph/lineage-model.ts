import { isRedacted } from '../api/redacted.js';
import type { DatasetNode, JobNode, LineageGraphResponse, RunState } from '../api/types.js';

/** A lineage graph indexed for traversal: every lookup is a Map or Set access, never an array scan. */
export interface LineageModel {
  readonly nodes: ReadonlyMap<string, DatasetNode | JobNode>;
  /** Node id to the ids its edges point to (downstream). */
  readonly out: ReadonlyMap<string, readonly string[]>;
  /** Node id to the ids whose edges point to it (upstream). */
  readonly in: ReadonlyMap<string, readonly string[]>;
}

/** The key of an edge in the Sets that traversals return. */
export const edgeKey = (origin: string, destination: string): string => `${origin}->${destination}`;

/**
 * Indexes the server's `{graph: [...]}` answer. Edges are taken from `outEdges` only (each edge is listed on
 * both of its ends), and edges to nodes beyond the requested depth are dropped, so every id in `out`/`in` is
 * in `nodes`.
 */
export function buildLineageModel(response: LineageGraphResponse): LineageModel {
  const nodes = new Map<string, DatasetNode | JobNode>();
  for (const node of response.graph) nodes.set(node.id, node);
  const out = new Map<string, string[]>();
  const inn = new Map<string, string[]>();
  for (const id of nodes.keys()) {
    out.set(id, []);
    inn.set(id, []);
  }
  const seen = new Set<string>();
  for (const node of response.graph) {
    for (const edge of [...node.outEdges, ...node.inEdges]) {
      const key = edgeKey(edge.origin, edge.destination);
      if (seen.has(key) || !nodes.has(edge.origin) || !nodes.has(edge.destination)) continue;
      seen.add(key);
      out.get(edge.origin)!.push(edge.destination);
      inn.get(edge.destination)!.push(edge.origin);
    }
  }
  return { nodes, out, in: inn };
}

/**
 * What a job's box and panel say of its runs: its latest run's state; `never ran` only where the server said the job
 * has no run; `runs hidden` for the placeholder of a namespace the caller may not read, which says nothing of its
 * runs (the job may well have run). One rule for the DOM nodes, the canvas and the details panel.
 */
export function jobRunLabel(node: JobNode): string {
  if (isRedacted(node)) return 'runs hidden';
  const run = node.data.latestRun;
  return run?.execution?.toUpperCase() ?? run?.state ?? 'never ran';
}

/**
 * The state of a job's latest run, or undefined for a dataset or a job that never ran. A run that did not execute
 * (the server's `execution`: skipped, reused) is drawn as NEW, neither failed nor completed.
 */
export function latestRunState(node: DatasetNode | JobNode | undefined): RunState | undefined {
  if (node?.type !== 'JOB') return undefined;
  const run = node.data.latestRun;
  return run?.execution !== undefined ? 'NEW' : (run?.state ?? undefined);
}

/** All ids reachable from `start` along `adjacency` (start excluded), breadth first. */
export function reachable(
  adjacency: ReadonlyMap<string, readonly string[]>,
  start: string,
  within?: ReadonlySet<string>,
): Set<string> {
  const found = new Set<string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const next of adjacency.get(queue[i]!) ?? []) {
      if (found.has(next) || next === start || (within && !within.has(next))) continue;
      found.add(next);
      queue.push(next);
    }
  }
  return found;
}

/** What to highlight: nodes and edges (keys from {@link edgeKey}). */
export interface Highlight {
  readonly nodes: ReadonlySet<string>;
  readonly edges: ReadonlySet<string>;
}

/** Edges of the model whose two ends are both in `nodes`. */
function inducedEdges(model: LineageModel, nodes: ReadonlySet<string>): Set<string> {
  const edges = new Set<string>();
  for (const id of nodes)
    for (const next of model.out.get(id) ?? []) if (nodes.has(next)) edges.add(edgeKey(id, next));
  return edges;
}

/**
 * Every node and edge on a directed path between `a` and `b`, in whichever direction one exists (descendants of
 * the upstream one that are ancestors of the downstream one). Empty when neither reaches the other.
 */
export function pathBetween(model: LineageModel, a: string, b: string): Highlight {
  for (const [from, to] of [
    [a, b],
    [b, a],
  ] as const) {
    const down = reachable(model.out, from);
    if (!down.has(to)) continue;
    const up = reachable(model.in, to);
    const nodes = new Set<string>([from, to]);
    for (const id of down) if (up.has(id)) nodes.add(id);
    return { nodes, edges: inducedEdges(model, nodes) };
  }
  return { nodes: new Set(), edges: new Set() };
}

/** What the focus mode keeps in full: `lineage` (all upstream and downstream), or that many hops each way. */
export type FocusMode = 'lineage' | number;

/** Reads `focus` from the URL: `lineage` or a hop count from 1 to 20; anything else is no focus. */
export function parseFocus(value: string | null): FocusMode | undefined {
  if (value === 'lineage') return 'lineage';
  const hops = Number(value);
  return Number.isInteger(hops) && hops >= 1 && hops <= 20 ? hops : undefined;
}

/** Ids reachable from `start` along `adjacency` within `hops` edges (start excluded). */
function nearby(adjacency: ReadonlyMap<string, readonly string[]>, start: string, hops: number): Set<string> {
  const found = new Set<string>();
  let frontier = [start];
  for (let depth = 0; depth < hops && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const id of frontier)
      for (const to of adjacency.get(id) ?? []) {
        if (to === start || found.has(to)) continue;
        found.add(to);
        next.push(to);
      }
    frontier = next;
  }
  return found;
}

/**
 * The context of a selected node that the focus mode keeps in full (the rest is dimmed): the node, what is
 * upstream and downstream of it (all of it, or within `mode` hops each way; a job and a dataset are one hop
 * apart), and the edges among them. Siblings (other outputs of an upstream job) are not on its paths and are
 * left out.
 *
 * @example
 * focusContext(model, 'dataset:db:orders', 2).nodes // the orders table, its writers and their inputs, ...
 */
export function focusContext(model: LineageModel, id: string, mode: FocusMode): Highlight {
  const hops = mode === 'lineage' ? Infinity : mode;
  const up = nearby(model.in, id, hops);
  const down = nearby(model.out, id, hops);
  const nodes = new Set<string>([id, ...up, ...down]);
  // Lineage is acyclic, so every edge between two of these runs along a path through the node's context.
  return { nodes, edges: inducedEdges(model, nodes) };
}
