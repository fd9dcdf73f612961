import { describe, expect, test } from 'vitest';
import { noCauses } from './cause-highlight.js';
import {
  expandedExtraHeight,
  fieldHandleY,
  flowElements,
  layoutRequestOf,
  NODE_HEIGHT,
  NODE_WIDTH,
} from './flow-elements.js';
import { fastLayeredLayout } from './fast-layout.js';
import { generateLineageGraph } from './generate.js';
import { buildLineageModel } from './lineage-model.js';
import { hitTest, sceneOf } from './scene.js';

describe('the canvas scene of a large graph', () => {
  const model = buildLineageModel(generateLineageGraph(400));
  const layout = fastLayeredLayout(layoutRequestOf(model));
  const none = { nodes: new Set<string>(), edges: new Set<string>() };
  const { nodes, edges } = flowElements({
    model,
    layout,
    rootId: [...model.nodes.keys()][0]!,
    selectedId: undefined,
    causes: noCauses,
    path: none,
    expandedColumns: new Set(),
    columnEdges: [],
    collapsedGroups: new Set(),
  });
  const scene = sceneOf(nodes, edges, (kinds) => kinds.join(' '));

  test('one box per node at its layout position, one curve per edge between the handles', () => {
    expect(scene.boxes).toHaveLength(model.nodes.size);
    for (const [id, at] of layout.positions) {
      expect(scene.byId.get(id)).toMatchObject({ x: at.x, y: at.y, width: NODE_WIDTH, height: NODE_HEIGHT });
    }
    expect(scene.edges).toHaveLength(edges.length);
    const first = edges[0]!;
    const source = layout.positions.get(first.source)!;
    const target = layout.positions.get(first.target)!;
    expect(scene.edges[0]).toEqual({
      sx: source.x + NODE_WIDTH,
      sy: source.y + NODE_HEIGHT / 2,
      tx: target.x,
      ty: target.y + NODE_HEIGHT / 2,
      style: '',
    });
  });

  test('a click inside a box picks that node, between boxes nothing; short names as the DOM shows them', () => {
    for (const id of [...model.nodes.keys()].slice(0, 50)) {
      const box = scene.byId.get(id)!;
      expect(hitTest(scene, box.x + 5, box.y + box.height - 5)?.id).toBe(id);
      expect(hitTest(scene, box.x - 30, box.y + 1)).toBeUndefined();
    }
    const job = scene.boxes.find((b) => b.kind === 'job')!;
    expect(job.label).toMatch(/^job_\d+$/);
    expect(job.caption).toMatch(/^JOB · (COMPLETED|FAILED)$/);
  });

  test("a column edge runs from the source's row to the target's row, or to its side when not expanded", () => {
    const withFields = (id: string, names: string[]) => {
      const node = model.nodes.get(id)!;
      if (node.type !== 'DATASET') throw new Error(`${id} is not a dataset`);
      const fields = names.map((name) => ({ name, type: 'text', tags: [], description: null }));
      return { ...node, data: { ...node.data, fields } };
    };
    const edge = layoutRequestOf(model).edges.find((e) => e.source.startsWith('dataset:'))!;
    const job = model.out.get(edge.target)!;
    const [sourceId, targetId] = [edge.source, job[0]!];
    const otherId = [...model.nodes.keys()].find(
      (id) => id.startsWith('dataset:') && id !== sourceId && id !== targetId,
    )!;
    const source = withFields(sourceId, ['a', 'b', 'c']);
    const target = withFields(targetId, ['x', 'y']);
    const nodes = new Map(model.nodes).set(sourceId, source).set(targetId, target);
    const flow = flowElements({
      model: { ...model, nodes },
      layout,
      rootId: sourceId,
      selectedId: undefined,
      causes: noCauses,
      path: none,
      expandedColumns: new Set([sourceId, targetId]),
      columnEdges: [
        { source: sourceId, sourceField: 'c', target: targetId, targetField: 'y' },
        { source: sourceId, sourceField: 'b', target: otherId, targetField: 'z' },
      ],
      collapsedGroups: new Set(),
    });
    const columns = sceneOf(flow.nodes, flow.edges, () => '').edges.filter((e) => e.style === 'is-column');
    const s = flow.nodes.find((n) => n.id === sourceId)!;
    const t = flow.nodes.find((n) => n.id === targetId)!;
    const sourceHeight = NODE_HEIGHT + expandedExtraHeight(source);
    expect(s.height).toBe(sourceHeight);
    expect(columns[0]).toEqual({
      sx: s.position.x + NODE_WIDTH,
      sy: s.position.y + fieldHandleY(sourceHeight, 3, 2),
      tx: t.position.x,
      ty: t.position.y + fieldHandleY(NODE_HEIGHT + expandedExtraHeight(target), 2, 1),
      style: 'is-column',
    });
    // The rows are at the bottom of the box, 22 px apart, the last 6 px above its bottom edge plus half a row.
    expect(fieldHandleY(sourceHeight, 3, 2)).toBe(sourceHeight - 6 - 11);
    expect(fieldHandleY(sourceHeight, 3, 0) - fieldHandleY(sourceHeight, 3, 1)).toBe(-22);
    const other = flow.nodes.find((n) => n.id === otherId)!;
    expect(columns[1]).toMatchObject({
      sy: s.position.y + fieldHandleY(sourceHeight, 3, 1),
      ty: other.position.y + NODE_HEIGHT / 2,
    });
  });
});
