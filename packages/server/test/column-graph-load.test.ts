import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ColumnGraph, type FieldRef } from '../src/read-model/column-graph.js';
import { backends, startApp } from './helpers/backends.js';
import { random } from './helpers/random.js';

const facet = { _producer: 'https://example.com/graph-load', _schemaURL: 'https://example.com/facet.json' };
const KINDS = [
  { type: 'DIRECT', subtype: 'IDENTITY' },
  { type: 'DIRECT', subtype: 'TRANSFORMATION', description: 'upper()' },
  { type: 'INDIRECT', subtype: 'FILTER' },
  { type: 'DIRECT', subtype: 'AGGREGATION', masking: true },
];
const DATASETS = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5'];
const FIELDS = ['id', 'amount', 'name', 'ts'];
const BASE = Date.UTC(2025, 0, 1);

/**
 * Runs whose column lineage names the same edges again with other kinds and at earlier times (events out of
 * order), with whole-dataset inputs among them.
 */
function events(seed: number): Record<string, unknown>[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const ref = () => ({ namespace: 'wh', name: pick(DATASETS), field: pick(FIELDS) });
  const transformations = () => [pick(KINDS), ...(next() < 0.3 ? [pick(KINDS)] : [])];
  return Array.from({ length: 120 }, () => {
    const output = pick(DATASETS);
    const fields = Object.fromEntries(
      FIELDS.filter(() => next() < 0.6).map((field) => [
        field,
        {
          inputFields: Array.from({ length: 1 + Math.floor(next() * 3) }, () => ({
            ...ref(),
            transformations: transformations(),
          })),
        },
      ]),
    );
    const dataset = next() < 0.3 ? [{ ...ref(), transformations: transformations() }] : [];
    return {
      eventType: 'COMPLETE',
      eventTime: new Date(BASE + Math.floor(next() * 1000) * 60_000).toISOString(),
      producer: facet._producer,
      run: { runId: randomUUID() },
      job: { namespace: 'cl', name: `job_${output}` },
      inputs: [],
      outputs: [{ namespace: 'wh', name: output, facets: { columnLineage: { ...facet, fields, dataset } } }],
    };
  });
}

/** Everything a column graph answers about every column, at several times, in a comparable order. */
function answers(graph: ColumnGraph, datasetIds: number[]): unknown {
  const sortBy = <T>(items: T[]) => items.map((item) => JSON.stringify(item)).sort();
  const times = [undefined, BASE + 200 * 60_000, BASE + 600 * 60_000];
  return times.map((at) =>
    datasetIds.map((datasetId) => {
      const columns: FieldRef[] = FIELDS.map((field) => ({ datasetId, field }));
      return {
        fields: sortBy(graph.fieldsOf(datasetId, at)),
        whole: sortBy(
          graph
            .datasetInputsOf(datasetId, at)
            .map((input) => ({ ...input, transformations: sortBy(input.transformations) })),
        ),
        columns: columns.map((ref) => ({
          inputs: sortBy(
            graph
              .inputsOf(ref, at)
              .map((input) => ({ ...input, transformations: sortBy(input.transformations) })),
          ),
          outputs: sortBy(graph.outputsOf(ref, at)),
          influences: graph.datasetsInfluencedBy(ref, at).sort(),
        })),
      };
    }),
  );
}

describe.each(backends())('the column graph loaded from the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    ctx = await startApp(backend);
    for (const seed of [1, 2, 3]) {
      const response = await ctx.request('/api/v1/lineage/batch', {
        method: 'POST',
        body: JSON.stringify(events(seed)),
        headers: { 'content-type': 'application/json' },
      });
      expect(await response.json()).toMatchObject({ status: 'success' });
    }
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('answers what the graph built from the commits answers', async () => {
    const ids = (await ctx.server.db.query<{ id: number }>('SELECT id FROM datasets ORDER BY id')).map(
      (row) => row.id,
    );
    expect(ids.length).toBe(DATASETS.length);
    const loaded = new ColumnGraph();
    await loaded.load(ctx.server.db);
    const live = answers(ctx.server.columnGraph, ids);
    expect(answers(loaded, ids)).toEqual(live);
    // The answers are not empty, and change with time: the comparison means something.
    const text = JSON.stringify(live);
    expect(text).toContain('upper()');
    expect(text).toMatch(/masking[\\"]*:true/);
    const [now, early] = live as unknown[];
    expect(early).not.toEqual(now);
  });

  it('stops a load that an adopted graph overtakes, and answers what the adopted graph holds', async () => {
    const db = ctx.server.db;
    const ids = (await db.query<{ id: number }>('SELECT id FROM datasets ORDER BY id')).map((row) => row.id);
    const adopted = new ColumnGraph();
    await adopted.load(db);
    const expected = answers(adopted, ids);
    // The first load's read waits at its first query until the other graph is adopted (a replica that
    // reloads while its first load, after start, still reads).
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const stalled: typeof db = Object.create(db, {
      query: {
        value: async (...args: Parameters<typeof db.query>) => {
          reads++;
          await gate;
          return db.query(...args);
        },
      },
      copyRows: {
        value:
          db.copyRows &&
          ((...args: Parameters<NonNullable<typeof db.copyRows>>) => (reads++, db.copyRows!(...args))),
      },
    });
    const graph = new ColumnGraph({ loaded: false });
    const first = graph.load(stalled);
    graph.adopt(adopted);
    release();
    await first;
    expect(graph.complete).toBe(true);
    expect(answers(graph, ids)).toEqual(expected);
    // The overtaken load stopped after the query it was waiting on: it read no edges.
    expect(reads).toBe(1);
  });
});
