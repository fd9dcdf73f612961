import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../src/cli/backup.js';
import { restoreCommand } from '../src/cli/restore.js';
import pg from 'pg';
import { backends, startServer } from './helpers/backends.js';
import { runCli } from './helpers/cli.js';
import { waitFor } from './helpers/wait.js';

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

const stores = backends();
const embedded = stores.find((store) => store.name === 'embedded')!;
const postgres = stores.find((store) => store.name === 'postgres');

type Server = Awaited<ReturnType<typeof startServer>>;

/** Where a backup is taken: a running server on one of the stores. */
interface Source {
  readonly name: string;
  start(dir: string): Promise<Server>;
}

/** Where it is restored: a store at rest, and a server started on it after. */
interface Target {
  readonly name: string;
  /** A new, empty store to restore into (`dataDir` for an embedded one): the restore's arguments, how to serve it. */
  make(
    dataDir: string,
  ): Promise<{ args: string[]; serve: () => Promise<Server>; cleanup: () => Promise<void> }>;
}

const sources: Record<'embedded' | 'pglite' | 'postgres', Source> = {
  embedded: { name: 'the embedded store (PostgreSQL from npm)', start: () => startServer(embedded) },
  // A store made before the npm engine was the default: the way off it is a backup and a restore.
  pglite: {
    name: 'the embedded store on PGlite',
    start: async (dir) => {
      const dataDir = path.join(dir, 'pglite-source');
      return startServer(embedded, { dataDir, embeddedEngine: 'pglite' });
    },
  },
  postgres: { name: 'PostgreSQL', start: () => startServer(postgres!) },
};

const targets: Record<'embedded' | 'postgres', Target> = {
  embedded: {
    name: 'a new embedded data dir',
    make: (dataDir) =>
      Promise.resolve({
        args: ['--data-dir', dataDir],
        serve: () => startServer(embedded, { dataDir }),
        cleanup: () => rm(dataDir, { recursive: true, force: true }),
      }),
  },
  postgres: {
    name: 'a new PostgreSQL database',
    make: async () => {
      const { config, cleanup } = await postgres!.fresh();
      return {
        args: ['--database-url', config.databaseUrl!],
        serve: () => startServer(postgres!, { databaseUrl: config.databaseUrl }),
        cleanup,
      };
    },
  },
};

/**
 * Each way a store moves: off the embedded store to PostgreSQL (to run replicas), off PGlite to the default
 * engine, and off PostgreSQL to the embedded store. Without DATABASE_URL the embedded store restores into itself.
 */
const moves: { source: Source; target: Target }[] = postgres
  ? [
      { source: sources.embedded, target: targets.postgres },
      { source: sources.pglite, target: targets.embedded },
      { source: sources.postgres, target: targets.embedded },
    ]
  : [
      { source: sources.embedded, target: targets.embedded },
      { source: sources.pglite, target: targets.embedded },
    ];

describe.each(moves)(
  'backup of $source.name, restored into $target.name',
  { timeout: 240_000 },
  ({ source, target }) => {
    let original: Server;
    let restored: Server | undefined;
    let restoredStore: Awaited<ReturnType<Target['make']>> | undefined;
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
    const stored = async (server: Server) =>
      server.server.db.query<{ id: number; hash: string; body: string }>(
        'SELECT id, hash::text AS hash, body FROM events ORDER BY id',
      );

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-backup-test-'));
      // Run as root, the embedded PostgreSQL runs as another user, who must be able to reach the restored data dir.
      await chmod(dir, 0o755);
      original = await source.start(dir);
      for (let n = 0; n < 400; n += 50)
        await post(
          original.url,
          Array.from({ length: 50 }, (_, i) => event(n + i)),
        );
    });
    afterAll(async () => {
      await restored?.stop();
      await restoredStore?.cleanup();
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
      // Batches are going in when the backup starts, and go on after it ends (which the events it missed show).
      const batchesPast = (mark: number) =>
        waitFor(`two batches after event ${mark}`, () => next >= mark + 40 || next >= 1400);
      await batchesPast(400);
      expect(await backupCommand(['--out', file, '--url', original.url])).toBe(0);
      await batchesPast(next);
      ingesting = false;
      await ingest;

      restoredStore = await target.make(path.join(dir, 'restored'));
      // A table of the target database that is not Headwater's is left as it was.
      const url = restoredStore.args[0] === '--database-url' ? restoredStore.args[1]! : undefined;
      if (url)
        await sql(url, [
          'CREATE TABLE their_table (id serial, n int)',
          'INSERT INTO their_table (n) VALUES (7)',
        ]);
      expect(await restoreCommand(['--in', file, ...restoredStore.args])).toBe(0);
      if (url) expect(await sql(url, ['SELECT id, n FROM their_table'])).toEqual([{ id: 1, n: 7 }]);
      restored = await restoredStore.serve();

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
      const [first, second] = [
        sections(await readFile(file, 'utf8')),
        sections(await readFile(again, 'utf8')),
      ];
      // The header names Headwater's sequences, and no other table's (their_table's, where there is one).
      const header = JSON.parse((await readFile(again, 'utf8')).split('\n')[0]!) as {
        sequences: { name: string }[];
      };
      const names = header.sequences.map((sequence) => sequence.name);
      expect(names).toContain('audit_log_id_seq');
      expect(names).not.toContain('their_table_id_seq');
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
        // The journey's report, and so its SHA-256, is the same after backup and restore.
        `/api/v1/compliance/journey?nodeId=dataset:db:t3&from=${new Date(T0).toISOString()}&to=${mid}`,
        `/api/v1/compliance/journey?nodeId=datasetField:db:t3:a&from=${new Date(T0).toISOString()}&to=${mid}`,
      ]) {
        const [a, b] = [await get(original.url, route), await get(restored.url, route)];
        expect([route, b.status]).toEqual([route, 200]);
        expect([route, b.body]).toEqual([route, a.body]);
      }
    });

    it('refuses a backup cut short, a file that is none, a store that holds events and one a server runs on, restoring nothing', async () => {
      const file = path.join(dir, 'whole.ndjson');
      expect(await backupCommand(['--out', file, '--url', original.url])).toBe(0);
      const text = await readFile(file, 'utf8');
      const cut = path.join(dir, 'cut.ndjson');
      await writeFile(cut, text.slice(0, Math.floor(text.length / 2)).replace(/\n[^\n]*$/, '\n'));
      const refused = await target.make(path.join(dir, 'refused'));
      try {
        await expect(restoreCommand(['--in', cut, ...refused.args])).rejects.toThrow(/cut off/);
        const none = path.join(dir, 'none.ndjson');
        await writeFile(none, '{"hello":1}\n');
        await expect(restoreCommand(['--in', none, ...refused.args])).rejects.toThrow(
          /not a Headwater backup/,
        );
        // Nothing of the cut file went in: a whole one restores into the same store, which then refuses another.
        expect(await restoreCommand(['--in', file, ...refused.args])).toBe(0);
        await expect(restoreCommand(['--in', file, ...refused.args])).rejects.toThrow(/already holds events/);
        expect(await restoreCommand(['--in', file, ...refused.args, '--force'])).toBe(0);
      } finally {
        await refused.cleanup();
      }
      // The store a server runs on is refused even with --force, by a restore in another process, as it would
      // be run, and keeps every event.
      const before = (await stored(original)).length;
      const running = original.config.databaseUrl
        ? ['--database-url', original.config.databaseUrl]
        : ['--data-dir', original.config.dataDir];
      const refusal = await runCli(['restore', '--in', file, ...running, '--force']);
      expect(refusal.code).toBe(original.config.databaseUrl ? 2 : 1);
      expect(refusal.output).not.toContain('CliError');
      expect(refusal.output).toMatch(
        original.config.databaseUrl ? /server is writing to the target store/ : /is in use by process/,
      );
      expect((await stored(original)).length).toBe(before);
      expect((await get(original.url, '/api/v1/namespaces/db/datasets/t3')).status).toBe(200);
    });
  },
);

/** Runs `statements` on the database at `url`, and returns the last one's rows. */
async function sql(url: string, statements: string[]): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let rows: unknown[] = [];
    for (const statement of statements) rows = (await client.query(statement)).rows;
    return rows;
  } finally {
    await client.end();
  }
}
