/**
 * The job page's declared-against-observed panel in Chromium: a pipeline pushed as JobEvents (each node naming
 * it in parentJob), then a partial run of one node that also writes a dataset it never declared.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserAvailable, screenshot } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';
import { PRODUCER, runEventBuilder } from './helpers/run-events.js';

const NS = 'kedro-declared';
const PIPELINE = 'shop.__default__';
const T0 = Date.parse('2025-03-14T09:00:00Z');
const PIPELINE_RUN = '01958b7a-0000-7000-8000-00000000d001';
const LOAD_RUN = '01958b7a-0000-7000-8000-00000000d002';
const ref = (name: string) => ({ namespace: NS, name });
const facet = (body: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `${PRODUCER}/schemas/ParentJobFacet.json`,
  ...body,
});
const jobEvent = (name: string, inputs: string[], outputs: string[]) => ({
  eventTime: new Date(T0).toISOString(),
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent',
  job: { namespace: NS, name, facets: { headwater_parentJob: facet({ job: ref(PIPELINE) }) } },
  inputs: inputs.map(ref),
  outputs: outputs.map(ref),
});
const runEvent = runEventBuilder(NS, PIPELINE);

describe.skipIf(!browserAvailable())('declared against observed lineage on the job page, in Chromium', () => {
  let url: string;
  let page: Page;
  let session: ExplorerSession | undefined;

  beforeAll(async () => {
    session = await openExplorer(async (serverUrl) => {
      const events = [
        jobEvent('load', [], ['orders_raw']),
        jobEvent('clean', ['orders_raw'], ['orders']),
        runEvent('START', T0 + 1000, PIPELINE_RUN, PIPELINE),
        runEvent('START', T0 + 1000, LOAD_RUN, 'load', { parent: PIPELINE_RUN }),
        runEvent('COMPLETE', T0 + 2000, LOAD_RUN, 'load', {
          parent: PIPELINE_RUN,
          outputs: ['orders_raw', 'orders_backup'].map(ref),
        }),
        runEvent('COMPLETE', T0 + 3000, PIPELINE_RUN, PIPELINE),
        runEvent('COMPLETE', T0 + 3000, '01958b7a-0000-7000-8000-00000000d003', 'undeclared'),
      ];
      const response = await fetch(`${serverUrl}/api/v1/lineage/batch`, {
        method: 'POST',
        body: JSON.stringify(events),
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(200);
    });
    ({ url, page } = session);
  });

  afterAll(async () => {
    await session?.close();
  });

  test('the pipeline page lists the node that never completed, its edges, and the undeclared write', async () => {
    await page.goto(`${url}/jobs/${NS}/${PIPELINE}`);
    const panel = page.getByRole('region', { name: 'Declared against observed' });
    await expect
      .poll(() => panel.getByRole('heading', { level: 3 }).allTextContents())
      .toEqual(['Declared, not touched (2)', 'Observed, never declared (1)']);
    expect(await panel.getByText('Never completed:').innerText()).toBe('Never completed: clean');
    expect(await panel.getByRole('list', { name: 'Declared, not touched' }).innerText()).toBe(
      'clean reads orders_raw\nclean writes orders',
    );
    expect(await panel.getByRole('list', { name: 'Observed, never declared' }).innerText()).toBe(
      'load writes orders_backup',
    );
    await screenshot(page, 'job-declared-lineage');
    await panel.getByRole('link', { name: 'orders_backup' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/datasets/${NS}/orders_backup`);
  });

  test('a job no JobEvent declared has no such panel', async () => {
    await page.goto(`${url}/jobs/${NS}/undeclared`);
    await page.getByRole('heading', { name: 'Run history' }).waitFor();
    await page
      .getByRole('link', { name: /01958b7a/ })
      .first()
      .waitFor();
    expect(await page.getByRole('region', { name: 'Declared against observed' }).count()).toBe(0);
  });
});
