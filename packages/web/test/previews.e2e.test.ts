/**
 * Change review in Chromium: a pull request's pipeline run as a preview beside production. The header's switcher
 * shows the preview's lineage instead of production's (every read of the explorer carries `?preview=`), a banner
 * says so, and the preview's diff page shows what the pull request breaks for production's consumers.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PreviewDiff } from '../src/api/analysis.js';
import { nodeLabel } from '../src/paths.js';
import { browserAvailable, screenshot } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';
import { facet, runEventBuilder } from './helpers/run-events.js';

const WAREHOUSE = 'postgres://warehouse:5432';
const T0 = Date.parse('2026-01-05T08:00:00Z');

/** A dataset of the warehouse written with its schema and each column's inputs (`[dataset, column]`). */
const written = (name: string, columns: Record<string, readonly [string, string]>) => ({
  namespace: WAREHOUSE,
  name,
  facets: {
    schema: facet('SchemaDatasetFacet', {
      fields: Object.keys(columns).map((column) => ({ name: column, type: 'text' })),
    }),
    columnLineage: facet('ColumnLineageDatasetFacet', {
      fields: Object.fromEntries(
        Object.entries(columns).map(([column, [dataset, field]]) => [
          column,
          {
            inputFields: [
              {
                namespace: WAREHOUSE,
                name: dataset,
                field,
                transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
              },
            ],
          },
        ]),
      ),
    }),
  },
});
const read = (name: string) => ({ namespace: WAREHOUSE, name });

let runs = 0;
/** A completed run of `job` in `namespace`, a minute after the one before. */
const completed = (namespace: string, job: string, inputs: object[], outputs: object[]) => {
  runs++;
  return runEventBuilder(namespace, job)(
    'COMPLETE',
    T0 + runs * 60_000,
    `01958b7a-0000-7000-8000-${String(runs).padStart(12, '0')}`,
    job,
    { inputs, outputs },
  );
};

/** Production: raw.orders -> etl's analytics.orders -> dashboards' revenue, which reads amount and country. */
const production = [
  completed(
    'etl',
    'analytics.orders',
    [read('raw.orders')],
    [
      written('analytics.orders', {
        id: ['raw.orders', 'id'],
        amount: ['raw.orders', 'amount'],
        country: ['raw.orders', 'country'],
      }),
    ],
  ),
  completed(
    'dashboards',
    'revenue',
    [read('analytics.orders')],
    [
      written('reports.revenue', {
        amount: ['analytics.orders', 'amount'],
        country: ['analytics.orders', 'country'],
      }),
    ],
  ),
];

/** Pull request 7: its build of analytics.orders (as pr_7.orders) drops country, and a new model reads it. */
const pullRequest = [
  completed(
    'etl-pr-7',
    'analytics.orders',
    [read('raw.orders')],
    [written('pr_7.orders', { id: ['raw.orders', 'id'], amount: ['raw.orders', 'amount'] })],
  ),
  completed(
    'etl-pr-7',
    'pr_7.extra',
    [read('pr_7.orders')],
    [written('pr_7.extra', { amount: ['pr_7.orders', 'amount'] })],
  ),
];

const post = async (url: string, body: unknown) => {
  const response = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
};

describe.skipIf(!browserAvailable())('previews in the explorer, in Chromium', () => {
  let url: string;
  let page: Page;
  let session: ExplorerSession | undefined;

  beforeAll(async () => {
    session = await openExplorer(async (serverUrl) => {
      await post(`${serverUrl}/api/v1/lineage/batch`, production);
      await post(`${serverUrl}/api/v1/previews`, {
        name: 'pr-7',
        jobNamespace: 'etl-pr-7',
        baseNamespace: 'etl',
        pullRequest: 7,
        mappings: [{ from: { name: 'pr_7.*' }, to: { name: 'analytics.*' } }],
      });
      await post(`${serverUrl}/api/v1/lineage/batch`, pullRequest);
    });
    ({ url, page } = session);
  });

  afterAll(async () => {
    await session?.close();
  });

  const namespaces = () => page.getByRole('list', { name: 'Namespaces' }).getByRole('button').allInnerTexts();
  const datasets = () => page.getByRole('list', { name: 'Datasets' }).getByRole('link').allInnerTexts();
  const banner = () => page.getByRole('region', { name: 'Preview' });
  const shownPreview = () => new URL(page.url()).searchParams.get('preview');

  test("the switcher shows the preview's lineage, links keep it, and production's comes back without it", async () => {
    await page.goto(url);
    await expect.poll(namespaces).toEqual(expect.arrayContaining(['dashboards', 'etl', WAREHOUSE]));
    expect(await namespaces()).not.toContain('etl-pr-7');
    const switcher = page.getByLabel('Lineage of');
    expect(await switcher.locator('option').allInnerTexts()).toEqual(['Production', 'pr-7 (#7)']);
    expect(await banner().count()).toBe(0);
    await page.getByRole('button', { name: WAREHOUSE }).click();
    await expect.poll(datasets).toEqual(expect.arrayContaining(['analytics.orders', 'raw.orders']));
    expect(await datasets()).not.toContain('pr_7.orders');

    await switcher.selectOption('pr-7');
    await expect.poll(shownPreview).toBe('pr-7');
    expect(new URL(page.url()).searchParams.get('ns')).toBe(WAREHOUSE);
    await expect.poll(() => banner().innerText()).toContain('You are looking at pr-7, pull request #7');
    expect(await banner().innerText()).toContain("standing in for production's etl");
    await expect.poll(namespaces).toContain('etl-pr-7');
    await expect.poll(datasets).toEqual(expect.arrayContaining(['pr_7.orders', 'pr_7.extra']));
    expect(await datasets()).not.toContain('analytics.orders');
    await screenshot(page, 'preview-home');

    // The explorer's links do not name the preview; following one stays in it.
    await page.getByRole('link', { name: 'pr_7.orders' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('pr_7.orders');
    expect(new URL(page.url()).pathname).toBe(`/datasets/${encodeURIComponent(WAREHOUSE)}/pr_7.orders`);
    expect(shownPreview()).toBe('pr-7');
    expect(await switcher.inputValue()).toBe('pr-7');

    await banner().getByRole('button', { name: 'Back to production' }).click();
    await expect.poll(shownPreview).toBeNull();
    expect(await banner().count()).toBe(0);
    expect(await switcher.inputValue()).toBe('');
    await page.getByRole('link', { name: 'Headwater' }).click();
    await expect.poll(namespaces).toContain(WAREHOUSE);
    expect(await namespaces()).not.toContain('etl-pr-7');
    expect(shownPreview()).toBeNull();

    // Back twice: the dataset page as it was seen, in the preview.
    await page.goBack();
    await page.goBack();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('pr_7.orders');
    expect(shownPreview()).toBe('pr-7');
    expect(await banner().count()).toBe(1);
  });

  test('an address naming a preview the server does not have says so, and offers the way back', async () => {
    await page.goto(`${url}/?preview=pr-99`);
    await expect.poll(() => banner().innerText()).toContain('pr-99, which the server does not have');
    expect(await page.getByLabel('Lineage of').locator('option').allInnerTexts()).toEqual([
      'Production',
      'pr-99 (unknown)',
      'pr-7 (#7)',
    ]);
    await banner().getByRole('button', { name: 'Back to production' }).click();
    await expect.poll(namespaces).toContain('etl');
    expect(shownPreview()).toBeNull();
  });

  test('the diff page shows the breaking change with its production consumer, and what is new', async () => {
    const answer = await fetch(`${url}/api/v1/previews/pr-7/diff`);
    const diff = (await answer.json()) as PreviewDiff;
    const removed = diff.changes.find((change) => change.reason === 'column-removed');
    // The scenario holds: dropping country breaks the dashboard's job, which reads it.
    expect(removed).toMatchObject({
      category: 'breaking',
      column: 'country',
      node: `dataset:${WAREHOUSE}:analytics.orders`,
    });
    expect(removed!.consumers.map((consumer) => consumer.nodeId)).toContain('job:dashboards:revenue');

    await page.goto(`${url}/?preview=pr-7`);
    await banner().getByRole('link', { name: 'Changes against production' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/previews/pr-7');
    const summary = page.getByRole('region', { name: 'Summary' });
    await expect
      .poll(() => summary.locator('dd').allInnerTexts())
      .toEqual(
        [diff.summary.breaking, diff.summary.partial, diff.summary.nonBreaking, diff.summary.consumers].map(
          String,
        ),
      );

    const breaking = page.getByRole('region', { name: 'Breaking changes', exact: true });
    expect(await breaking.getByRole('heading').innerText()).toBe(`✕ Breaking (${diff.summary.breaking})`);
    const change = breaking.getByRole('listitem').filter({ hasText: 'column country' });
    expect(await change.locator('.preview-change__head').textContent()).toBe(
      `column removed analytics.orders column country · ${removed!.from ?? '—'} → ${removed!.to ?? '—'}`,
    );
    expect(await change.locator('p').innerText()).toBe(removed!.detail);
    const consumers = change.getByRole('table', { name: 'Production consumers' });
    // Each consumer as the server reached it: the dashboard's job, then what it writes.
    const rows = await consumers
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.innerText)));
    expect(rows).toEqual(
      removed!.consumers.map((c) => [
        `${c.kind} ${nodeLabel(c.nodeId)}`,
        String(c.distance),
        c.owners.map((owner) => owner.name).join(', ') || '—',
        c.breakingColumns.map(nodeLabel).join(', ') || '—',
        c.coarse ? 'none: it may read what changed' : 'yes',
      ]),
    );
    expect(rows[0]).toEqual(['job revenue', '1', '—', 'analytics.orders.country', 'yes']);

    // The sections come in the server's order, breaking first.
    const order = ['Breaking', 'Partial', 'Non-breaking'].filter((title) =>
      diff.changes.some((c) => c.category === title.toLowerCase()),
    );
    expect(await page.locator('section[aria-label$=" changes"] h2').allInnerTexts()).toEqual(
      order.map((title) => expect.stringContaining(title) as string),
    );

    const added = (label: string) => page.getByRole('list', { name: label }).innerText();
    expect(diff.datasets.added).toEqual([`dataset:${WAREHOUSE}:pr_7.extra`]);
    expect(await added('Datasets added and removed')).toBe('+ added pr_7.extra');
    expect(await added('Jobs added and removed')).toBe(
      diff.jobs.added.map((id) => `+ added ${nodeLabel(id)}`).join('\n'),
    );
    expect(
      await page.getByRole('list', { name: 'Unmapped preview datasets' }).getByRole('link').allInnerTexts(),
    ).toEqual(diff.mappingCoverage.unmapped.map(nodeLabel));
    await screenshot(page, 'preview-diff');

    // A consumer is production's: its link leaves the preview.
    const revenue = consumers.getByRole('link', { name: 'revenue', exact: true });
    expect(await revenue.getAttribute('href')).toBe('/jobs/dashboards/revenue');
    await revenue.click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/jobs/dashboards/revenue');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('revenue');
    expect(shownPreview()).toBeNull();
    expect(await banner().count()).toBe(0);
  });
});
