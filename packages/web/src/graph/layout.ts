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
  /**
   * Cut a graph far wider than deep (a long chain) into bands of layers, one under the other, read like lines
   * of text, about this wide for their height. None: one row of layers, however long.
   */
  readonly wrap?: { readonly aspect: number };
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

/**
 * The shape a long chain is wrapped to: about that of a graph's frame beside its details panel at 1440x900 and
 * 1920x1080 (the lineage and workflow views both), so that the bands fill the frame when fitted.
 */
export const FRAME_ASPECT = 16 / 9;

/**
 * How to draw an edge of a laid-out graph: one that runs back to the start of the next band of a wrapped layout
 * (its target no further right than its source) in steps through the gap between the bands, not across the boxes.
 */
export const edgeShape = (sourceX: number, targetX: number): { type?: 'smoothstep' } =>
  targetX <= sourceX ? { type: 'smoothstep' } : {};

let worker: Worker | undefined;
let nextRequest = 0;
const pending = new Map<
  number,
  { resolve: (result: LayoutResult) => void; reject: (error: Error) => void }
>();

/** The layout worker, started on first use; undefined where there are no workers (Node, for the benchmark). */
function layoutWorker(): Worker | undefined {
  if (typeof Worker === 'undefined') return undefined;
  if (!worker) {
    worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (event: MessageEvent<LayoutReply>) => {
      const reply = event.data;
      const waiting = pending.get(reply.id);
      pending.delete(reply.id);
      if ('error' in reply) waiting?.reject(new Error(`The graph layout failed: ${reply.error}`));
      else waiting?.resolve(reply.result);
    };
    worker.onerror = (event) => {
      for (const waiting of pending.values())
        waiting.reject(new Error(`The graph layout worker stopped: ${event.message}`));
      pending.clear();
      worker = undefined;
    };
  }
  return worker;
}

/** What the worker posts back (Maps survive structured cloning). */
export type LayoutReply = { id: number; result: LayoutResult } | { id: number; error: string };

/**
 * Lays out a lineage graph with {@link fastLayeredLayout}, the same algorithm at every size, in a Web Worker so
 * that a large graph never blocks scrolling, typing or the spinner. Without workers (Node) it runs inline.
 *
 * @example
 * const { positions } = await layoutGraph({ nodes: [{ id: 'a', width: 200, height: 50 }], edges: [] });
 */
export function layoutGraph(request: LayoutRequest): Promise<LayoutResult> {
  const target = layoutWorker();
  if (!target) return Promise.resolve(fastLayeredLayout(request));
  const id = nextRequest++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    target.postMessage({ id, request });
  });
}
