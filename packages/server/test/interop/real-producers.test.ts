/**
 * The interop suite: real producers, installed from PyPI and Maven Central by ci/setup.sh, against a real
 * Headwater server in a child process. Skips locally with a message when they are not installed; fails in CI.
 * HEADWATER_RECORD_FIXTURES=1 also writes what they sent to test/fixtures/producers (see recorded-producers).
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { overSocket } from '../helpers/api.js';
import { spawnServer, type ChildServer } from '../helpers/child-server.js';
import { producerChecks } from './checks.js';
import { recordFixtures } from './fixtures.js';
import { FIXTURES, runProducers, type ScenarioNames } from './scenario.js';
import { interopToolchain } from './toolchain.js';

const tool = interopToolchain();

describe.skipIf(!tool)('real producers against a Headwater server in a child process', () => {
  let server: ChildServer | undefined;
  let names: ScenarioNames;
  let dataDir: string;
  let serverLog = '';

  beforeAll(async () => {
    if (!tool) return;
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'headwater-interop-store-'));
    await cp(inject('embeddedTemplateDir'), dataDir, { recursive: true });
    // --stale-run-after 1s: the RDD jobs' lone STARTs are stale by the time the checks run (see checks.ts).
    server = await spawnServer(['--data-dir', dataDir, '--log-level', 'warn', '--stale-run-after', '1s']);
    const collect = (chunk: Buffer) => (serverLog += chunk.toString());
    server.process.stdout?.on('data', collect);
    server.process.stderr?.on('data', collect);

    const work = await mkdtemp(path.join(os.tmpdir(), 'headwater-interop-'));
    names = { work, database: `headwater_interop_${process.pid}_${Math.random().toString(36).slice(2, 8)}` };
    const admin = new pg.Client({ connectionString: tool.adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${names.database}`);
    await admin.end();

    const times = await runProducers(tool, server.url, names);
    console.info(
      `interop producers: ${Object.entries(times)
        .map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)} s`)
        .join(', ')}`,
    );
    if (process.env.HEADWATER_RECORD_FIXTURES === '1') {
      const { stdout } = await promisify(execFile)(tool.python, [
        '-c',
        'import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in ["openlineage-python", "openlineage-dbt", "dbt-core", "dbt-postgres", "pyspark"]}))',
      ]);
      await recordFixtures(server.url, {
        names,
        producers: { ...JSON.parse(stdout), 'openlineage-spark_2.12': '1.53.0' },
      });
    }
  }, 900_000);

  afterAll(async () => {
    if (server) {
      server.process.kill('SIGTERM');
      await server.exited;
    }
    if (tool && names) {
      const admin = new pg.Client({ connectionString: tool.adminUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${names.database} WITH (FORCE)`);
      await admin.end();
      await rm(names.work, { recursive: true, force: true });
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('every producer delivered, and the server rejected none of their events', async () => {
    expect(serverLog).not.toContain('event rejected');
    const response = await fetch(`${server!.url}/api/v1/events/lineage?limit=100000`);
    const { events } = (await response.json()) as { events: { job: { namespace: string } }[] };
    const namespaces = new Set(events.map((e) => e.job.namespace));
    expect([...namespaces].sort()).toEqual(FIXTURES.flatMap((f) => f.namespaces).sort());
  });

  producerChecks(() => ({ request: overSocket(server!.url), names }));
});
