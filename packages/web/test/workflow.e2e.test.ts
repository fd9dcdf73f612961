/**
 * The workflow view in Chromium: a Kedro-like pipeline run whose model node fails, so the nodes after it are
 * aborted, reached from the job page, drawn as a graph with its datasets, its selection and options in the URL.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserAvailable, nodesUnderControls, screenshot, screenshotSizes } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';
import { facet, runEventBuilder } from './helpers/run-events.js';

const NS = 'kedro-shop';
const PIPELINE = 'shop.__default__';
const T0 = Date.parse('2025-03-14T09:00:00Z');
const SECOND = 1000;
const TRACEBACK =
  'Traceback (most recent call last):\n  File "src/shop/pipelines/model/nodes.py", line 31, in train\n' +
  '    raise ValueError("no training rows after the split")\nValueError: no training rows after the split';
const EARLIER = '01958b7a-0000-7000-8000-000000000001';
const RUN = '01958b7a-0000-7000-8000-000000000002';
const child = (n: number) => `01958b7a-0000-7000-8000-0000000001${String(n).padStart(2, '0')}`;

const dataset = (name: string, output?: { rowCount: number; size: number }) => ({
  namespace: NS,
  name,
  ...(output
    ? { outputFacets: { outputStatistics: facet('OutputStatisticsOutputDatasetFacet', output) } }
    : {}),
});
const event = runEventBuilder(NS, PIPELINE);

/** The nodes of one `kedro run`: start offset, duration (null: aborted), inputs and outputs. */
const nodes = [
  { n: 1, job: 'ingest.load_orders', at: 0, takes: 12, inputs: [], outputs: [['orders_raw', 1200, 49152]] },
  {
    n: 2,
    job: 'ingest.clean_orders',
    at: 12,
    takes: 8,
    inputs: ['orders_raw'],
    outputs: [['orders', 1180, 40960]],
  },
  {
    n: 3,
    job: 'model.train',
    at: 20,
    takes: 65,
    inputs: ['orders'],
    outputs: [['model', 0, 0]],
    fails: true,
  },
  {
    n: 4,
    job: 'model.evaluate',
    at: 85,
    takes: null,
    inputs: ['model', 'orders'],
    outputs: [['metrics', 0, 0]],
  },
  { n: 5, job: 'report.publish', at: 85, takes: null, inputs: ['metrics'], outputs: [] },
] as const;

function pipelineEvents(): unknown[] {
  const events: unknown[] = [
    event('START', T0 - 86_400_000, EARLIER, PIPELINE),
    event('COMPLETE', T0 - 86_400_000 + 90 * SECOND, EARLIER, PIPELINE),
    event('START', T0, RUN, PIPELINE),
  ];
  for (const node of nodes) {
    const runId = child(node.n);
    const inputs = node.inputs.map((name) => dataset(name));
    const start = T0 + node.at * SECOND;
    if (node.takes === null) {
      const outputs = node.outputs.map(([name]) => dataset(name));
      events.push(event('ABORT', start, runId, node.job, { parent: RUN, inputs, outputs }));
      continue;
    }
    events.push(event('START', start, runId, node.job, { parent: RUN, inputs }));
    const fails = 'fails' in node && node.fails;
    const outputs = node.outputs.map(([name, rowCount, size]) =>
      fails ? dataset(name) : dataset(name, { rowCount, size }),
    );
    events.push(
      event(fails ? 'FAIL' : 'COMPLETE', start + node.takes * SECOND, runId, node.job, {
        parent: RUN,
        inputs,
        outputs,
        ...(fails
          ? {
              runFacets: {
                errorMessage: facet('ErrorMessageRunFacet', {
                  message: 'ValueError: no training rows after the split',
                  programmingLanguage: 'python',
                  stackTrace: TRACEBACK,
                }),
              },
            }
          : {}),
      }),
    );
  }
  events.push(event('FAIL', T0 + 85 * SECOND, RUN, PIPELINE));
  return events;
}

describe.skipIf(!browserAvailable())('the workflow view of a pipeline run, in Chromium', () => {
  let url: string;
  let page: Page;
  let session: ExplorerSession | undefined;

  beforeAll(async () => {
    session = await openExplorer(async (serverUrl) => {
      const response = await fetch(`${serverUrl}/api/v1/lineage/batch`, {
        method: 'POST',
        body: JSON.stringify(pipelineEvents()),
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(200);
    });
    ({ url, page } = session);
  });

  afterAll(async () => {
    await session?.close();
  });

  /** Each drawn child run's name and the state and duration its box says. */
  const runBoxes = async () =>
    page
      .getByTestId('workflow-run')
      .evaluateAll((boxes) =>
        boxes
          .map((box) => [
            box.querySelector('.graph-node__full')?.textContent ?? '',
            box.querySelector('.graph-node__kind')?.textContent ?? '',
            box.querySelector('.graph-node__namespace')?.textContent ?? '',
          ])
          .sort((a, b) => a[0]!.localeCompare(b[0]!)),
      );

  test('from the job page to the graph: states with marks, durations, datasets with counts, what never ran', async () => {
    await page.goto(`${url}/jobs/${NS}/${PIPELINE}`);
    await page.getByRole('link', { name: 'Workflow graph of this run' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/runs/${RUN}/workflow`);
    await expect
      .poll(() => page.getByLabel('Summary').innerText())
      .toMatch(/^5 child runs: 1 failed, 2 aborted, 2 completed; 2 never ran · .* · 1 min 25 s$/);
    await expect.poll(() => page.getByTestId('workflow-run').count()).toBe(5);
    expect(await runBoxes()).toEqual([
      ['ingest.clean_orders', '✓ completed', '8 s'],
      ['ingest.load_orders', '✓ completed', '12 s'],
      ['model.evaluate', '⊘ never ran (aborted)', 'did not start'],
      ['model.train', '✕ failed', '1 min 5 s'],
      ['report.publish', '⊘ never ran (aborted)', 'did not start'],
    ]);
    const datasets = await page
      .getByTestId('workflow-dataset')
      .evaluateAll((boxes) =>
        boxes
          .map(
            (box) =>
              `${box.querySelector('.graph-node__full')?.textContent} | ${box.querySelector('.graph-node__namespace')?.textContent}`,
          )
          .sort(),
      );
    expect(datasets).toEqual([
      'metrics | no counts reported',
      'model | no counts reported',
      'orders | 1,180 rows · 40.0 KiB',
      'orders_raw | 1,200 rows · 48.0 KiB',
    ]);
    // Data flows in reading order: each node's box is right of what it read, or in a band below it.
    const box = async (name: string) =>
      (await page.locator('.react-flow__node', { hasText: name }).first().boundingBox())!;
    const order = ['ingest.load_orders', 'ingest.clean_orders', 'model.train', 'report.publish'];
    for (const [i, name] of order.slice(1).entries()) {
      const [before, after] = [await box(order[i]!), await box(name)];
      expect(after.x > before.x || after.y > before.y + before.height).toBe(true);
    }
    // The failed node is selected by default, with its traceback.
    const details = page.getByRole('complementary', { name: 'Details' });
    expect(await details.getByLabel('Selected run').locator('h2').innerText()).toBe('model.train');
    expect(await details.getByLabel('Error').innerText()).toContain(
      'ValueError: no training rows after the split',
    );
    expect(await details.locator('details').innerText()).toContain('line 31, in train');
    expect(await page.getByRole('list', { name: 'Never ran' }).innerText()).toMatch(
      /^model\.evaluate never ran \(aborted\)\nreport\.publish never ran \(aborted\)$/,
    );
    await screenshot(page, 'workflow-failed-run');
  });

  test('the selection and the dataset toggle are in the URL, so a pasted link shows the same', async () => {
    await page.goto(`${url}/runs/${RUN}/workflow`);
    // The pipeline is wider than the frame: it opens on the failed node, with what it read beside it.
    await page.getByTestId(`rf__node-dataset:${NS}:orders`).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('select')).toBe(`dataset:${NS}:orders`);
    const details = page.getByRole('complementary', { name: 'Details' });
    expect(await details.getByLabel('Selected dataset').innerText()).toMatch(
      /^DATASET\norders\nkedro-shop\nReported\s+1,180 rows · 40.0 KiB\s+Written by\s+ingest.clean_orders\s+Read by\s+model.train, model.evaluate$/,
    );
    // A click, not uncheck(): the box follows the URL, which the router updates a moment later.
    await page.getByLabel('Datasets').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('datasets')).toBe('hide');
    const pasted = page.url();
    await page.goto('about:blank');
    await page.goto(pasted);
    await expect.poll(() => page.getByTestId('workflow-run').count()).toBe(5);
    expect(await page.getByTestId('workflow-dataset').count()).toBe(0);
    expect(await page.getByLabel('Datasets').isChecked()).toBe(false);
    // Without datasets the edges are the server's: who wrote what another read.
    await expect.poll(() => page.locator('.react-flow__edge').count()).toBe(5);
    await page
      .getByRole('list', { name: 'Child runs' })
      .getByRole('button', { name: 'model.evaluate' })
      .click();
    await expect.poll(() => new URL(page.url()).searchParams.get('select')).toBe(`run:${child(4)}`);
    expect(await details.getByLabel('Selected run').innerText()).toMatch(
      /never ran[\s\S]*model\.evaluate[\s\S]*Started\s+—[\s\S]*Read\s+model\s+orders[\s\S]*Wrote\s+metrics$/i,
    );
    await screenshot(page, 'workflow-no-datasets');
  });

  test("in the lineage graph the pipeline's node jobs are grouped under the pipeline's job", async () => {
    await page.goto(`${url}/lineage?node=dataset:${NS}:orders&depth=10`);
    const group = page.getByTestId('group-node');
    await expect.poll(() => group.count(), { timeout: 20_000 }).toBe(1);
    expect(await group.locator('.graph-group__label').innerText()).toBe(PIPELINE);
    // The node jobs are drawn by their simple names, inside the group's box.
    const box = (await group.boundingBox())!;
    const jobs = await page.locator('.react-flow__node-job').evaluateAll((nodes) =>
      nodes.map((node) => {
        const r = node.getBoundingClientRect();
        return { name: node.querySelector('.graph-node__full')?.textContent ?? '', x: r.x, y: r.y };
      }),
    );
    expect(jobs.map((job) => job.name).sort()).toEqual([
      'ingest.clean_orders',
      'ingest.load_orders',
      'model.evaluate',
      'model.train',
      'report.publish',
    ]);
    for (const job of jobs) {
      expect(
        job.x >= box.x && job.x <= box.x + box.width && job.y >= box.y && job.y <= box.y + box.height,
      ).toBe(true);
    }
    await group.getByRole('button', { name: 'Collapse' }).click();
    await expect.poll(() => group.getByRole('button').innerText()).toBe('Expand 5 jobs');
    expect(await page.locator('.react-flow__node-job').count()).toBe(0);
  });

  test('the run page lists the children in order and links to the graph', async () => {
    await page.goto(`${url}/runs/${RUN}`);
    const children = page.getByRole('list', { name: 'Child runs' });
    await expect.poll(() => children.locator('li').count()).toBe(5);
    expect((await children.locator('.workflow__name').allInnerTexts()).slice(0, 3)).toEqual([
      'ingest.load_orders',
      'ingest.clean_orders',
      'model.train',
    ]);
    expect(await children.innerText()).toContain('never ran');
    await page.getByRole('link', { name: 'Workflow graph' }).click();
    await expect.poll(() => page.getByTestId('workflow-run').count()).toBe(5);
  });

  test('a linear chain of 30 node runs is wrapped into bands that read like lines, readable as it opens', async () => {
    const pipeline = 'chain.__default__';
    const parent = '01958b7a-0000-7000-8000-000000000003';
    const link = (n: number) => `01958b7a-0000-7000-8000-0000000003${String(n).padStart(2, '0')}`;
    const step = (n: number) => `chain.step_${String(n).padStart(2, '0')}`;
    const events: unknown[] = [event('START', T0, parent, pipeline)];
    for (let n = 0; n < 30; n++) {
      const extra = {
        parent,
        pipeline,
        inputs: n === 0 ? [] : [dataset(`chain.table_${n - 1}`)],
        outputs: [dataset(`chain.table_${n}`)],
      };
      events.push(event('START', T0 + n * SECOND, link(n), step(n), extra));
      events.push(event('COMPLETE', T0 + (n + 1) * SECOND, link(n), step(n), extra));
    }
    events.push(event('COMPLETE', T0 + 31 * SECOND, parent, pipeline));
    const response = await fetch(`${url}/api/v1/lineage/batch`, {
      method: 'POST',
      body: JSON.stringify(events),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    await page.goto(`${url}/runs/${parent}/workflow`);
    await expect.poll(() => page.getByTestId('workflow-run').count()).toBe(30);
    await expect.poll(() => page.getByTestId('workflow-dataset').count()).toBe(30);
    await page.waitForTimeout(300);
    const frame = (await page.locator('.react-flow').boundingBox())!;
    const boxes = await page.locator('.react-flow__node').evaluateAll((nodes) =>
      nodes.map((node) => {
        const r = node.getBoundingClientRect();
        const name = node.querySelector<HTMLElement>('.graph-node__short');
        return {
          name: node.querySelector('.graph-node__full')?.textContent ?? '',
          x: r.x,
          y: r.y,
          width: r.width,
          height: r.height,
          // The short name as drawn on screen (the node is scaled by the zoom).
          namePx:
            name && getComputedStyle(name).display !== 'none'
              ? (parseFloat(getComputedStyle(name).fontSize) * r.width) / node.clientWidth
              : 0,
        };
      }),
    );
    const byName = new Map(boxes.map((b) => [b.name, b]));
    // The chain in the order data flowed: step 0, table 0, step 1, table 1, ...
    const chain = Array.from({ length: 30 }, (_, n) => [step(n), `chain.table_${n}`]).flat();
    const at = chain.map((name) => byName.get(name)!);
    expect(at.every(Boolean)).toBe(true);
    // Opened whole, every box inside the frame, its short name at least 11 px tall on screen.
    for (const box of at) {
      expect(box.x).toBeGreaterThanOrEqual(frame.x - 1);
      expect(box.y).toBeGreaterThanOrEqual(frame.y - 1);
      expect(box.x + box.width).toBeLessThanOrEqual(frame.x + frame.width + 1);
      expect(box.y + box.height).toBeLessThanOrEqual(frame.y + frame.height + 1);
      expect(box.namePx).toBeGreaterThanOrEqual(11);
    }
    // Bands read like lines: the next box is to the right on the same band, or the first of the band below.
    const bands: (typeof at)[] = [[at[0]!]];
    for (let i = 1; i < at.length; i++) {
      const [before, box] = [at[i - 1]!, at[i]!];
      if (Math.abs(box.y - before.y) < 1) {
        expect(box.x).toBeGreaterThan(before.x + before.width);
        bands.at(-1)!.push(box);
      } else {
        expect(box.y).toBeGreaterThan(before.y + before.height);
        expect(Math.abs(box.x - at[0]!.x)).toBeLessThan(1);
        bands.push([box]);
      }
    }
    expect(bands.length).toBeGreaterThanOrEqual(4);
    // Every band but the last is equally long; the picture is about as wide as the frame for its height.
    expect(new Set(bands.slice(0, -1).map((band) => band.length)).size).toBe(1);
    const right = Math.max(...at.map((b) => b.x + b.width));
    const bottom = Math.max(...at.map((b) => b.y + b.height));
    const aspect = (right - at[0]!.x) / (bottom - at[0]!.y);
    expect(aspect).toBeGreaterThan(1);
    expect(aspect).toBeLessThan(3);
    // Opened whole, it needs no minimap over its corner.
    expect(await page.locator('.react-flow__minimap').count()).toBe(0);
    // The edge back to a band's start is a step through the gap between bands.
    expect(await page.locator('.react-flow__edge-smoothstep').count()).toBe(bands.length - 1);
    await screenshot(page, 'workflow-linear-chain');
    // Opened at either size, whole, and no box under the zoom buttons (the bottom-left box of the last band was
    // under them, when the fit ate its padding to reach the readable zoom).
    for (const size of screenshotSizes) {
      await page.setViewportSize(size);
      await page.reload();
      await expect.poll(() => page.getByTestId('workflow-run').count()).toBe(30);
      await page.waitForTimeout(300);
      expect(await page.locator('.react-flow__minimap').count()).toBe(0);
      expect({ size, under: await nodesUnderControls(page) }).toEqual({ size, under: [] });
    }
    await page.setViewportSize(screenshotSizes[0]);
  });
});
