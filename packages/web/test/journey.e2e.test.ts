/**
 * The Journey tab of a dataset page in Chromium: where a dataset's (and a column's) data went over a window, as the
 * server's `/api/v1/compliance/journey` answers: a lane per hop with its runs, owner changes on the time axis,
 * transfers between the jurisdictions a person maps, the masked hop of a column drawn dashed, the report's hash,
 * its exports, and the server's refusal of a window before the retention horizon.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JourneyJson } from '../src/api/analysis.js';
import { axisFraction } from '../src/api/journey.js';
import { browserAvailable, screenshot } from './helpers/browser.js';
import { ingestEvents, openExplorer, type ExplorerSession } from './helpers/explorer.js';
import { facet } from './helpers/run-events.js';

const EU_RAW = 's3://acme-eu-raw';
const EU_DB = 'postgres://eu-db:5432';
const US = 's3://acme-us-exports';
const at = (day: number, hour = 0) => new Date(Date.UTC(2026, 2, day, hour)).toISOString();

interface Dataset {
  namespace: string;
  name: string;
  facets?: Record<string, unknown>;
}
const event = (
  eventType: 'START' | 'COMPLETE',
  eventTime: string,
  runId: string,
  [namespace, name]: [string, string],
  inputs: Dataset[],
  outputs: Dataset[],
) => ({
  eventType,
  eventTime,
  producer: 'https://example.com/headwater/journey-e2e',
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
  run: { runId },
  job: { namespace, name },
  inputs,
  outputs,
});
/** Column lineage: each column from `[namespace, dataset, column]`, masking it when the fourth item says so. */
const lineage = (fields: Record<string, [string, string, string, boolean?]>) =>
  facet('ColumnLineageDatasetFacet', {
    fields: Object.fromEntries(
      Object.entries(fields).map(([field, [namespace, name, input, masking]]) => [
        field,
        {
          inputFields: [
            {
              namespace,
              name,
              field: input,
              transformations: [
                {
                  type: 'DIRECT',
                  subtype: masking ? 'TRANSFORMATION' : 'IDENTITY',
                  ...(masking ? { masking } : {}),
                },
              ],
            },
          ],
        },
      ]),
    ),
  });
const schema = (...names: string[]) =>
  facet('SchemaDatasetFacet', { fields: names.map((name) => ({ name, type: 'text' })) });
const owners = (name: string) => facet('OwnershipDatasetFacet', { owners: [{ name, type: 'MAINTAINER' }] });

/** raw customers (EU) -> clean, twice, its owner changing between -> warehouse (EU) -> export, masking -> US. */
const CLEAN_RUNS = [randomUUID(), randomUUID()];
const rawCustomers = { namespace: EU_RAW, name: 'customers', facets: { schema: schema('email', 'name') } };
const scenario = [
  event(
    'COMPLETE',
    at(1),
    randomUUID(),
    ['etl', 'legacy'],
    [rawCustomers],
    [{ namespace: EU_DB, name: 'legacy.customers' }],
  ),
  ...CLEAN_RUNS.flatMap((runId, index) => [
    event('START', at(10 + index), runId, ['etl', 'clean'], [rawCustomers], []),
    event(
      'COMPLETE',
      at(10 + index, 1),
      runId,
      ['etl', 'clean'],
      [rawCustomers],
      [
        {
          namespace: EU_DB,
          name: 'warehouse.customers',
          facets: {
            schema: schema('email', 'name'),
            columnLineage: lineage({
              email: [EU_RAW, 'customers', 'email'],
              name: [EU_RAW, 'customers', 'name'],
            }),
            ownership: owners(index === 0 ? 'team:crm' : 'team:privacy'),
          },
        },
      ],
    ),
  ]),
  event(
    'COMPLETE',
    at(13),
    randomUUID(),
    ['export', 'us_partner'],
    [{ namespace: EU_DB, name: 'warehouse.customers' }],
    [
      {
        namespace: US,
        name: 'customers_masked',
        facets: {
          schema: schema('email_hash'),
          columnLineage: lineage({ email_hash: [EU_DB, 'warehouse.customers', 'email', true] }),
        },
      },
    ],
  ),
];

const JURISDICTIONS = ['s3://acme-eu-*=EU', 'postgres://eu-*=EU', 's3://acme-us-*=US'];

describe.skipIf(!browserAvailable())("a dataset's journey in the explorer, in Chromium", () => {
  let url: string;
  let page: Page;
  let session: ExplorerSession | undefined;

  beforeAll(async () => {
    session = await openExplorer((serverUrl) => ingestEvents(serverUrl, scenario));
    ({ url, page } = session);
  });

  afterAll(async () => {
    await session?.close();
  });

  const journeyOf = async (query: string) => {
    const response = await fetch(`${url}/api/v1/compliance/journey?${query}`);
    expect(response.status).toBe(200);
    return (await response.json()) as JourneyJson;
  };
  const lanes = () => page.getByRole('list', { name: 'Hops over the window' }).getByRole('listitem');
  const laneTexts = async () =>
    (await lanes().allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
  const sha256 = () => page.getByLabel('SHA-256', { exact: true }).innerText();

  test('the Journey tab shows a lane per hop with its runs, owner changes, transfers and the hash', async () => {
    await page.goto(`${url}/datasets/${encodeURIComponent(EU_RAW)}/customers`);
    await expect.poll(() => page.getByRole('table', { name: 'Schema' }).innerText()).toContain('email');
    await page
      .getByRole('navigation', { name: 'Dataset views' })
      .getByRole('link', { name: 'Journey' })
      .click();
    expect(new URL(page.url()).pathname).toBe(`/datasets/${encodeURIComponent(EU_RAW)}/customers/journey`);

    // The server's default window: the 90 days up to the latest event, which the view shows as the answer says.
    const defaults = await journeyOf(`nodeId=${encodeURIComponent(`dataset:${EU_RAW}:customers`)}`);
    expect(defaults.bounds.to).toBe(at(13));
    await expect
      .poll(laneTexts)
      .toEqual([
        'customers → legacy.customers via legacy 1 run',
        'customers → warehouse.customers via clean 2 runs',
        'warehouse.customers → customers_masked via us_partner 1 run',
      ]);
    const bounds = await page.getByLabel('Bounds').innerText();
    expect(bounds).toContain(`from ${defaults.bounds.from} to ${defaults.bounds.to}`);
    expect(await sha256()).toBe(defaults.sha256);

    // The owner of the warehouse changed between the two runs of clean: a marker where the new period begins.
    const markers = page.getByRole('list', { name: 'Owner changes' }).getByRole('listitem');
    await expect
      .poll(() => markers.evaluateAll((items) => items.map((item) => item.getAttribute('aria-label'))))
      .toEqual([
        `warehouse.customers: owners — → team:crm (maintainer) from ${at(10, 1)}`,
        `warehouse.customers: owners team:crm (maintainer) → team:privacy (maintainer) from ${at(11, 1)}`,
      ]);
    expect(await markers.nth(1).getAttribute('title')).toContain('team:privacy');
    expect(await markers.nth(1).evaluate((marker) => marker.style.left)).toBe(
      `${(axisFraction(at(11, 1), defaults.bounds) * 100).toFixed(3)}%`,
    );

    // With the namespaces mapped to jurisdictions, the export to the US is a transfer, in words.
    const jurisdictions = page.getByLabel('Jurisdictions (PATTERN=NAME a line)');
    await jurisdictions.fill(JURISDICTIONS.join('\n'));
    await page.getByLabel('Tags').fill('pii');
    await page.getByRole('button', { name: 'Show the journey' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.getAll('jurisdiction')).toEqual(JURISDICTIONS);
    await expect
      .poll(laneTexts)
      .toContain('warehouse.customers → customers_masked via us_partner 1 run transfer EU → US');
    expect((await laneTexts()).filter((text) => text.includes('transfer'))).toHaveLength(1);
    expect(await lanes().nth(2).getAttribute('class')).toContain('journey-lane--transfer');
    const query = [
      `nodeId=${encodeURIComponent(`dataset:${EU_RAW}:customers`)}`,
      'tags=pii',
      ...JURISDICTIONS.map((entry) => `jurisdiction=${encodeURIComponent(entry)}`),
    ].join('&');
    const mapped = await journeyOf(query);
    expect(mapped.transfers).toBe(1);
    await expect.poll(sha256).toBe(mapped.sha256);
    expect(mapped.sha256).not.toBe(defaults.sha256);
    const nodes = await page.getByRole('table', { name: 'Nodes' }).locator('tbody tr').allInnerTexts();
    expect(
      nodes.map((row) =>
        row
          .split('\t')
          .slice(0, 3)
          .map((cell) => cell.replace(/\s+/g, ' ').trim())
          .join(' | '),
      ),
    ).toEqual([
      `customers ${EU_RAW} | 0 | EU`,
      `legacy.customers ${EU_DB} | 1 | EU`,
      `warehouse.customers ${EU_DB} | 1 | EU`,
      `customers_masked ${US} | 2 | US`,
    ]);

    // The evidence: each sampled run links to its page.
    const runs = page
      .getByRole('list', { name: 'Runs of customers → warehouse.customers' })
      .getByRole('link');
    expect((await runs.allInnerTexts()).sort()).toEqual([...CLEAN_RUNS].sort());
    expect(await runs.first().getAttribute('href')).toMatch(/^\/runs\//);
    await screenshot(page, 'journey-dataset');

    // The Markdown export is the server's report of the same question, with the same hash.
    const [markdown] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export Markdown' }).click(),
    ]);
    expect(markdown.suggestedFilename()).toBe('journey-customers.md');
    const text = await readFile(await markdown.path(), 'utf8');
    expect(text).toContain(mapped.sha256);
    expect(text).toContain(`Data journey of \`dataset:${EU_RAW}:customers\``);
    const [json] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export JSON' }).click(),
    ]);
    expect((JSON.parse(await readFile(await json.path(), 'utf8')) as JourneyJson).sha256).toBe(mapped.sha256);
  });

  test("a column's journey, from the schema's link, draws the masked hop dashed", async () => {
    await page.goto(`${url}/datasets/${encodeURIComponent(EU_RAW)}/customers`);
    await page.getByRole('link', { name: 'Journey of email' }).click();
    expect(new URL(page.url()).searchParams.get('column')).toBe('email');
    expect(await page.getByLabel('Column').inputValue()).toBe('email');
    await expect
      .poll(laneTexts)
      .toEqual([
        'customers.email → warehouse.customers.email via clean 2 runs',
        'warehouse.customers.email → customers_masked.email_hash via us_partner 1 run masked',
      ]);
    const border = (index: number) =>
      lanes()
        .nth(index)
        .locator('.journey-lane__bar')
        .evaluate((bar) => getComputedStyle(bar).borderTopStyle);
    expect(await border(0)).toBe('solid');
    expect(await border(1)).toBe('dashed');
    const column = await journeyOf(`nodeId=${encodeURIComponent(`datasetField:${EU_RAW}:customers:email`)}`);
    expect(column.hops.map((hop) => hop.masked)).toEqual([false, true]);
    expect(await sha256()).toBe(column.sha256);
    await screenshot(page, 'journey-column');
  });

  test('a mistyped question is refused before it is asked, with what to write', async () => {
    await page.goto(`${url}/datasets/${encodeURIComponent(EU_RAW)}/customers/journey`);
    await expect.poll(laneTexts).toHaveLength(3);
    await page.getByLabel('Jurisdictions (PATTERN=NAME a line)').fill('EU');
    await page.getByRole('button', { name: 'Show the journey' }).click();
    expect(await page.getByRole('alert').innerText()).toContain(
      'Jurisdiction line 1 ("EU") is not PATTERN=NAME',
    );
    expect(new URL(page.url()).searchParams.getAll('jurisdiction')).toEqual([]);
  });

  // Last: the horizon it sets refuses the default window of the tests above.
  test("a window before the retention horizon shows the server's message", async () => {
    await session!.server.db.query(
      `INSERT INTO retention_horizon (history_from) VALUES ($1)
       ON CONFLICT (single) DO UPDATE SET history_from = EXCLUDED.history_from`,
      [new Date(at(2))],
    );
    await page.goto(`${url}/datasets/${encodeURIComponent(EU_RAW)}/customers/journey?from=${at(1)}`);
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toContain("before the server's retention horizon");
    expect(await alert.innerText()).toContain(`from ${at(1)} is before ${at(2)}`);
    expect(await page.getByRole('list', { name: 'Hops over the window' }).count()).toBe(0);
  });
});
