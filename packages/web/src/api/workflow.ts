/**
 * The workflow view's graph, derived from the server's answer for a run's children
 * (`GET /api/v1/jobs/runs/{id}/children`): one node per child run and, when shown, one per dataset they read or
 * wrote. Without datasets, the edges are the server's (a child that wrote what another read).
 */
import { FRAME_ASPECT, type LayoutRequest } from '../graph/layout.js';
import { datasetNodeId } from '../paths.js';
import type { ChildRunJson, RunChildrenJson } from './analysis.js';
import type { RunState } from './types.js';

/** A child run in the graph. */
export interface WorkflowRunNode {
  readonly kind: 'run';
  readonly id: string;
  readonly child: ChildRunJson;
}

/** A dataset in the graph, with the counts its writer reported (else a reader). */
export interface WorkflowDatasetNode {
  readonly kind: 'dataset';
  readonly id: string;
  readonly namespace: string;
  readonly name: string;
  readonly rowCount: number | null;
  readonly bytes: number | null;
  /** Child run ids. */
  readonly writers: string[];
  readonly readers: string[];
}

export type WorkflowNode = WorkflowRunNode | WorkflowDatasetNode;

export interface WorkflowModel {
  /** In the children's order, each run followed by the datasets it was first to name. */
  readonly nodes: ReadonlyMap<string, WorkflowNode>;
  readonly edges: readonly { readonly source: string; readonly target: string }[];
}

/** The node id of a child run in the workflow graph. */
export const runNodeId = (runId: string): string => `run:${runId}`;

/** Builds the graph; `withDatasets` false draws children only, joined where one wrote what another read. */
export function workflowModel(answer: RunChildrenJson, withDatasets: boolean): WorkflowModel {
  const nodes = new Map<string, WorkflowNode>();
  const edges: { source: string; target: string }[] = [];
  for (const child of answer.children) {
    const id = runNodeId(child.runId);
    nodes.set(id, { kind: 'run', id, child });
    if (!withDatasets) continue;
    for (const [list, direction] of [
      [child.inputs, 'in'],
      [child.outputs, 'out'],
    ] as const) {
      for (const d of list) {
        const datasetId = datasetNodeId(d.namespace, d.name);
        let node = nodes.get(datasetId) as WorkflowDatasetNode | undefined;
        if (!node) {
          node = {
            kind: 'dataset',
            id: datasetId,
            namespace: d.namespace,
            name: d.name,
            rowCount: null,
            bytes: null,
            writers: [],
            readers: [],
          };
          nodes.set(datasetId, node);
        }
        // What the writer counted is what the dataset holds; a reader's count stands in when no writer said.
        const counted = direction === 'out' || node.writers.length === 0;
        const updated = {
          ...node,
          rowCount: counted && d.rowCount !== null ? d.rowCount : node.rowCount,
          bytes: counted && d.bytes !== null ? d.bytes : node.bytes,
        };
        (direction === 'out' ? updated.writers : updated.readers).push(child.runId);
        nodes.set(datasetId, updated);
        edges.push(
          direction === 'out' ? { source: id, target: datasetId } : { source: datasetId, target: id },
        );
      }
    }
  }
  if (!withDatasets)
    for (const edge of answer.edges) edges.push({ source: runNodeId(edge.from), target: runNodeId(edge.to) });
  return { nodes, edges };
}

/** What the layout worker needs: one box per node, all of `size`; a long chain wrapped into bands. */
export function workflowLayoutRequest(
  model: WorkflowModel,
  size: { width: number; height: number },
): LayoutRequest {
  return {
    nodes: [...model.nodes.keys()].map((id) => ({ id, ...size })),
    edges: model.edges,
    wrap: { aspect: FRAME_ASPECT },
  };
}

/**
 * A mark for each state, beside its name, so that colour is never the only carrier: a check, a cross, a
 * circled slash for what a failure stopped, an arrow for what still runs.
 */
export function stateMark(child: Pick<ChildRunJson, 'state' | 'ran'>): { mark: string; label: string } {
  if (!child.ran) return { mark: '⊘', label: child.state === 'NEW' ? 'never ran' : 'never ran (aborted)' };
  const marks: Partial<Record<RunState, string>> = {
    COMPLETED: '✓',
    FAILED: '✕',
    ABORTED: '⊘',
    RUNNING: '▶',
  };
  return { mark: marks[child.state] ?? '○', label: child.state.toLowerCase() };
}

/** `4 child runs: 2 completed, 1 failed, 1 aborted; 1 never ran`. */
export function workflowSummary(answer: RunChildrenJson): string {
  const order = ['FAILED', 'ABORTED', 'RUNNING', 'COMPLETED', 'NEW'];
  const states = Object.entries(answer.states)
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([state, count]) => `${count} ${state === 'NEW' ? 'new' : state.toLowerCase()}`);
  const total = `${answer.totalCount} child run${answer.totalCount === 1 ? '' : 's'}`;
  return `${total}${states.length ? `: ${states.join(', ')}` : ''}; ${answer.neverRanCount} never ran`;
}

/** The node to select when the URL names none: the first failed child, so its traceback is in view. */
export function defaultSelection(answer: RunChildrenJson): string | undefined {
  const failed = answer.children.find((child) => child.state === 'FAILED');
  return failed ? runNodeId(failed.runId) : undefined;
}
