/**
 * What the incident tests share: a server started with an alerts configuration, events posted to it, a failed run
 * to post, and the cleanups that stop and remove them after each test.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import type { ServerConfig } from '../../src/config/server-config.js';
import { runEvents } from '../analysis-scenarios.js';
import { startServer, type Backend, type TestServer } from '../helpers/backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs `cleanup` after the test, in reverse order of registration. */
export function afterTest(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

/** Writes `yaml` to an alerts configuration file removed after the test, and returns its path. */
export async function alertsFile(yaml: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-alerts-'));
  afterTest(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'alerts.yaml');
  await writeFile(file, yaml);
  return file;
}

/** Starts a server on a fresh store of `backend` with the alerts configuration `yaml` (none when undefined). */
export async function serveWithAlerts(
  backend: Backend,
  yaml: string | undefined,
  overrides: Partial<ServerConfig> = {},
): Promise<TestServer & { url: string }> {
  const server = await startServer(backend, {
    ...(yaml === undefined ? {} : { alertsConfig: await alertsFile(yaml) }),
    ...overrides,
  });
  afterTest(() => server.stop());
  return server;
}

/** Posts events as one batch, which must be accepted whole. */
export async function postEvents(
  server: Pick<TestServer, 'request'>,
  events: readonly unknown[],
): Promise<void> {
  const response = await server.request('/api/v1/lineage/batch', {
    method: 'POST',
    body: JSON.stringify(events),
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** The events of one failed run of `etl/<job>` in 2025 (long past any grace). */
export const failedRun = (job = 'load'): unknown[] =>
  runEvents({
    namespace: 'etl',
    job,
    runId: randomUUID(),
    start: '2025-01-01T00:00:00Z',
    end: '2025-01-01T00:01:00Z',
    ends: 'FAIL',
  });
