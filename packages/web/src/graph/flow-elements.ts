import type { Edge, Node } from '@xyflow/react';
import type { DatasetNode, JobNode, RunState } from '../api/types.js';
import type { CauseKind } from '../api/analysis.js';
import type { CauseHighlight } from './cause-highlight.js';
import { FRAME_ASPECT, edgeShape, type LayoutRequest, type LayoutResult } from './layout.js';
import { edgeKey, latestRunState, type Highlight, type LineageModel } from './lineage-model.js';

/** Sizes the layout reserves; the node components are styled to the same numbers. */
export const NODE_WIDTH = 240;
export const NODE_HEIGHT = 58;
export const FIELD_ROW_HEIGHT = 22;
const COLLAPSED_GROUP_HEIGHT = 58;

/**
 * Above this many nodes the lineage graph is drawn for speed: edges on a canvas, nodes on it too until one zooms
 * in to the near level of detail, and then only the DOM nodes on screen; it opens on its root at a readable zoom
 * rather than fitted. Below it every node and edge is DOM, and the graph opens fitted.
 */
export const VIRTUALIZE_ABOVE = 300;

/** The group box that holds the child jobs of one parent job (Airflow DAG, dbt project run, ...). */
export const groupIdOf = (job: JobNode): string | undefined =>
  job.data.parentJobName ? `group:${job.data.namespace}:${job.data.parentJobName}` : undefined;

/**
 * What the layout needs, derived from the model: one box per node, child jobs inside their group. A graph that
 * opens fitted (up to {@link VIRTUALIZE_ABOVE} nodes) asks for a long chain to be wrapped into bands, as the
 * workflow view does: fitted in one row, a chain of 20 jobs is drawn too small to read, in bands about the frame's
 * shape at a readable zoom (the layout wraps only a graph far wider than deep, so a branching graph keeps its row).
 * A larger graph opens on its root at a readable zoom and is read by panning, where bands would only put a node's
 * neighbours a band away and draw the edges back across the graph.
 */
export function layoutRequestOf(model: LineageModel): LayoutRequest {
  const groups = new Set<string>();
  const nodes = [...model.nodes.values()].map((node) => {
    const group = node.type === 'JOB' ? groupIdOf(node) : undefined;
    if (group) groups.add(group);
    return { id: node.id, width: NODE_WIDTH, height: NODE_HEIGHT, ...(group ? { parent: group } : {}) };
  });
  const edges = [...model.out].flatMap(([source, targets]) => targets.map((target) => ({ source, target })));
  const fitted = nodes.length + groups.size <= VIRTUALIZE_ABOVE;
  return { nodes, edges, groups: [...groups], ...(fitted ? { wrap: { aspect: FRAME_ASPECT } } : {}) };
}

/** A column-to-column edge from the column lineage endpoint, between two datasets of the graph. */
export interface ColumnEdge {
  readonly source: string;
  readonly sourceField: string;
  readonly target: string;
  readonly targetField: string;
}

export interface DatasetNodeData extends Record<string, unknown> {
  kind: 'dataset';
  node: DatasetNode;
  expanded: boolean;
  isRoot: boolean;
  /** Root causes the server found at this dataset (for the selected node). */
  causes: readonly CauseKind[];
}

export interface JobNodeData extends Record<string, unknown> {
  kind: 'job';
  node: JobNode;
  state: RunState | undefined;
  isRoot: boolean;
  causes: readonly CauseKind[];
}

export interface GroupNodeData extends Record<string, unknown> {
  kind: 'group';
  label: string;
  collapsed: boolean;
  childCount: number;
  /** The worst latest-run state of the jobs inside, so a collapsed group still shows a failure. */
  state: RunState | undefined;
}

export type FlowNode =
  Node<DatasetNodeData, 'dataset'> | Node<JobNodeData, 'job'> | Node<GroupNodeData, 'group'>;

export interface FlowInput {
  readonly model: LineageModel;
  readonly layout: LayoutResult;
  readonly rootId: string;
  readonly selectedId: string | undefined;
  /** The server's root causes of the selected node and the paths to them. */
  readonly causes: CauseHighlight;
  readonly path: Highlight;
  readonly expandedColumns: ReadonlySet<string>;
  readonly columnEdges: readonly ColumnEdge[];
  readonly collapsedGroups: ReadonlySet<string>;
  /**
   * The focus mode's context of the selection (see `focusContext`): nodes and edges outside it are dimmed
   * (`is-dimmed`). None: nothing is dimmed.
   */
  readonly context?: Highlight | undefined;
}

const none: readonly CauseKind[] = [];

const stateRank: Partial<Record<RunState, number>> = { FAILED: 4, ABORTED: 3, RUNNING: 2, COMPLETED: 1 };

/**
 * Turns the model and its (fixed) layout into xyflow nodes and edges. Selection, highlighting and column
 * expansion only change classes and heights here; positions come from the layout, so nothing moves when a
 * person clicks. An expanded dataset pushes down the boxes below it in its own layer, and no other.
 */
export function flowElements(input: FlowInput): { nodes: FlowNode[]; edges: Edge[] } {
  const { model, layout } = input;
  const groupOf = new Map<string, string>();
  const groupMembers = new Map<string, JobNode[]>();
  for (const node of model.nodes.values()) {
    if (node.type !== 'JOB') continue;
    const group = groupIdOf(node);
    if (!group) continue;
    groupOf.set(node.id, group);
    const members = groupMembers.get(group) ?? [];
    members.push(node);
    groupMembers.set(group, members);
  }
  // Where each hidden job's edges go instead: its collapsed group.
  const visibleId = (id: string) => {
    const group = groupOf.get(id);
    return group && input.collapsedGroups.has(group) ? group : id;
  };

  const positions = new Map(layout.positions);
  pushDownBelowExpanded(input, positions);

  const classes = (id: string) =>
    [
      id === input.selectedId ? 'is-selected' : '',
      input.causes.nodes.has(id) ? 'is-cause-path' : '',
      input.causes.causes.has(id) ? 'is-cause' : '',
      input.path.nodes.has(id) ? 'is-path' : '',
      input.context && !input.context.nodes.has(id) ? 'is-dimmed' : '',
    ]
      .filter(Boolean)
      .join(' ');

  const nodes: FlowNode[] = [];
  for (const [group, members] of groupMembers) {
    const collapsed = input.collapsedGroups.has(group);
    const size = layout.groupSizes.get(group) ?? { width: NODE_WIDTH, height: NODE_HEIGHT };
    let state: RunState | undefined;
    for (const job of members) {
      const s = latestRunState(job);
      if (s && (stateRank[s] ?? 0) > (state ? (stateRank[state] ?? 0) : 0)) state = s;
    }
    nodes.push({
      id: group,
      type: 'group',
      position: positions.get(group) ?? { x: 0, y: 0 },
      data: {
        kind: 'group',
        label: members[0]!.data.parentJobName ?? group,
        collapsed,
        childCount: members.length,
        state,
      },
      ...sized(collapsed ? NODE_WIDTH : size.width, collapsed ? COLLAPSED_GROUP_HEIGHT : size.height),
      className: [
        members.some((m) => input.causes.nodes.has(m.id)) && collapsed ? 'is-cause-path' : '',
        input.context && !members.some((m) => input.context!.nodes.has(m.id)) ? 'is-dimmed' : '',
      ]
        .filter(Boolean)
        .join(' '),
      selectable: false,
    });
  }
  for (const node of model.nodes.values()) {
    const group = groupOf.get(node.id);
    if (group && input.collapsedGroups.has(group)) continue;
    const expanded = node.type === 'DATASET' && input.expandedColumns.has(node.id);
    const common = {
      id: node.id,
      ...sized(NODE_WIDTH, expanded ? NODE_HEIGHT + expandedExtraHeight(node) : NODE_HEIGHT),
      position: positions.get(node.id) ?? { x: 0, y: 0 },
      className: classes(node.id),
      ...(group ? { parentId: group, extent: 'parent' as const } : {}),
    };
    if (node.type === 'DATASET') {
      nodes.push({
        ...common,
        type: 'dataset',
        data: {
          kind: 'dataset',
          node,
          expanded,
          isRoot: node.id === input.rootId,
          causes: input.causes.causes.get(node.id) ?? none,
        },
      });
    } else {
      nodes.push({
        ...common,
        type: 'job',
        data: {
          kind: 'job',
          node,
          state: latestRunState(node),
          isRoot: node.id === input.rootId,
          causes: input.causes.causes.get(node.id) ?? none,
        },
      });
    }
  }

  const edges: Edge[] = [];
  // Where each box is drawn, from the frame's origin (a group's children are placed inside it).
  const absoluteX = new Map<string, number>();
  for (const node of nodes)
    absoluteX.set(node.id, node.position.x + (node.parentId ? (absoluteX.get(node.parentId) ?? 0) : 0));
  const x = (id: string) => absoluteX.get(id) ?? 0;
  const seen = new Set<string>();
  for (const [origin, targets] of model.out) {
    for (const destination of targets) {
      const source = visibleId(origin);
      const target = visibleId(destination);
      const id = edgeKey(source, target);
      if (source === target || seen.has(id)) continue;
      seen.add(id);
      const key = edgeKey(origin, destination);
      const className = input.causes.edges.has(key)
        ? 'is-cause-path'
        : input.path.edges.has(key)
          ? 'is-path'
          : input.context && !input.context.edges.has(key)
            ? 'is-dimmed'
            : '';
      edges.push({
        id,
        source,
        target,
        sourceHandle: 'out',
        targetHandle: 'in',
        className,
        ...edgeShape(x(source), x(target)),
      });
    }
  }
  for (const column of input.columnEdges) {
    const sourceExpanded = input.expandedColumns.has(column.source);
    const targetExpanded = input.expandedColumns.has(column.target);
    if (!sourceExpanded && !targetExpanded) continue;
    edges.push({
      id: `col:${column.source}:${column.sourceField}->${column.target}:${column.targetField}`,
      source: column.source,
      target: column.target,
      sourceHandle: sourceExpanded ? `out:${column.sourceField}` : 'out',
      targetHandle: targetExpanded ? `in:${column.targetField}` : 'in',
      className: 'is-column',
    });
  }
  return { nodes, edges };
}

/**
 * A node's size, known from the layout, given to xyflow as set and as measured. Set: the minimap draws only nodes
 * with dimensions on them. Measured too: each change of a graph's input (a click, an answer) makes new node
 * objects, and xyflow drops the handle places it measured for a node that comes without `measured`, so every edge
 * went for a frame or two on each click, until each node was measured again. A node whose handles change must
 * then ask to be measured, unless its size changes too (an expanded dataset asks anyway: see DatasetGraphNode).
 */
export const sized = (width: number, height: number) => ({ width, height, measured: { width, height } });

/** Moves the top-level boxes under an expanded dataset down by the height its columns add. */
function pushDownBelowExpanded(input: FlowInput, positions: Map<string, { x: number; y: number }>): void {
  const tops: { id: string; x: number; y: number; width: number }[] = [];
  for (const [id, position] of positions) {
    if (input.layout.groupSizes.has(id)) {
      tops.push({ id, ...position, width: input.layout.groupSizes.get(id)!.width });
    } else {
      const node = input.model.nodes.get(id);
      if (node && !(node.type === 'JOB' && groupIdOf(node)))
        tops.push({ id, ...position, width: NODE_WIDTH });
    }
  }
  for (const id of input.expandedColumns) {
    const node = input.model.nodes.get(id);
    const at = input.layout.positions.get(id);
    if (node?.type !== 'DATASET' || !at) continue;
    const extra = expandedExtraHeight(node);
    for (const box of tops) {
      const overlapsColumn = box.x < at.x + NODE_WIDTH && box.x + box.width > at.x;
      if (box.id !== id && overlapsColumn && box.y > at.y) {
        const moved = positions.get(box.id)!;
        positions.set(box.id, { x: moved.x, y: moved.y + extra });
      }
    }
  }
}

/** The height a dataset's column list adds when expanded. */
export const expandedExtraHeight = (node: DatasetNode): number =>
  Math.max(1, node.data.fields.length) * FIELD_ROW_HEIGHT + 8;

/** Below an expanded dataset's last column row: the box's 2 px border and the list's 4 px padding. */
const FIELDS_BOTTOM_INSET = 6;

/**
 * Where field `index` of an expanded dataset of `height` (and `fieldCount` fields) has its handles, from the top of
 * its box: the rows sit at the bottom of the box (`.graph-node--expanded` in the styles), so the place is the same
 * whatever the level of detail shows above them. The canvas draws column edges to it; the DOM puts its handles there.
 */
export const fieldHandleY = (height: number, fieldCount: number, index: number): number =>
  height - FIELDS_BOTTOM_INSET - (fieldCount - index) * FIELD_ROW_HEIGHT + FIELD_ROW_HEIGHT / 2;
