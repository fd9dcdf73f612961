/**
 * The explorer's sign-in in Chromium against a server with auth on: a pasted API key, and OIDC (authorisation code
 * with PKCE) through a real OpenID provider's login page on loopback. The store holds two groups of namespaces
 * joined by lineage; the keys and the token's grants cover only the `open*` side.
 */
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveConfig } from '../../server/src/config/server-config.js';
import { createApiKey, keyParts } from '../../server/src/security/keys.js';
import { MARKER, OPEN_JOBS, OPEN_LAKE, securityEvents } from '../../server/test/security-scenario.js';
import { browserAvailable, screenshot } from './helpers/browser.js';
import { openExplorer, type ExplorerSession } from './helpers/explorer.js';
import {
  AUDIENCE,
  API_SCOPE,
  CLIENT_ID,
  openTestIssuer,
  TEST_USER,
  type TestIssuer,
} from './helpers/oidc-issuer.js';

const CREDENTIAL_KEY = 'headwater.credential';

describe.skipIf(!browserAvailable())('signing in to the explorer, in Chromium', () => {
  let session: ExplorerSession | undefined;
  let issuer: TestIssuer | undefined;
  let url: string;
  let adminKey: string;
  const key = async (name: string) =>
    (await createApiKey(session!.server.db, { name, role: 'reader', namespaces: ['open*'] })).token;

  beforeAll(async () => {
    issuer = await openTestIssuer();
    const { security } = resolveConfig(
      {
        'oidc-issuer': issuer.url,
        'oidc-audience': AUDIENCE,
        'oidc-grants': `groups=${TEST_USER.group}:reader:open*`,
        'oidc-client-id': CLIENT_ID,
        'oidc-scopes': `openid profile ${API_SCOPE}`,
      },
      {},
    );
    session = await openExplorer(async () => {}, { security });
    url = session.url;
    await issuer.start(`${url}/signin/callback`);
    adminKey = (await createApiKey(session.server.db, { name: 'admin', role: 'admin', namespaces: ['*'] }))
      .token;
    const ingest = await fetch(`${url}/api/v1/lineage/batch`, {
      method: 'POST',
      body: JSON.stringify(securityEvents()),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
    });
    expect(ingest.status).toBe(200);
  });

  afterAll(async () => {
    await session?.close();
    await issuer?.close();
  });

  /** A new tab (its own sessionStorage) recording the API requests it sends. */
  const newTab = async (): Promise<{ page: Page; requests: Request[] }> => {
    const page = await session!.context.newPage();
    const requests: Request[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${url}/api/`)) requests.push(request);
    });
    return { page, requests };
  };
  const namespaceList = (page: Page) => page.getByRole('list', { name: 'Namespaces' });
  const signInWithKey = async (page: Page, value: string) => {
    await page.goto(url);
    await expect.poll(() => page.locator('h1').innerText()).toBe('Sign in to Headwater');
    await page.getByLabel('API key').fill(value);
    await page.getByRole('button', { name: 'Sign in with key' }).click();
  };

  test('a pasted key signs in, signs every request, and sees only its namespaces', async () => {
    const { page, requests } = await newTab();
    const readerKey = await key('reader-open');
    await signInWithKey(page, readerKey);
    await expect
      .poll(() => page.locator('.header__session').innerText())
      .toContain('Signed in as reader-open');
    await expect.poll(() => namespaceList(page).innerText()).toContain(OPEN_LAKE);
    const shown = await namespaceList(page).getByRole('button').allInnerTexts();
    expect(shown.sort()).toEqual([OPEN_JOBS, OPEN_LAKE].sort());
    expect(await page.locator('main').innerText()).not.toMatch(MARKER);
    await screenshot(page, 'signin-key');
    // Every API call but the public sign-in configuration carries the key, and no URL does.
    const signed = requests.filter((request) => !request.url().endsWith('/api/v1/auth/config'));
    expect(signed.length).toBeGreaterThan(3);
    for (const request of signed)
      expect(await request.headerValue('authorization')).toBe(`Bearer ${readerKey}`);
    expect(requests.map((request) => request.url()).join(' ')).not.toContain(keyParts(readerKey)!.secret);
    await page.close();
  });

  test('a bad key is refused with the server message', async () => {
    const { page } = await newTab();
    await page.goto(url);
    await screenshot(page, 'signin');
    await signInWithKey(page, `hw_aaaaaaaaaaaa_${'a'.repeat(43)}`);
    await expect.poll(() => page.getByRole('alert').innerText()).toBe('The API key is unknown.');
    expect(await page.locator('h1').innerText()).toBe('Sign in to Headwater');
    expect(await page.evaluate((name) => sessionStorage.getItem(name), CREDENTIAL_KEY)).toBeNull();
    await page.close();
  });

  test('OIDC: the issuer login page, a session that reads the graph, a refresh, sign-out', async () => {
    const { page, requests } = await newTab();
    const start = `/lineage?node=dataset:${OPEN_LAKE}:reports.daily&depth=2&direction=both`;
    await page.goto(`${url}${start}`);
    await page.getByRole('button', { name: `Sign in with ${new URL(issuer!.url).host}` }).click();
    // The issuer's own page, on its own origin.
    await expect.poll(() => page.locator('h1').innerText()).toBe('Test issuer');
    expect(new URL(page.url()).origin).toBe(issuer!.url);
    await page.getByLabel('User name').fill(TEST_USER.login);
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toBe('Wrong user name or password.');
    await page.getByLabel('User name').fill(TEST_USER.login);
    await page.getByLabel('Password').fill(TEST_USER.password);
    await page.getByRole('button', { name: 'Log in' }).click();

    // Back where the sign-in started, the code gone from the address bar, the graph read with the token.
    await expect
      .poll(() => page.locator('.header__session').innerText())
      .toContain(`Signed in as ${TEST_USER.login}`);
    expect(new URL(page.url()).pathname + decodeURIComponent(new URL(page.url()).search)).toBe(start);
    const graph = page.getByTestId('lineage-graph');
    await expect
      .poll(() => graph.locator('.react-flow__node').allInnerTexts(), { timeout: 15_000 })
      .toEqual(
        expect.arrayContaining([
          expect.stringContaining('load_report'),
          expect.stringContaining('read_report'),
        ]),
      );
    expect(await graph.innerText()).not.toMatch(MARKER);
    // The hidden side's nodes are placeholders: the graph's shape is true, their names are not shown.
    expect(await graph.locator('.react-flow__node', { hasText: '(redacted)' }).count()).toBe(3);
    // A hidden job's runs are not the caller's to read: its caption says so, not that it never ran (it did).
    const hiddenJobs = graph.getByTestId('job-node').filter({ hasText: '(redacted)' });
    expect(await hiddenJobs.count()).toBeGreaterThan(0);
    expect(new Set(await hiddenJobs.locator('.graph-node__state').allTextContents())).toEqual(
      new Set(['runs hidden']),
    );
    expect(await graph.innerText()).not.toMatch(/never ran/i);
    expect(issuer!.grants.get('authorization_code')).toBe(1);
    const stored = async () =>
      JSON.parse((await page.evaluate((name) => sessionStorage.getItem(name), CREDENTIAL_KEY)) ?? 'null') as {
        kind: string;
        token: string;
        refreshToken?: string;
        expiresAtMs?: number;
      } | null;
    const first = (await stored())!;
    expect(first).toMatchObject({ kind: 'oidc', refreshToken: expect.any(String) });
    const lineageRequest = requests.find((request) => request.url().includes('/api/v1/lineage?'))!;
    expect(await lineageRequest.headerValue('authorization')).toBe(`Bearer ${first.token}`);
    expect(requests.some((request) => request.url().includes(first.token))).toBe(false);

    // An access token about to expire is refreshed before it is sent.
    await page.evaluate(
      ([name, value]) => sessionStorage.setItem(name!, value!),
      [CREDENTIAL_KEY, JSON.stringify({ ...first, expiresAtMs: Date.now() - 1000 })],
    );
    await page.reload();
    await expect
      .poll(() => graph.locator('.react-flow__node').count(), { timeout: 15_000 })
      .toBeGreaterThan(2);
    expect(issuer!.grants.get('refresh_token')).toBe(1);
    const second = (await stored())!;
    expect(second.token).not.toBe(first.token);
    expect(second.expiresAtMs).toBeGreaterThan(Date.now());
    await screenshot(page, 'signin-oidc-lineage');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Sign in to Headwater');
    expect(await page.getByRole('status').innerText()).toBe('You signed out.');
    expect(await stored()).toBeNull();
    await page.reload();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Sign in to Headwater');
    await page.close();
  });

  test('a key revoked mid-session sends the next request to the sign-in screen, saying why', async () => {
    const { page } = await newTab();
    await signInWithKey(page, await key('revoked-later'));
    await expect.poll(() => namespaceList(page).innerText()).toContain(OPEN_JOBS);
    // The home page's requests done: the refusal comes from the click below.
    await page.waitForLoadState('networkidle');
    const revoke = await fetch(`${url}/api/v1/keys/revoked-later`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(revoke.status).toBe(200);
    await namespaceList(page).getByRole('button', { name: OPEN_JOBS }).click();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Sign in to Headwater');
    expect(await page.getByRole('status').innerText()).toBe(
      'The server refused your API key: The API key is revoked. Sign in again.',
    );
    expect(await page.evaluate((name) => sessionStorage.getItem(name), CREDENTIAL_KEY)).toBeNull();
    await page.close();
  });
});
