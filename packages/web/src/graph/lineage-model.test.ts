import { describe, expect, test } from 'vitest';
import type { LineageGraphResponse } from '../api/types.js';
import { generateLineageGraph } from './generate.js';
import { buildLineageModel, edgeKey, focusContext, parseFocus, reachable } from './lineage-model.js';

/** raw -> load -> staging -> build -> mart, and a sibling: load also writes rejects, build also reads customers. */
function demoLike(): LineageGraphResponse {
  const edges: [string, string][] = [
    ['raw', 'load'],
    ['load', 'staging'],
    ['load', 'rejects'],
    ['staging', 'build'],
    ['customers', 'build'],
    ['build', 'mart'],
  ];
  const ids = [...new Set(edges.flat())];
  const graph = ids.map((id) => ({
    id,
    type: 'DATASET',
    data: {},
    inEdges: edges.filter(([, d]) => d === id).map(([origin, destination]) => ({ origin, destination })),
    outEdges: edges.filter(([o]) => o === id).map(([origin, destination]) => ({ origin, destination })),
  }));
  return { graph } as unknown as LineageGraphResponse;
}

describe('focus mode', () => {
  const model = buildLineageModel(demoLike());

  test('its lineage: everything upstream and downstream, not the siblings', () => {
    const context = focusContext(model, 'staging', 'lineage');
    expect([...context.nodes].sort()).toEqual(['build', 'load', 'mart', 'raw', 'staging']);
    expect([...context.edges].sort()).toEqual(
      [
        edgeKey('build', 'mart'),
        edgeKey('load', 'staging'),
        edgeKey('raw', 'load'),
        edgeKey('staging', 'build'),
      ].sort(),
    );
  });

  test('so many hops each way', () => {
    expect([...focusContext(model, 'staging', 1).nodes].sort()).toEqual(['build', 'load', 'staging']);
    expect([...focusContext(model, 'staging', 2).nodes].sort()).toEqual([
      'build',
      'load',
      'mart',
      'raw',
      'staging',
    ]);
    expect([...focusContext(model, 'customers', 1).edges]).toEqual([edgeKey('customers', 'build')]);
  });

  test('on a generated graph, the lineage focus is the reachable sets, and hops grow towards it', () => {
    const big = buildLineageModel(generateLineageGraph(600));
    const id = [...big.nodes.keys()][300]!;
    const lineage = focusContext(big, id, 'lineage');
    expect(lineage.nodes).toEqual(new Set([id, ...reachable(big.in, id), ...reachable(big.out, id)]));
    let previous = 1;
    for (const hops of [1, 2, 4, 8]) {
      const size = focusContext(big, id, hops).nodes.size;
      expect(size).toBeGreaterThanOrEqual(previous);
      expect(size).toBeLessThanOrEqual(lineage.nodes.size);
      previous = size;
    }
    // Every edge kept joins two kept nodes.
    for (const key of lineage.edges) {
      const [from, to] = key.split('->') as [string, string];
      expect(lineage.nodes.has(from) && lineage.nodes.has(to)).toBe(true);
    }
  });

  test('the URL value: lineage or 1 to 20 hops; anything else is no focus', () => {
    expect(parseFocus('lineage')).toBe('lineage');
    expect(parseFocus('2')).toBe(2);
    for (const bad of [null, '', '0', '21', '1.5', 'all']) expect(parseFocus(bad)).toBeUndefined();
  });
});
