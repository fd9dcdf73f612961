import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LineageGraph } from '../src/read-model/lineage-graph.js';
import { loadCutoffs, readCutoffs } from '../src/store/job-cutoffs.js';
import { backends, startApp } from './helpers/backends.js';
import { random } from './helpers/random.js';

/**
 * The reference: every completion of every job, compared at once (what start-up read before it read a few
 * index entries per job). A completion is a run with a COMPLETE event, starting at its first eventTime, or a
 * JobEvent; the cutoff is the latest start, ties going to the smallest key.
 */
const REFERENCE_SQL = `
  SELECT DISTINCT ON (job_id) job_id, key, trunc(extract(epoch FROM first) * 1000)::float8 AS first FROM (
    SELECT s.job_id, s.run_uuid::text AS key, r.created_at AS first
    FROM job_sightings s JOIN runs r ON r.uuid = s.run_uuid
    WHERE s.kind = 0 AND s.event_type = 'COMPLETE'
    UNION ALL
    SELECT job_id, 'job@' || event_hash, event_time FROM job_sightings WHERE kind = 0 AND run_uuid IS NULL
  ) c ORDER BY job_id, first DESC, key`;

/**
 * Runs of 8 jobs that overlap, complete out of order, fail, never finish, learn of an earlier START after they
 * completed, and share start times; JobEvents among them.
 */
function events(seed: number): Record<string, unknown>[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const base = Date.UTC(2025, 0, 1);
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < 240; i++) {
    const job = `job${Math.floor(next() * 8)}`;
    // Coarse times: equal starts are common, so ties are decided by key.
    const at = (offset: number) => new Date(base + (Math.floor(next() * 40) + offset) * 60_000).toISOString();
    if (next() < 0.08) {
      out.push({
        eventTime: at(0),
        producer: 'https://example.com/cutoffs-test',
        schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent',
        job: { namespace: 'cutoffs', name: job },
        inputs: [{ namespace: 'db', name: `t${Math.floor(next() * 5)}` }],
      });
      continue;
    }
    const runId = `0190e3c0-0000-7000-800${seed}-${String(i).padStart(12, '0')}`;
    const run = (eventType: string, eventTime: string) => ({
      eventType,
      eventTime,
      producer: 'https://example.com/cutoffs-test',
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
      run: { runId },
      job: { namespace: 'cutoffs', name: job },
      outputs: [{ namespace: 'db', name: `t${Math.floor(next() * 5)}` }],
    });
    const start = Math.floor(next() * 40);
    const iso = (minute: number) => new Date(base + minute * 60_000).toISOString();
    const end = pick(['COMPLETE', 'COMPLETE', 'FAIL', 'ABORT', undefined]);
    out.push(run('START', iso(start)));
    if (end) out.push(run(end, iso(start + 1 + Math.floor(next() * 20))));
    // Now and then, a START learnt late, earlier than the one seen: the run's start moves back.
    if (end === 'COMPLETE' && next() < 0.2) out.push(run('START', iso(start - 1 - Math.floor(next() * 10))));
  }
  // Arrival order is not event order.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

for (const backend of backends()) {
  describe(`present cutoffs at start (${backend.name})`, () => {
    let server: Awaited<ReturnType<typeof startApp>>;
    beforeAll(async () => {
      server = await startApp(backend);
    });
    afterAll(() => server?.stop());

    const post = async (events: Record<string, unknown>[]) => {
      const response = await server.request('/api/v1/lineage/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(response.status).toBeLessThan(300);
    };
    const byJob = (rows: readonly { job_id?: unknown; key?: unknown; first?: unknown }[]) =>
      rows
        .map((row) => ({ job: Number(row.job_id), key: row.key, first: Number(row.first) }))
        .sort((a, b) => a.job - b.job);

    it('kept by the writer, read at start, and worked out from the history equal every completion compared at once', async () => {
      const db = server.server.db;
      for (const seed of [1, 2, 3]) {
        // Sent one batch at a time, so that a late START arrives after its run's COMPLETE was stored.
        const all = events(seed);
        for (let i = 0; i < all.length; i += 40) await post(all.slice(i, i + 40));
      }
      const reference = await db.query(REFERENCE_SQL);
      expect(reference.length).toBeGreaterThan(4);
      // A late START moved the start of a job's cutoff run back: the writer marked that row stale.
      expect(server.server.state.staleCutoffs.size).toBeGreaterThan(0);
      // What start-up reads: the table, and the stale rows worked out from the history.
      expect(byJob(await loadCutoffs(db))).toEqual(byJob(reference));
      // From the history, for some jobs (what a refresh and the writer's fix read).
      const some = reference.slice(0, 3).map((row) => row.job_id as number);
      expect(byJob(await readCutoffs(db, some))).toEqual(byJob(reference.slice(0, 3)));
      // The next batch (of another job) makes the stale rows right.
      await post([
        {
          eventType: 'COMPLETE',
          eventTime: new Date(Date.UTC(2025, 0, 2)).toISOString(),
          producer: 'https://example.com/cutoffs-test',
          schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
          run: { runId: '0190e3c0-0000-7000-8009-000000000001' },
          job: { namespace: 'cutoffs', name: 'other' },
        },
      ]);
      expect(server.server.state.staleCutoffs.size).toBe(0);
      const table = await db.query(
        `SELECT job_id, key, trunc(extract(epoch FROM first) * 1000)::float8 AS first FROM job_cutoffs
         WHERE key IS NOT NULL AND NOT stale`,
      );
      expect(byJob(table)).toEqual(byJob(await db.query(REFERENCE_SQL)));
    });

    it("lists in a batch's read delta only the stored runs whose start moved back", async () => {
      const db = server.server.db;
      const runId = '0190e3c0-0000-7000-8009-0000000000f1';
      const event = (eventType: string, minute: number) => ({
        eventType,
        eventTime: new Date(Date.UTC(2025, 0, 3, 0, minute)).toISOString(),
        producer: 'https://example.com/cutoffs-test',
        schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
        run: { runId },
        job: { namespace: 'cutoffs', name: 'fresh' },
      });
      const lastDeltaRuns = async () => {
        const [row] = await db.query<{ runs: unknown }>(
          "SELECT entry -> 'delta' -> 'runs' AS runs FROM commit_feed ORDER BY seq DESC LIMIT 1",
        );
        return typeof row?.runs === 'string' ? (JSON.parse(row.runs) as unknown) : row?.runs;
      };
      // A new run, and a later event of it: its start does not move, so no run is listed.
      await post([event('START', 10)]);
      expect(await lastDeltaRuns()).toEqual([]);
      await post([event('COMPLETE', 20)]);
      expect(await lastDeltaRuns()).toEqual([]);
      // A START earlier than the one seen: the run is listed, with its new start.
      await post([event('START', 5)]);
      const [{ id } = { id: 0 }] = await db.query<{ id: number }>("SELECT id FROM jobs WHERE name = 'fresh'");
      expect(await lastDeltaRuns()).toEqual([[id, runId, Date.UTC(2025, 0, 3, 0, 5)]]);
      // It set the job's cutoff, so the row went stale, and the next batch works it out again.
      expect(server.server.state.staleCutoffs.has(id)).toBe(true);
      await post([{ ...event('COMPLETE', 30), run: { runId: '0190e3c0-0000-7000-8009-0000000000f2' } }]);
      expect(byJob(await readCutoffs(db, [id]))).toEqual([
        { job: id, key: '0190e3c0-0000-7000-8009-0000000000f2', first: Date.UTC(2025, 0, 3, 0, 30) },
      ]);
    });

    it('give a graph loaded at start the edges the running server holds', async () => {
      const db = server.server.db;
      const loaded = new LineageGraph();
      await loaded.load(db);
      const jobs = await db.query<{ id: number }>('SELECT id FROM jobs ORDER BY id');
      const edges = (graph: LineageGraph) =>
        jobs.map(({ id }) => [id, graph.datasetsOf(id, 0).sort(), graph.datasetsOf(id, 1).sort()]);
      expect(edges(loaded)).toEqual(edges(server.server.graph));
      // Some edges were retired by a cutoff, so the comparison says something.
      const [{ named } = { named: 0 }] = await db.query<{ named: number }>(
        'SELECT count(*)::int AS named FROM lineage_edges',
      );
      const current = edges(loaded).reduce(
        (sum, [, reads, writes]) => sum + (reads as number[]).length + (writes as number[]).length,
        0,
      );
      expect(current).toBeLessThan(named);
    });
  });
}
