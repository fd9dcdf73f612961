import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { GRAPH_OVERLAYS } from '../../src/graph/free-area.js';
import type { GraphBenchResult } from '../../src/routes/BenchGraphPage.js';

/** Debian's Chromium; playwright never downloads a browser here. */
export const chromiumPath = process.env.HEADWATER_CHROMIUM ?? '/usr/bin/chromium';

export const screenshotDir = path.resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  'test-results',
  'screenshots',
);

/**
 * Whether the browser tests can run. In CI a missing Chromium fails the run (CI must not skip what it is
 * there to check); locally the tests are skipped with a message saying what to install.
 */
export function browserAvailable(): boolean {
  if (existsSync(chromiumPath)) return true;
  const message = `${chromiumPath} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser tests.`;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${message}`);
  console.warn(`Skipping the browser tests: ${message}`);
  return false;
}

/** A headless Chromium with a fresh profile, UTC and en-US so that screenshots and texts are stable. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'headwater-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
    viewport: { width: 1440, height: 900 },
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** The two screen sizes every view is looked at in. */
export const screenshotSizes = [
  { width: 1440, height: 900 },
  { width: 1920, height: 1080 },
] as const;

/**
 * Saves full-page screenshots as test artifacts at each of {@link screenshotSizes}:
 * test-results/screenshots/<name>-<width>x<height>.png. The page is left at its first size.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(screenshotDir, { recursive: true });
  for (const size of [...screenshotSizes].reverse()) {
    await page.setViewportSize(size);
    // Two frames: the graph refits to the new size on a resize observer's callback.
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
    );
    await page.screenshot({
      path: path.join(screenshotDir, `${name}-${size.width}x${size.height}.png`),
      fullPage: true,
    });
  }
}

export type { GraphBenchResult };

/**
 * Opens `/bench/graph?nodes=N` of a running server and returns how long the generated graph took to lay out
 * and render. For `npm run bench` and the browser test alike.
 *
 * @example
 * const result = await measureGraphRender(page, 'http://127.0.0.1:5000', 2000);
 */
export async function measureGraphRender(
  page: Page,
  baseUrl: string,
  nodes: number,
): Promise<GraphBenchResult> {
  await page.goto(`${baseUrl}/bench/graph?nodes=${nodes}`);
  await page.waitForFunction(() => window.__headwaterBench !== undefined, undefined, { timeout: 60_000 });
  return (await page.evaluate(() => window.__headwaterBench))!;
}

/**
 * The graph nodes of the page drawn under its own controls (xyflow's zoom buttons and minimap, the large graph's
 * overview, the legend: GRAPH_OVERLAYS), as `name: node box ∩ control box`; empty when none is. Only the nodes on
 * screen count.
 */
export async function nodesUnderControls(page: Page): Promise<string[]> {
  return page.evaluate((selector: string): string[] => {
    const boxOf = (element: Element) => element.getBoundingClientRect();
    const controls = [...document.querySelectorAll(selector)].map(boxOf);
    if (controls.length === 0) throw new Error(`No graph controls (${selector}) on the page to check.`);
    const found: string[] = [];
    for (const node of document.querySelectorAll('.react-flow__node:not(.react-flow__node-group)')) {
      const box = boxOf(node);
      if (box.right <= 0 || box.bottom <= 0 || box.left >= innerWidth || box.top >= innerHeight) continue;
      for (const control of controls) {
        const overlaps =
          box.left < control.right &&
          control.left < box.right &&
          box.top < control.bottom &&
          control.top < box.bottom;
        if (overlaps)
          found.push(`${node.textContent ?? ''}: ${JSON.stringify(box)} ∩ ${JSON.stringify(control)}`);
      }
    }
    return found;
  }, GRAPH_OVERLAYS);
}
