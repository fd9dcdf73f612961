/**
 * How the graphs open in Chromium, at both screen sizes: a long chain in the lineage view wrapped into bands that
 * read like lines of text, no node drawn under the zoom buttons, the minimap or the legend (lineage and workflow
 * views; the workflow's in workflow.e2e.test.ts), and
 * the job captions (a job that never ran says so; one that ran says its state).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserAvailable, nodesUnderControls, screenshot, screenshotSizes } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';
import { PRODUCER, runEventBuilder } from './helpers/run-events.js';

const NS = 'chain';
const T0 = Date.parse('2025-03-14T09:00:00Z');
const SECOND = 1000;
const LINKS = 16;
const table = (n: number) => `warehouse.t_${String(n).padStart(2, '0')}`;
const step = (n: number) => `etl.step_${String(n).padStart(2, '0')}`;
const runId = (n: number) => `01958b7a-0000-7000-8000-0000000004${String(n).padStart(2, '0')}`;
const event = runEventBuilder(NS, 'etl');
const dataset = (name: string) => ({ namespace: NS, name });

/** A chain t_00 -> step_00 -> t_01 -> ... -> t_16, every step run once, and a job declared after it that never ran. */
function chainEvents(): unknown[] {
  const events: unknown[] = [];
  for (let n = 0; n < LINKS; n++) {
    const io = { inputs: [dataset(table(n))], outputs: [dataset(table(n + 1))] };
    events.push(event('START', T0 + n * SECOND, runId(n), step(n), io));
    events.push(event('COMPLETE', T0 + (n + 1) * SECOND, runId(n), step(n), io));
  }
  events.push({
    eventTime: new Date(T0 + 60 * SECOND).toISOString(),
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent',
    job: { namespace: NS, name: 'etl.audit', facets: {} },
    inputs: [dataset(table(LINKS))],
    outputs: [],
  });
  return events;
}

describe.skipIf(!browserAvailable())('how the graphs open, in Chromium', () => {
  let session: ExplorerSession | undefined;
  let page: Page;
  let url: string;

  beforeAll(async () => {
    session = await openExplorer(async (base) => {
      const response = await fetch(`${base}/api/v1/lineage/batch`, {
        method: 'POST',
        body: JSON.stringify(chainEvents()),
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(200);
    });
    url = session.url;
    page = session.page;
  });
  afterAll(async () => {
    await session?.close();
  });

  const openChain = async (size: { width: number; height: number }) => {
    await page.setViewportSize(size);
    const node = encodeURIComponent(`dataset:${NS}:${table(0)}`);
    await page.goto(`${url}/lineage?node=${node}&depth=40&direction=downstream`);
    const graph = page.getByTestId('lineage-graph');
    await expect
      .poll(() => graph.locator('.react-flow__node').count(), { timeout: 15_000 })
      .toBe(2 * LINKS + 2);
    // The fit runs once the nodes are measured; two frames later the viewport is where it stays.
    await page.waitForTimeout(300);
    return graph;
  };
  /** The chain's boxes on screen, in the order data flows through them. */
  const chainBoxes = () =>
    page.locator('.react-flow__node').evaluateAll((nodes) =>
      nodes.map((node) => {
        const r = node.getBoundingClientRect();
        return { text: node.querySelector('.graph-node__full')?.textContent ?? '', x: r.x, y: r.y };
      }),
    );

  test('a long chain in the lineage view opens wrapped into bands that read like lines, at a readable zoom', async () => {
    const graph = await openChain(screenshotSizes[0]);
    const boxes = await chainBoxes();
    const byName = new Map(boxes.map((box) => [box.text, box]));
    const order = Array.from({ length: LINKS }, (_, n) => [table(n), step(n)]).flat();
    order.push(table(LINKS), 'etl.audit');
    const placed = order.map((name) => byName.get(name)!);
    expect(placed.every(Boolean)).toBe(true);
    const bands = [...new Set(placed.map((box) => Math.round(box.y)))];
    expect(bands.length).toBeGreaterThanOrEqual(3);
    // Left to right within a band; the next band starts again at the left, below.
    for (let i = 1; i < placed.length; i++) {
      const [before, box] = [placed[i - 1]!, placed[i]!];
      if (Math.round(box.y) === Math.round(before.y)) expect(box.x).toBeGreaterThan(before.x);
      else expect([box.y > before.y, box.x < before.x]).toEqual([true, true]);
    }
    // In one row the fit would draw its 34 boxes far too small to read (the `far` level: no captions at all).
    expect(await graph.locator('.graph-canvas').getAttribute('data-lod')).not.toBe('far');
    await screenshot(page, 'lineage-wrapped-chain');
  });

  test('no node is drawn under the zoom buttons, the minimap or the legend, at 1440x900 and 1920x1080', async () => {
    for (const size of screenshotSizes) {
      await openChain(size);
      expect(await page.locator('.react-flow__controls').count()).toBe(1);
      expect(await page.locator('.react-flow__minimap').count()).toBe(1);
      expect(await page.getByRole('list', { name: 'Legend' }).count()).toBe(1);
      expect({ size, under: await nodesUnderControls(page) }).toEqual({ size, under: [] });
      // A short graph: one step and its two tables, fitted at most at zoom 1.
      await page.goto(
        `${url}/lineage?node=${encodeURIComponent(`job:${NS}:${step(3)}`)}&depth=1&direction=both`,
      );
      await expect.poll(() => page.locator('.react-flow__node').count(), { timeout: 15_000 }).toBe(3);
      await page.waitForTimeout(300);
      expect({ size, under: await nodesUnderControls(page) }).toEqual({ size, under: [] });
      // The fit button fits to the same free area after a person zoomed in.
      await page.locator('.react-flow__controls-zoomin').click();
      await page.locator('.react-flow__controls-zoomin').click();
      await page.locator('.react-flow__controls-fitview').click();
      await page.waitForTimeout(300);
      expect({ size, under: await nodesUnderControls(page) }).toEqual({ size, under: [] });
    }
  });

  test('job captions say the latest run state, and "never ran" only for a job with no run', async () => {
    await openChain(screenshotSizes[0]);
    const captions = await page
      .getByTestId('job-node')
      .evaluateAll((nodes) =>
        nodes.map((node): [string, string] => [
          node.querySelector('.graph-node__full')?.textContent ?? '',
          node.querySelector('.graph-node__state')?.textContent ?? '',
        ]),
      );
    expect(new Map(captions)).toEqual(
      new Map([
        ...Array.from({ length: LINKS }, (_, n) => [step(n), 'COMPLETED'] as [string, string]),
        ['etl.audit', 'never ran'],
      ]),
    );
  });
});
