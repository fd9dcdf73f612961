import { describe, expect, it } from 'vitest';
import { createClient } from './client.js';
import { inputDataset, outputDataset } from './events.js';
import { processingEngineRunFacet, sqlJobFacet } from './generated/facet-builders.js';
import type { RunEvent } from './generated/model.js';
import { officialErrors } from './test-support/official-schemas.js';
import { currentRun, track } from './track.js';
import { createInMemoryTransport } from './transports/in-memory-transport.js';
import { isUuid } from './uuid.js';

function setup() {
  const transport = createInMemoryTransport();
  const client = createClient({ transport, sources: { env: {}, cwd: '/', homeDir: '/' } });
  const events = async (): Promise<RunEvent[]> => {
    expect(await client.flush(5000)).toBe(true);
    return transport.runEvents();
  };
  return { client, events };
}

const CORE = 'https://openlineage.io/spec/2-0-2/OpenLineage.json';
const job = { namespace: 'etl', name: 'load_orders' };
const orders = inputDataset({ namespace: 'postgres://db:5432', name: 'shop.public.orders' });

describe('track', () => {
  it('emits START and COMPLETE around a sync function and returns its value', async () => {
    const { client, events } = setup();
    const value = track({ client, job, inputs: [orders] }, (run) => {
      expect(currentRun()).toBe(run);
      return 42;
    });
    expect(value).toBe(42);
    const emitted = await events();
    expect(emitted.map((e) => e.eventType)).toEqual(['START', 'COMPLETE']);
    expect(emitted[0]!.run.runId).toBe(emitted[1]!.run.runId);
    expect(isUuid(emitted[0]!.run.runId)).toBe(true);
    expect(emitted[0]!.inputs).toEqual([orders]);
    for (const event of emitted) expect(officialErrors(CORE, event)).toEqual([]);
    expect(currentRun()).toBeUndefined();
  });

  it('emits FAIL with an errorMessage facet and rethrows the same error', async () => {
    const { client, events } = setup();
    const error = new TypeError('bad row');
    expect(() =>
      track({ client, job }, () => {
        throw error;
      }),
    ).toThrow(error);
    const asyncError = new RangeError('async bad');
    await expect(
      track({ client, job }, async () => {
        await Promise.resolve();
        throw asyncError;
      }),
    ).rejects.toBe(asyncError);
    // Order is kept within a run; two runs may interleave.
    const byRun = new Map<string, RunEvent[]>();
    for (const e of await events()) byRun.set(e.run.runId, [...(byRun.get(e.run.runId) ?? []), e]);
    const [first, second] = [...byRun.values()];
    expect(first!.map((e) => e.eventType)).toEqual(['START', 'FAIL']);
    expect(second!.map((e) => e.eventType)).toEqual(['START', 'FAIL']);
    const facet = first![1]!.run.facets!.errorMessage!;
    expect(facet.message).toBe('bad row');
    expect(facet.programmingLanguage).toBe('JavaScript');
    expect(facet.stackTrace).toContain('TypeError: bad row');
    expect(officialErrors(facet._schemaURL, facet)).toEqual([]);
    expect(second![1]!.run.facets!.errorMessage!.message).toBe('async bad');
  });

  it('attaches facets and datasets discovered during the run to the terminal event', async () => {
    const { client, events } = setup();
    const result = await track(
      {
        client,
        job: { ...job, facets: { sql: sqlJobFacet({ query: 'insert into x select 1' }) } },
        runFacets: { processing_engine: processingEngineRunFacet({ version: '20.0.0', name: 'node' }) },
        nominalTime: { start: new Date('2024-01-15T00:00:00Z'), end: '2024-01-16T00:00:00Z' },
      },
      async (run) => {
        await Promise.resolve();
        run.addOutputs(outputDataset({ namespace: 's3://lake', name: 'orders_clean' }));
        run.addRunFacets({ custom_rows: { _producer: 'https://p', _schemaURL: 'https://s', rows: 3 } });
        run.running();
        return 'ok';
      },
    );
    expect(result).toBe('ok');
    const emitted = await events();
    expect(emitted.map((e) => e.eventType)).toEqual(['START', 'RUNNING', 'COMPLETE']);
    const [start, , complete] = emitted;
    expect(start!.outputs).toEqual([]);
    expect(complete!.outputs!.map((d) => d.name)).toEqual(['orders_clean']);
    expect(complete!.run.facets!.custom_rows).toMatchObject({ rows: 3 });
    expect(start!.run.facets!.nominalTime).toMatchObject({
      nominalStartTime: '2024-01-15T00:00:00.000Z',
      nominalEndTime: '2024-01-16T00:00:00Z',
    });
    expect(start!.job.facets!.sql!.query).toBe('insert into x select 1');
    expect(start!.run.facets!.processing_engine!.version).toBe('20.0.0');
    for (const event of emitted) expect(officialErrors(CORE, event)).toEqual([]);
  });

  it('adds a parent facet (with the root) to nested runs, across awaits', async () => {
    const { client, events } = setup();
    await track({ client, job: { namespace: 'etl', name: 'dag' } }, async (dag) => {
      await Promise.resolve();
      await track({ client, job: { namespace: 'etl', name: 'dag.task' } }, async (task) => {
        // A timer, not only a microtask: the run context must survive a turn of the event loop.
        await new Promise((resolve) => setTimeout(resolve, 1));
        track({ client, job: { namespace: 'etl', name: 'dag.task.step' } }, (step) => {
          expect(step.root).toEqual({ runId: dag.runId, job: dag.job });
        });
        expect(task.root).toEqual({ runId: dag.runId, job: dag.job });
      });
      track({ client, job: { namespace: 'other', name: 'detached' }, parent: null }, () => undefined);
    });
    const emitted = await events();
    const starts = new Map(emitted.filter((e) => e.eventType === 'START').map((e) => [e.job.name, e]));
    const dag = starts.get('dag')!;
    expect(dag.run.facets?.parent).toBeUndefined();
    const task = starts.get('dag.task')!.run.facets!.parent!;
    expect(task.run.runId).toBe(dag.run.runId);
    expect(task.job).toEqual({ namespace: 'etl', name: 'dag' });
    expect(task.root).toEqual({ run: { runId: dag.run.runId }, job: { namespace: 'etl', name: 'dag' } });
    const step = starts.get('dag.task.step')!.run.facets!.parent!;
    expect(step.job.name).toBe('dag.task');
    expect(step.root!.run.runId).toBe(dag.run.runId);
    expect(starts.get('detached')!.run.facets?.parent).toBeUndefined();
    expect(officialErrors(task._schemaURL, task)).toEqual([]);
  });

  it('does not let a failing backend reach the user function', async () => {
    const client = createClient({
      transport: { emit: () => Promise.reject(new Error('down')) },
      sources: { env: {}, cwd: '/', homeDir: '/' },
      onError: () => undefined,
    });
    expect(await track({ client, job }, () => Promise.resolve('fine'))).toBe('fine');
    expect(await client.flush(1000)).toBe(true);
    expect(client.stats()).toMatchObject({ emitted: 2, undelivered: 2 });
  });
});
