/**
 * True signals in Chromium, from what real dbt-ol sent over four builds (the server's dbt-signals fixture): a test
 * fixed by renaming it and a deleted test show as retired, tests dbt skipped show as not run beside their last real
 * result, a test run dbt-ol failed only for skipped tests shows as SKIPPED, and root cause names the failed model.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserAvailable, screenshot } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';

const fixture = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../server/test/fixtures/producers/dbt-signals/events.ndjson',
);
const lines = readFileSync(fixture, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '');
const events = lines.map((line) => JSON.parse(line) as { job: { name: string }; eventType: string });
// The builds end with the terminal event of their invocation's job; the third is the one that skipped tests.
const ends = events.flatMap((e, i) =>
  e.job.name === 'dbt-run-signals' && e.eventType !== 'START' ? [i] : [],
);
const database = events[1]!.job.name.split('.')[0]!;
const WAREHOUSE = 'postgres://127.0.0.1:5432';
const revenuePath = `/datasets/${encodeURIComponent(WAREHOUSE)}/${encodeURIComponent(`${database}.analytics.customer_revenue`)}`;

describe.skipIf(!browserAvailable())('true signals from real dbt-ol runs, in Chromium', () => {
  let url: string;
  let page: Page;
  let session: ExplorerSession | undefined;

  beforeAll(async () => {
    session = await openExplorer(async (serverUrl) => {
      // The first three builds: the renamed and deleted tests, then the broken model and its skipped tests.
      const response = await fetch(`${serverUrl}/api/v1/lineage/batch`, {
        method: 'POST',
        body: `[${lines.slice(0, ends[2]! + 1).join(',')}]`,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(200);
    });
    ({ url, page } = session);
  });

  afterAll(async () => {
    await session?.close();
  });

  test('the dataset page: retired and not-run tests apart, and the failed model as the cause', async () => {
    await page.goto(`${url}${revenuePath}`);
    const table = page.getByRole('table', { name: 'Data-quality assertions' });
    await expect.poll(() => table.locator('tbody tr').count()).toBe(3);
    const rows = await table.locator('tbody tr').allInnerTexts();
    const row = (name: string) => rows.find((r) => r.includes(`${name}\n`) || r.endsWith(name)) ?? '';
    // The test as it is now: its last real result passed, and build 3 did not run it.
    expect(row('accepted_values_customer_revenue_country__NL__DE__BE')).toMatch(/^PASSED[\s\S]*not run at/);
    // The test fixed under a new name, and the deleted one: retired, not failing.
    expect(row('accepted_values_customer_revenue_country__NL__DE')).toMatch(
      /^RETIRED[\s\S]*no longer reported/,
    );
    expect(row('not_null_customer_revenue_revenue')).toMatch(/^RETIRED/);
    expect(rows.join('\n')).not.toContain('FAILED');
    const causes = page.getByRole('region', { name: 'Root cause' }).getByRole('list', { name: 'Causes' });
    await expect
      .poll(() => causes.locator('.cause__node').allInnerTexts())
      .toEqual([`${database}.analytics.signals.stg_orders.build.run`]);
    await screenshot(page, 'signals-dataset');
  });

  test('the test run dbt-ol failed only for skipped tests reads SKIPPED on its job page', async () => {
    const job = `${database}.analytics.signals.customer_revenue.build.test`;
    await page.goto(`${url}/jobs/dbt_signals/${encodeURIComponent(job)}`);
    const history = page.getByRole('table', { name: 'Run history' });
    await expect.poll(() => history.locator('tbody tr').count()).toBe(3);
    // Newest first: build 3's run did not execute; build 2's passed; build 1's failed for real.
    expect((await history.locator('tbody tr td:first-child').allInnerTexts()).map((t) => t.trim())).toEqual([
      'SKIPPED',
      'COMPLETED',
      'FAILED',
    ]);
    await screenshot(page, 'signals-job');
  });
});
