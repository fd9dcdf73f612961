import type { BrowserContext, Page } from 'playwright-core';
import { backends, startServer } from '../../../server/test/helpers/backends.js';
import type { ServerConfig } from '../../../server/src/config/server-config.js';
import type { HeadwaterServer } from '../../../server/src/servers/server.js';
import { launchBrowser } from './browser.js';
// Brings the server suite's `inject('embeddedTemplateDir')` typing, which startServer uses.
import type {} from '../../../server/test/global-setup.js';

/** A running explorer to test: a server on a fresh embedded store serving the built app, and a Chromium page. */
export interface ExplorerSession {
  readonly url: string;
  /** The server in this process (its store, for a test that creates keys). */
  readonly server: HeadwaterServer;
  readonly context: BrowserContext;
  readonly page: Page;
  /** Closes the browser, then stops the server and removes its store. */
  close(): Promise<void>;
}

/**
 * Starts a server (with `overrides` of its configuration) serving the app, which the suite's global setup has
 * built, and a browser; `seed` loads the server before the browser starts.
 */
export async function openExplorer(
  seed: (url: string) => Promise<void>,
  overrides: Partial<ServerConfig> = {},
): Promise<ExplorerSession> {
  const server = await startServer(backends()[0]!, overrides);
  try {
    await seed(server.url);
  } catch (error) {
    await server.stop();
    throw error;
  }
  const browser = await launchBrowser();
  return {
    url: server.url,
    server: server.server,
    context: browser.context,
    page: await browser.context.newPage(),
    close: async () => {
      await browser.close();
      await server.stop();
    },
  };
}

/** Posts `events` to the server's batch endpoint, failing the test with the server's answer unless it takes them. */
export async function ingestEvents(serverUrl: string, events: readonly unknown[]): Promise<void> {
  const response = await fetch(`${serverUrl}/api/v1/lineage/batch`, {
    method: 'POST',
    body: JSON.stringify(events),
    headers: { 'content-type': 'application/json' },
  });
  if (response.status !== 200)
    throw new Error(`POST /api/v1/lineage/batch answered ${response.status}: ${await response.text()}`);
}
