import { describe, expect, test } from 'vitest';
import { fastLayeredLayout } from './fast-layout.js';
import type { LayoutRequest } from './layout.js';

/** A chain a0 -> a1 -> ... of `n` boxes, the first `grouped` of them in one group. */
const chain = (n: number, grouped = 0): LayoutRequest => ({
  nodes: Array.from({ length: n }, (_, i) => ({
    id: `a${i}`,
    width: 240,
    height: 58,
    ...(i < grouped ? { parent: 'g' } : {}),
  })),
  edges: Array.from({ length: n - 1 }, (_, i) => ({ source: `a${i}`, target: `a${i + 1}` })),
  ...(grouped ? { groups: ['g'] } : {}),
});

describe('the layered layout of a long chain', () => {
  test('without wrap: one row, each box a layer to the right of the one before', () => {
    const { positions, width, height } = fastLayeredLayout(chain(30));
    const ys = new Set([...positions.values()].map((p) => p.y));
    expect(ys.size).toBe(1);
    expect(width).toBe(30 * 240 + 29 * 72);
    expect(height).toBe(58);
  });

  test('with wrap: bands read left to right, top to bottom, about as wide as asked for their height', () => {
    const { positions, width, height } = fastLayeredLayout({ ...chain(60), wrap: { aspect: 16 / 9 } });
    const at = (i: number) => positions.get(`a${i}`)!;
    const bandTops = [...new Set([...positions.values()].map((p) => p.y))].sort((a, b) => a - b);
    expect(bandTops.length).toBeGreaterThan(4);
    const perBand = 60 / bandTops.length;
    for (let i = 1; i < 60; i++) {
      if (at(i).y === at(i - 1).y) expect(at(i).x).toBe(at(i - 1).x + 240 + 72);
      else {
        // The next band starts at the left, one band lower.
        expect(at(i).x).toBe(0);
        expect(bandTops.indexOf(at(i).y)).toBe(bandTops.indexOf(at(i - 1).y) + 1);
      }
    }
    expect(Math.ceil(perBand)).toBeGreaterThanOrEqual(5);
    expect(width / height).toBeGreaterThan(16 / 9 / 1.5);
    expect(width / height).toBeLessThan((16 / 9) * 1.5);
    // Stable: the same graph, the same picture.
    expect(fastLayeredLayout({ ...chain(60), wrap: { aspect: 16 / 9 } }).positions).toEqual(positions);
  });

  test('a short or already compact graph is not wrapped, and a group is never cut between two bands', () => {
    const short = fastLayeredLayout({ ...chain(5), wrap: { aspect: 16 / 9 } });
    expect(new Set([...short.positions.values()].map((p) => p.y)).size).toBe(1);
    const grouped = fastLayeredLayout({ ...chain(40, 12), wrap: { aspect: 16 / 9 } });
    const size = grouped.groupSizes.get('g')!;
    // The group's twelve members in one band: its box is one box high (and its header and border).
    expect(size.height).toBe(58 + 36 + 12);
    expect(size.width).toBe(12 * 240 + 11 * 72 + 24);
  });
});
