/**
 * The events the real producers sent (recorded by real-producers.test.ts into test/fixtures/producers), replayed
 * into a server on each store: the same checks as the live suite, with no producer installed.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { backends, startApp } from '../helpers/backends.js';
import { producerChecks } from './checks.js';
import { readFixtures, type RecordedScenario } from './fixtures.js';

describe.each(backends())('recorded producer events replayed on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let scenario: RecordedScenario;

  beforeAll(async () => {
    const fixtures = await readFixtures();
    scenario = fixtures.scenario;
    // Runs with no event for a second are stale: the RDD jobs' lone STARTs are (see checks.ts).
    ctx = await startApp(backend, { staleRunAfterMs: 1_000 });
    for (const body of fixtures.bodies) {
      const response = await ctx.request(`/api/v1/lineage/batch`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      const reply = (await response.json()) as { summary: { failed: number; received: number } };
      expect({ status: response.status, failed: reply.summary.failed }).toEqual({ status: 200, failed: 0 });
    }
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  producerChecks(() => ({ request: ctx.request, names: scenario.names }));
});
