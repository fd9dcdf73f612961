/**
 * Incidents in Chromium: a real server with an alerts configuration loads the demo, whose load_orders failure
 * opens one incident; two webhook receivers on loopback stand for the owners' channels (finance answers 200,
 * platform refuses with 400). What is checked is what a person sees: the list, the incident with what it breaks,
 * who was told and why and each delivery's state, acknowledging and resolving it (and the 409 of a stale page),
 * the health badge of a broken dataset and job, and the home page starting from what is broken downstream.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { demoNames, demoScenario } from '../../server/src/cli/demo-scenario.js';
import { until } from '../../server/test/helpers/wait.js';
import type { Incident, IncidentDetail } from '../src/api/types.js';
import { paths } from '../src/paths.js';
import { browserAvailable, screenshot } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';

const LOAD_ORDERS = `job:${demoNames.airflow}:${demoNames.loadOrders}`;

/** A webhook receiver on loopback that answers every request with `status` and `body`. */
async function receiver(status: number, body: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status, { 'content-type': 'text/plain' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

describe.skipIf(!browserAvailable())('incidents in Chromium, on the demo', () => {
  let url: string;
  let page: Page;
  let session: ExplorerSession | undefined;
  let dir: string | undefined;
  const receivers: Awaited<ReturnType<typeof receiver>>[] = [];
  let incident: Incident;

  const api = async <T>(route: string, init?: RequestInit): Promise<{ status: number; body: T }> => {
    const response = await fetch(`${url}/api/v1${route}`, init);
    return { status: response.status, body: (await response.json()) as T };
  };
  const detail = async () => (await api<IncidentDetail>(`/incidents/${incident.id}`)).body;

  beforeAll(async () => {
    const finance = await receiver(200, 'ok');
    const platform = await receiver(400, 'no such hook');
    receivers.push(finance, platform);
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-web-alerts-'));
    const file = path.join(dir, 'alerts.yaml');
    await writeFile(
      file,
      [
        'owners:',
        '  team:finance-analytics: finance',
        '  team:data-platform: platform',
        'channels:',
        `  finance: { type: webhook, url: "${finance.url}", secret: "${secret()}" }`,
        `  platform: { type: webhook, url: "${platform.url}", secret: "${secret()}" }`,
        'rules:',
        '  - name: everything',
        '    on: [run_failed, assertion_failed]',
        '    retryGrace: 0s',
        '',
      ].join('\n'),
    );
    session = await openExplorer(
      async (serverUrl) => {
        const response = await fetch(`${serverUrl}/api/v1/lineage/batch`, {
          method: 'POST',
          body: JSON.stringify(demoScenario().events),
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(200);
      },
      { alertsConfig: file },
    );
    ({ url, page } = session);
    // Incidents open after the commit, and their deliveries go out after that: wait until both channels answered.
    const [opened] = await until(
      'the incident of the demo',
      async () => (await api<{ incidents: Incident[] }>('/incidents')).body.incidents,
      (list) => list.length > 0,
    );
    incident = opened!;
    await until(
      'its deliveries sent or given up',
      async () => (await detail()).timeline.flatMap((t) => t.deliveries.map((d) => d.state)),
      (states) => states.length === 2 && !states.includes('pending'),
    );
  });

  afterAll(async () => {
    await session?.close();
    for (const r of receivers) await r.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the list: the one incident, rooted at load_orders, with what it breaks and who was told', async () => {
    expect([incident.signal, incident.root, incident.status]).toEqual(['run_failed', LOAD_ORDERS, 'open']);
    await page.goto(url);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Incidents' }).click();
    const table = page.getByRole('table', { name: 'Incidents' });
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    const cells = (await table.locator('tbody tr td').allInnerTexts()).map((t) => t.trim());
    expect(cells[0]).toBe('OPEN');
    expect(cells[1]).toBe(incident.headline);
    expect(cells[2]).toBe('Run failed');
    expect(cells[3]).toContain(demoNames.loadOrders);
    expect(cells[6]).toBe(
      `${incident.impacted.datasets.length} datasets, ${incident.impacted.jobs.length} jobs`,
    );
    const told = incident.recipients.map((r) => ('channel' in r.address ? r.address.channel : ''));
    expect([...told].sort()).toEqual(['finance', 'platform']);
    expect(cells[7]).toBe(told.map((channel) => `channel ${channel}`).join(', '));
    expect(
      await table.getByRole('link', { name: demoNames.loadOrders, exact: true }).getAttribute('href'),
    ).toBe(paths.job(demoNames.airflow, demoNames.loadOrders));
    expect(await table.getByRole('link', { name: incident.headline }).getAttribute('href')).toBe(
      paths.incident(incident.id),
    );
    // Nothing is resolved yet; all shows the same one.
    const status = page.getByRole('group', { name: 'Status' });
    await status.getByRole('button', { name: 'Resolved', exact: true }).click();
    await expect.poll(() => page.getByText('No resolved incidents.').count()).toBe(1);
    await status.getByRole('button', { name: 'All' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await screenshot(page, 'incidents-list');
  });

  test('the incident: root cause, what it breaks nearest first, who is told and why, signals, deliveries', async () => {
    await page.goto(`${url}${paths.incident(incident.id)}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe(incident.headline);
    const root = page.getByRole('region', { name: 'Root cause' });
    expect(await root.getByRole('link', { name: demoNames.loadOrders }).getAttribute('href')).toBe(
      paths.job(demoNames.airflow, demoNames.loadOrders),
    );
    expect(incident.rootCause.errorMessage).toBeTruthy();
    expect(await root.getByLabel('Error message').innerText()).toBe(incident.rootCause.errorMessage);

    const impacted = page.getByRole('table', { name: 'Impacted' });
    const rows = (await impacted.locator('tbody tr').allInnerTexts()).map((r) =>
      r.split('\t').map((c) => c.trim()),
    );
    const dashboard = incident.impacted.datasets.find((d) => d.name === demoNames.dashboard)!;
    expect(dashboard.depth).toBeGreaterThan(1);
    expect(rows).toContainEqual([
      `${dashboard.depth} hops`,
      'Dataset',
      demoNames.dashboard,
      demoNames.looker,
      (dashboard.columns ?? []).join(', '),
    ]);
    // Column precision: the dashboard's columns the failure reaches.
    expect(dashboard.columns).toContain('gross_revenue');
    expect(rows[0]!.slice(0, 3)).toEqual(['1 hop', 'Dataset', demoNames.stagingOrders]);
    const depths = rows.map((r) => Number.parseInt(r[0]!, 10));
    expect(depths).toEqual([...depths].sort((a, b) => a - b));
    expect(rows.map((r) => r[2]).sort()).toEqual(
      [...incident.impacted.datasets, ...incident.impacted.jobs].map((n) => n.name).sort(),
    );

    const recipients = page.getByRole('list', { name: 'Recipients' });
    expect(
      await page
        .getByRole('list', { name: 'Why channel finance is told' })
        .getByRole('listitem')
        .allInnerTexts(),
    ).toContain(
      `team:finance-analytics owns ${demoNames.looker}/${demoNames.dashboard} (${dashboard.depth} hops downstream` +
        `, columns ${dashboard.columns!.join(', ')})`,
    );
    expect(
      await page
        .getByRole('list', { name: 'Why channel platform is told' })
        .getByRole('listitem')
        .allInnerTexts(),
    ).toContain(`team:data-platform owns ${demoNames.airflow}/${demoNames.loadOrders}, the root cause`);
    expect((await recipients.locator(':scope > li > strong').allInnerTexts()).sort()).toEqual([
      'channel finance',
      'channel platform',
    ]);

    // The task's failure, the DAG run it failed, and dbt's freshness test on the staging table it did not load.
    const signals = page.getByRole('table', { name: 'Signals' });
    const signalRows = (await signals.locator('tbody tr').allInnerTexts()).map((r) =>
      r
        .split('\t')
        .slice(0, 2)
        .map((c) => c.trim()),
    );
    expect(signalRows.sort()).toEqual(
      [
        ['Assertion failed', demoNames.stagingOrders],
        ['Run failed', demoNames.dag],
        ['Run failed', demoNames.loadOrders],
      ].sort(),
    );
    const freshness = await signals.locator('tbody tr', { hasText: 'Assertion failed' }).innerText();
    expect(freshness).toMatch(/freshness\(_loaded_at\): expected .*, actual /);
    expect(freshness).toContain(`reported by ${demoNames.dbtModel}`);

    const opened = page.getByRole('list', { name: 'Deliveries: Opened' });
    const deliveries = await opened.getByRole('listitem').allInnerTexts();
    expect(deliveries.find((d) => d.includes('channel finance'))).toMatch(/^✓ channel finance: sent /);
    expect(deliveries.find((d) => d.includes('channel platform'))).toMatch(
      /^✕ channel platform: given up .* after 1 attempt: HTTP 400/,
    );
    await screenshot(page, 'incident');
  });

  test('the dataset page of the dashboard and the job page of load_orders show the health badge', async () => {
    await page.goto(`${url}${paths.dataset(demoNames.looker, demoNames.dashboard)}`);
    const health = page.getByRole('region', { name: 'Health' });
    const badge = health.getByRole('link', { name: `Broken: ${incident.headline}` });
    await expect.poll(() => badge.count()).toBe(1);
    expect(await badge.getAttribute('href')).toBe(paths.incident(incident.id));
    const dashboard = incident.impacted.datasets.find((d) => d.name === demoNames.dashboard)!;
    expect(await health.innerText()).toContain(
      `${dashboard.depth} hops downstream of ${demoNames.loadOrders}`,
    );
    await screenshot(page, 'incident-dataset-badge');

    await page.goto(`${url}${paths.job(demoNames.airflow, demoNames.loadOrders)}`);
    await expect
      .poll(() => page.getByRole('region', { name: 'Health' }).innerText())
      .toContain('this job is the root cause');
    // A dataset upstream of the failure is not broken by it: once the incidents are read and drawn, no badge.
    const answered = page.waitForResponse((r) => r.url().includes('/api/v1/incidents?status=unresolved'));
    await page.goto(`${url}${paths.dataset(demoNames.raw, demoNames.rawOrders)}`);
    await (await answered).finished();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe(demoNames.rawOrders);
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
    );
    expect(await page.getByRole('region', { name: 'Health' }).count()).toBe(0);
  });

  test('the home page starts from what is broken downstream, the dashboard first', async () => {
    await page.goto(url);
    const broken = page.getByRole('list', { name: 'Broken datasets' });
    await expect.poll(() => broken.getByRole('listitem').count()).toBe(incident.impacted.datasets.length);
    const items = await broken.getByRole('listitem').allInnerTexts();
    const dashboard = incident.impacted.datasets.find((d) => d.name === demoNames.dashboard)!;
    expect(items[0]).toBe(
      `${demoNames.dashboard} ${demoNames.looker} — broken by ${demoNames.loadOrders} failing, ${dashboard.depth} hops up`,
    );
    expect(
      await broken
        .getByRole('listitem')
        .first()
        .getByRole('link', { name: /^broken by/ })
        .getAttribute('href'),
    ).toBe(paths.incident(incident.id));
    await screenshot(page, 'incident-home');
  });

  test('acknowledging and resolving through the page; a stale page shows the 409 and then the incident as it is', async () => {
    await page.goto(`${url}${paths.incident(incident.id)}`);
    const actions = page.getByRole('region', { name: 'Actions' });
    await actions.getByLabel(/^Note/).fill('Looking at the duplicate key');
    await actions.getByRole('button', { name: 'Acknowledge' }).click();
    await expect.poll(() => page.locator('.page__header .badge').innerText()).toBe('ACKNOWLEDGED');
    const after = await api<{ incidents: Incident[] }>('/incidents?status=acknowledged');
    expect(after.body.incidents.map((i) => [i.id, i.status, i.acknowledgedBy])).toEqual([
      [incident.id, 'acknowledged', 'anonymous'],
    ]);
    const timeline = page.getByRole('list', { name: 'Timeline' });
    await expect.poll(() => timeline.locator(':scope > li').count()).toBe(2);
    const acknowledged = await timeline.locator(':scope > li').nth(1).innerText();
    expect(acknowledged).toContain('Acknowledged by anonymous');
    expect(acknowledged).toContain('Looking at the duplicate key');
    // Acknowledged, it can only be resolved.
    expect(await actions.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);

    // Someone else resolves it meanwhile; this page still offers Resolve.
    const resolved = await api<Incident>(`/incidents/${incident.id}/resolve`, {
      method: 'POST',
      body: JSON.stringify({ note: 'fixed upstream' }),
      headers: { 'content-type': 'application/json' },
    });
    expect([resolved.status, resolved.body.status]).toEqual([200, 'resolved']);
    await actions.getByRole('button', { name: 'Resolve' }).click();
    const alert = actions.getByRole('alert');
    await expect.poll(() => alert.innerText()).toContain('the incident changed meanwhile');
    expect(await alert.innerText()).toContain('is resolved already');
    await expect.poll(() => page.locator('.page__header .badge').innerText()).toBe('RESOLVED');
    expect(await actions.getByRole('button').count()).toBe(0);
    await screenshot(page, 'incident-resolved');

    // Resolved, it leaves the default list.
    await page.goto(`${url}${paths.incidents()}`);
    await expect.poll(() => page.getByText('No unresolved incidents.').count()).toBe(1);
  });
});
