/**
 * Dataset aliases on the dataset page in Chromium: a storage path written by Spark declared an alias of the table
 * dbt reads. Each page names the other, and the alias's page lists the jobs of the dataset it is.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserAvailable, screenshot } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';
import { PRODUCER } from './helpers/run-events.js';

const PATH = { namespace: 's3://bucket', name: 'warehouse/orders' };
const TABLE = { namespace: 'hive://metastore', name: 'db.orders' };
const T0 = Date.parse('2025-03-14T09:00:00Z');

const run = (index: number, job: string, inputs: object[], outputs: object[]) => ({
  eventType: 'COMPLETE',
  eventTime: new Date(T0 + index * 60_000).toISOString(),
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
  run: { runId: `01958b7a-0000-7000-8000-00000000a00${index}` },
  job: { namespace: 'etl', name: job },
  inputs,
  outputs,
});

describe.skipIf(!browserAvailable())('dataset aliases on the dataset page, in Chromium', () => {
  let url: string;
  let page: Page;
  let session: ExplorerSession | undefined;

  beforeAll(async () => {
    session = await openExplorer(async (serverUrl) => {
      const events = [
        run(1, 'spark_load_orders', [{ namespace: 's3://raw', name: 'orders_raw' }], [PATH]),
        run(2, 'dbt_orders_mart', [TABLE], [{ namespace: TABLE.namespace, name: 'db.orders_mart' }]),
      ];
      const batch = await fetch(`${serverUrl}/api/v1/lineage/batch`, {
        method: 'POST',
        body: JSON.stringify(events),
        headers: { 'content-type': 'application/json' },
      });
      expect(batch.status).toBe(200);
      const declared = await fetch(
        `${serverUrl}/api/v1/namespaces/${encodeURIComponent(PATH.namespace)}/datasets/${encodeURIComponent(PATH.name)}/alias`,
        { method: 'PUT', body: JSON.stringify(TABLE), headers: { 'content-type': 'application/json' } },
      );
      expect(declared.status).toBe(200);
    });
    ({ url, page } = session);
  });

  afterAll(async () => {
    await session?.close();
  });

  const facts = async () => {
    const about = page.locator('section', { has: page.getByRole('heading', { name: 'About' }) });
    await expect.poll(() => about.locator('dt').count()).toBeGreaterThan(3);
    const terms = await about.locator('dt').allInnerTexts();
    const values = await about.locator('dd').allInnerTexts();
    return Object.fromEntries(terms.map((term, index) => [term, values[index]]));
  };

  test("the alias's page names the dataset it is and shows that dataset's jobs; that one lists its aliases", async () => {
    await page.goto(`${url}/datasets/${encodeURIComponent(PATH.namespace)}/${encodeURIComponent(PATH.name)}`);
    expect(await facts()).toMatchObject({ 'Alias of': `${TABLE.namespace}:${TABLE.name}` });
    // Spark wrote the path, dbt reads the table: joined, the alias's page shows both.
    const jobs = (label: string) => page.getByRole('list', { name: label }).getByRole('link').allInnerTexts();
    await expect.poll(() => jobs('Producing jobs')).toEqual(['spark_load_orders']);
    await expect.poll(() => jobs('Consuming jobs')).toEqual(['dbt_orders_mart']);
    await screenshot(page, 'dataset-alias');
    await page.getByRole('link', { name: `${TABLE.namespace}:${TABLE.name}` }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toContain(TABLE.name);
    expect(await facts()).toMatchObject({ Aliases: `${PATH.namespace}:${PATH.name}` });
    expect(await facts()).not.toHaveProperty('Alias of');
  });
});
