import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../src/cli/backup.js';
import { restoreCommand } from '../src/cli/restore.js';
import { backends, startServer } from './helpers/backends.js';

const T0 = Date.UTC(2025, 2, 1);
const uuid = (n: number) => `0195f000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const field = (name: string) => ({ name, type: 'string' });

/** Event `n` of a chain of 12 jobs: job k reads table k and writes table k+1, with a schema and column lineage. */
function event(n: number): Record<string, unknown> {
  const k = n % 12;
  const run = Math.floor(n / 2);
  const output = `t${k + 1}`;
  return {
    eventType: n % 2 === 0 ? 'START' : 'COMPLETE',
    eventTime: new Date(T0 + n * 60_000).toISOString(),
    producer: 'https://example.com/backup-test',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: uuid(run) },
    job: { namespace: 'backup', name: `job${k}` },
    inputs: [
      {
        namespace: 'db',
        name: `t${k}`,
        facets: { schema: { _producer: 'x', _schemaURL: 'x', fields: [field('a')] } },
      },
    ],
    outputs: [
      {
        namespace: 'db',
        name: output,
        facets: {
          schema: { _producer: 'x', _schemaURL: 'x', fields: [field('a'), field(`b${n % 3}`)] },
          columnLineage: {
            _producer: 'x',
            _schemaURL: 'x',
            fields: { a: { inputFields: [{ namespace: 'db', name: `t${k}`, field: 'a' }] } },
          },
        },
      },
    ],
  };
}

const [embedded] = backends();

describe('backup and restore of the embedded store', { timeout: 240_000 }, () => {
  let original: Awaited<ReturnType<typeof startServer>>;
  let restored: Awaited<ReturnType<typeof startServer>> | undefined;
  let dir: string;
  const post = async (url: string, events: unknown[]) => {
    const response = await fetch(`${url}/api/v1/lineage/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(events),
    });
    expect(response.status).toBe(200);
  };
  const get = async (url: string, route: string) => {
    const response = await fetch(`${url}${route}`);
    return { status: response.status, body: await response.json() };
  };
  const stored = async (server: Awaited<ReturnType<typeof startServer>>) =>
    server.server.db.query<{ id: number; hash: string; body: string }>(
      'SELECT id, hash::text AS hash, body FROM events ORDER BY id',
    );

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-backup-test-'));
    // Run as root, the embedded PostgreSQL runs as another user, who must be able to reach the restored data dir.
    await chmod(dir, 0o755);
    original = await startServer(embedded!);
    for (let n = 0; n < 400; n += 50)
      await post(
        original.url,
        Array.from({ length: 50 }, (_, i) => event(n + i)),
      );
  });
  afterAll(async () => {
    await restored?.stop();
    await original?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('backs up while ingest goes on; the restored store is the original at one commit, and fed the rest equals it', async () => {
    const file = path.join(dir, 'backup.ndjson');
    // Ingest goes on while the backup is read.
    let next = 400;
    let ingesting = true;
    const ingest = (async () => {
      while (ingesting && next < 1400) {
        await post(
          original.url,
          Array.from({ length: 20 }, (_, i) => event(next + i)),
        );
        next += 20;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await backupCommand(['--out', file, '--url', original.url])).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    ingesting = false;
    await ingest;

    const target = path.join(dir, 'restored');
    expect(await restoreCommand(['--in', file, '--data-dir', target])).toBe(0);
    restored = await startServer(embedded!, { dataDir: target });

    // The restored store holds the original's events up to one commit: a prefix of them, nothing torn.
    const [all, kept] = [await stored(original), await stored(restored)];
    expect(kept.length).toBeGreaterThanOrEqual(400);
    expect(kept).toEqual(all.slice(0, kept.length));
    const [counts] = await restored.server.db.query<{ counted: number; events: number }>(
      'SELECT (SELECT coalesce(sum(count), 0)::int FROM event_counts) AS counted, (SELECT count(*)::int FROM events) AS events',
    );
    expect(counts!.counted).toBe(counts!.events);

    // Every table went in whole: a backup of the restored store holds exactly the rows of the first.
    const again = path.join(dir, 'again.ndjson');
    expect(await backupCommand(['--out', again, '--url', restored.url])).toBe(0);
    const sections = (text: string) => {
      const lines = text.trim().split('\n').slice(1);
      const tables = new Map<string, string[]>();
      let table = '';
      for (const line of lines) {
        if (line.startsWith('["table"')) tables.set((table = JSON.parse(line)[1] as string), []);
        else if (line.startsWith('{')) tables.get(table)!.push(line);
      }
      for (const rows of tables.values()) rows.sort();
      return tables;
    };
    const [first, second] = [sections(await readFile(file, 'utf8')), sections(await readFile(again, 'utf8'))];
    // The second backup's own audit entry is the one row the restored store has more of.
    const audit = second.get('audit_log')!;
    expect(audit.filter((row) => !first.get('audit_log')!.includes(row)).length).toBeLessThanOrEqual(1);
    second.set('audit_log', first.get('audit_log')!);
    // The restored server took the writer lock with the next epoch: the restored one was carried over.
    const epoch = (table: Map<string, string[]>) =>
      (JSON.parse(table.get('writer_lease')![0]!) as { epoch: number }).epoch;
    expect(epoch(second)).toBe(epoch(first) + 1);
    second.set('writer_lease', first.get('writer_lease')!);
    expect(second).toEqual(first);

    // Fed the events it missed, in the order the original stored them, it answers as the original does, and
    // hands out fresh ids.
    const missed = all.slice(kept.length);
    expect(missed.length).toBeGreaterThan(0);
    for (let i = 0; i < missed.length; i += 50)
      await post(
        restored.url,
        missed.slice(i, i + 50).map((row) => JSON.parse(row.body) as unknown),
      );
    expect((await stored(restored)).map((row) => row.hash)).toEqual(all.map((row) => row.hash));
    const mid = new Date(T0 + 700 * 60_000).toISOString();
    for (const route of [
      '/api/v1/lineage?nodeId=dataset:db:t6&depth=20',
      `/api/v1/lineage?nodeId=dataset:db:t6&depth=20&asOf=${mid}`,
      '/api/v1/namespaces/db/datasets/t3',
      '/api/v1/namespaces/backup/jobs/job4/runs?limit=100',
      '/api/v1/column-lineage?nodeId=datasetField:db:t9:a&depth=20',
      '/api/v1/search?q=job',
    ]) {
      const [a, b] = [await get(original.url, route), await get(restored.url, route)];
      expect([route, b.status]).toEqual([route, 200]);
      expect([route, b.body]).toEqual([route, a.body]);
    }
  });

  it('refuses a backup cut short, a file that is none, and a store that holds events, restoring nothing', async () => {
    const file = path.join(dir, 'whole.ndjson');
    expect(await backupCommand(['--out', file, '--url', original.url])).toBe(0);
    const text = await readFile(file, 'utf8');
    const cut = path.join(dir, 'cut.ndjson');
    await writeFile(cut, text.slice(0, Math.floor(text.length / 2)).replace(/\n[^\n]*$/, '\n'));
    const target = path.join(dir, 'refused');
    await expect(restoreCommand(['--in', cut, '--data-dir', target])).rejects.toThrow(/cut off/);
    const none = path.join(dir, 'none.ndjson');
    await writeFile(none, '{"hello":1}\n');
    await expect(restoreCommand(['--in', none, '--data-dir', target])).rejects.toThrow(
      /not a Headwater backup/,
    );
    // Nothing of the cut file went in: a whole one restores into the same dir, which then refuses another.
    expect(await restoreCommand(['--in', file, '--data-dir', target])).toBe(0);
    await expect(restoreCommand(['--in', file, '--data-dir', target])).rejects.toThrow(
      /already holds events/,
    );
    expect(await restoreCommand(['--in', file, '--data-dir', target, '--force'])).toBe(0);
  });
});
