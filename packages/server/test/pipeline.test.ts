import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestPipeline } from '../src/accept/pipeline.js';
import { normalizeEvent } from '../src/model/normalize.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { ModelState } from '../src/store/model-state.js';
import { backends, freshDb } from './helpers/backends.js';

function event(job: string, dataset: string) {
  return normalizeEvent(
    {
      eventType: 'COMPLETE',
      eventTime: '2024-08-01T00:00:00Z',
      producer: 'https://example.com/pipeline-test',
      run: { runId: randomUUID() },
      job: { namespace: 'pipeline', name: job },
      outputs: [{ namespace: 'db', name: dataset }],
    },
    'run',
  );
}

describe.each(backends())('the ingest pipeline on the $name store', (backend) => {
  let db: Db;
  let cleanup: () => Promise<void>;
  /** Writes whose SQL parameters contain this text fail, as a store error would. */
  let poison: string | undefined;

  beforeAll(async () => {
    ({ db, cleanup } = await freshDb(backend));
    await migrate(db);
    // The pipeline writes only as the writer (see Db.lead).
    await db.lead(undefined);
  });
  afterAll(async () => {
    await cleanup?.();
  });

  // The real store, with a fault injected into the statements that carry a marked event.
  const faulty = (): Db => ({
    ...db,
    epoch: db.epoch,
    query: (sql, params) =>
      poison !== undefined && sql.startsWith('WITH') && JSON.stringify(params ?? []).includes(poison)
        ? Promise.reject(new Error('injected store failure'))
        : db.query(sql, params),
  });

  it('fails only the request whose write fails; the others, queued with and behind it, are stored', async () => {
    const state = new ModelState();
    await state.load(db);
    const pipeline = new IngestPipeline(faulty(), state, { maxBatchEvents: 50 });
    poison = 'poisoned_dataset';
    const requests = Array.from({ length: 120 }, (_, i) =>
      i === 30 ? [event('bad', 'poisoned_dataset')] : [event(`job${i % 7}`, `table${i % 5}`)],
    );
    const results = await Promise.allSettled(requests.map((events) => pipeline.submit(events)));
    poison = undefined;
    expect(results.filter((result) => result.status === 'rejected').length).toBe(1);
    expect(results[30]).toMatchObject({ status: 'rejected', reason: { message: 'injected store failure' } });
    const [count] = await db.query<{ events: number; runs: number }>(
      'SELECT (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM runs) AS runs',
    );
    expect(count).toEqual({ events: 119, runs: 119 });
    // The mirror was rebuilt from the store: the failed event's job and dataset are not in it, and ingest
    // goes on where it left off.
    expect([...pipeline.mirror.jobs.values()].map((job) => job.name)).not.toContain('bad');
    expect(await pipeline.submit([event('bad', 'poisoned_dataset')])).toEqual(['stored']);
    const [after] = await db.query<{ events: number }>('SELECT count(*)::int AS events FROM events');
    expect(after!.events).toBe(120);
    await pipeline.close();
  });

  const loaded = async (state: ModelState) => {
    await state.load(db);
    return state;
  };

  it('names a stored version its mirror has forgotten by its stored id, and never makes it again', async () => {
    // A dataset whose schema changes with every run: a version per run, more than the mirror keeps.
    const schemaEvent = (field: string, runId = randomUUID()) =>
      normalizeEvent(
        {
          eventType: 'COMPLETE',
          eventTime: '2024-08-02T00:00:00Z',
          producer: 'https://example.com/pipeline-test',
          run: { runId },
          job: { namespace: 'pipeline', name: 'evolving' },
          outputs: [
            {
              namespace: 'db',
              name: 'evolving_table',
              facets: {
                schema: {
                  _producer: 'https://example.com/pipeline-test',
                  _schemaURL: 'https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json',
                  fields: [{ name: field, type: 'int' }],
                },
              },
            },
          ],
        },
        'run',
      );
    const first = new IngestPipeline(db, await loaded(new ModelState()), {});
    for (const field of ['a', 'b', 'c', 'd', 'e'])
      expect(await first.submit([schemaEvent(field)])).toEqual(['stored']);
    await first.close();
    const versions = async () =>
      db.query<{ id: number; field: string }>(
        `SELECT v.id, v.fields->0->>'name' AS field FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id
         WHERE d.name = 'evolving_table' ORDER BY v.id`,
      );
    const before = await versions();
    expect(before.map((row) => row.field)).toEqual(['a', 'b', 'c', 'd', 'e']);

    // A writer that keeps two version ids of each kind: it has forgotten a, b and c.
    const state = await loaded(new ModelState(2));
    expect(state.datasetVersions.complete).toBe(false);
    const second = new IngestPipeline(db, state, {});
    const runId = randomUUID();
    // Schema "b" again, with a new field "f" in the same batch: one known to the store, one new.
    expect(await second.submit([schemaEvent('b', runId), schemaEvent('f')])).toEqual(['stored', 'stored']);
    await second.close();
    const after = await versions();
    expect(after.map((row) => row.field)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    const [io] = await db.query<{ version: number }>(
      `SELECT io.dataset_version_id AS version FROM run_io io WHERE io.run_uuid = $1 AND io.direction = 1`,
      [runId],
    );
    expect(io!.version).toBe(before[1]!.id);
  });
  it('gives a namespace declared before any batch, by a writer whose mirror is behind the store, an id above every stored one', async () => {
    const before = new IngestPipeline(db, await loaded(new ModelState()), {});
    expect(await before.submit([event('declaring', 'declared_table')])).toEqual(['stored']);
    await before.close();
    // A server that has just become the writer forgets its mirror (another writer may have committed since).
    const pipeline = new IngestPipeline(db, new ModelState(), {});
    pipeline.forgetMirror();
    const seen: { committed: boolean; mirrored: boolean; namespaces: string[] }[] = [];
    pipeline.onEdit(async (seq, edit) => {
      const [row] = await db.query<{ id: number }>('SELECT id FROM namespaces WHERE name = $1', ['declared']);
      seen.push({
        committed: seq !== undefined && row !== undefined,
        mirrored: pipeline.mirror.namespaces.has('declared'),
        namespaces: edit.namespaces.map((namespace) => namespace.name),
      });
    });
    const ids = (await db.query<{ id: number }>('SELECT id FROM namespaces')).map((row) => row.id);
    expect(ids.length).toBeGreaterThan(0);
    const record = await pipeline.putNamespace({ name: 'declared', ownerName: 'me', description: undefined });
    // Above every id the store holds: ids are never handed out twice, not even those of a batch that failed.
    expect(record.id).toBeGreaterThan(Math.max(...ids));
    expect(pipeline.mirror.next.namespace).toBe(record.id + 1);
    // The listeners (the read side) hear of the edit once it is committed and the mirror holds it.
    expect(seen).toEqual([{ committed: true, mirrored: true, namespaces: ['declared'] }]);
    await pipeline.close();
  });

  it('writes an edit and its commit-feed entry in one transaction: when the entry fails, nothing of it stays', async () => {
    const failingFeed: Db = {
      ...db,
      epoch: db.epoch,
      transaction: (fn) =>
        db.transaction((tx) =>
          fn({
            query: (sql, params) =>
              sql.includes('commit_feed')
                ? Promise.reject(new Error('injected store failure'))
                : tx.query(sql, params),
          }),
        ),
    };
    const state = new ModelState();
    await state.load(db);
    const pipeline = new IngestPipeline(failingFeed, state, {});
    const told: (number | undefined)[] = [];
    pipeline.onEdit((seq) => {
      told.push(seq);
    });
    const next = state.next.namespace;
    await expect(
      pipeline.putNamespace({ name: 'never', ownerName: 'me', description: undefined }),
    ).rejects.toThrow('injected store failure');
    expect(await db.query('SELECT id FROM namespaces WHERE name = $1', ['never'])).toEqual([]);
    expect(pipeline.mirror.namespaces.has('never')).toBe(false);
    expect(pipeline.mirror.next.namespace).toBe(next);
    expect(told).toEqual([undefined]);
    await pipeline.close();
  });
});
