import { describe, expect, test } from 'vitest';
import { freeAreaPadding, type ScreenBox, type SidePadding } from './free-area.js';

const frame = { width: 1000, height: 600 };
const controls: ScreenBox = { x: 15, y: 500, width: 30, height: 85 };
const minimap: ScreenBox = { x: 785, y: 435, width: 200, height: 150 };
const legend: ScreenBox = { x: 12, y: 12, width: 210, height: 110 };

/** Whether a graph fitted with `padding` (centred in what is left, as xyflow does) leaves `panel` uncovered. */
const clear = (padding: SidePadding, panel: ScreenBox) =>
  panel.x + panel.width <= padding.left ||
  panel.x >= frame.width - padding.right ||
  panel.y + panel.height <= padding.top ||
  panel.y >= frame.height - padding.bottom;

describe('freeAreaPadding', () => {
  test('a wide graph keeps a band clear along the bottom, a tall one columns at the sides', () => {
    expect(freeAreaPadding(frame, [controls, minimap], { width: 3000, height: 300 }, 24)).toEqual({
      top: 24,
      right: 24,
      bottom: 189,
      left: 24,
    });
    expect(freeAreaPadding(frame, [controls, minimap], { width: 200, height: 2000 }, 24)).toEqual({
      top: 24,
      right: 239,
      bottom: 24,
      left: 69,
    });
  });

  test('every control is kept clear, whatever the shape of the graph', () => {
    for (const bounds of [
      { width: 3000, height: 300 },
      { width: 200, height: 2000 },
      { width: 800, height: 600 },
      { width: 10, height: 10 },
    ]) {
      const padding = freeAreaPadding(frame, [controls, minimap, legend], bounds, 24);
      expect([controls, minimap, legend].filter((panel) => !clear(padding, panel))).toEqual([]);
    }
  });

  test('without controls, the margin alone', () => {
    expect(freeAreaPadding(frame, [], { width: 100, height: 100 }, 30)).toEqual({
      top: 30,
      right: 30,
      bottom: 30,
      left: 30,
    });
  });
});
