import { describe, expect, test } from 'vitest';
import { noCauses } from './cause-highlight.js';
import { flowElements, layoutRequestOf, NODE_HEIGHT, NODE_WIDTH } from './flow-elements.js';
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
});
