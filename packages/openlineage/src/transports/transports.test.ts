import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEvent } from '../events.js';
import type { OpenLineageEvent, RunEvent } from '../generated/model.js';
import { createCompositeTransport } from './composite-transport.js';
import { createConsoleTransport } from './console-transport.js';
import { createFileTransport } from './file-transport.js';
import { createInMemoryTransport } from './in-memory-transport.js';
import { createNoopTransport } from './noop-transport.js';
import { createTransformTransport } from './transform-transport.js';
import type { EmitResult, Transport } from './transport.js';
import { safeEmitBatch } from './transport.js';

const event = (name = 'j', eventType: RunEvent['eventType'] = 'START'): RunEvent =>
  runEvent({ eventType, job: { namespace: 'n', name } });
const fixed = (result: EmitResult): Transport => ({ emit: () => Promise.resolve(result) });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'openlineage-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('console transport', () => {
  it('writes one JSON line per event', async () => {
    const lines: string[] = [];
    const transport = createConsoleTransport({ write: (line) => lines.push(line) });
    const sent = event();
    expect(await transport.emit(sent)).toEqual({ status: 'success' });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual(sent);
    expect(lines[0]).not.toContain('\n');
  });
});

describe('file transport', () => {
  it('appends NDJSON and creates parent folders', async () => {
    const file = path.join(dir, 'nested', 'events.ndjson');
    const transport = createFileTransport({ path: file });
    const sent = [event('a'), event('b'), event('c')];
    const results = await Promise.all(sent.map((e) => transport.emit(e)));
    expect(results.every((r) => r.status === 'success')).toBe(true);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(sent);
  });

  it('overwrites a "last run" file with a JSON array of this run', async () => {
    const file = path.join(dir, '.viz', 'lineage_events.json');
    const first = createFileTransport({ path: file, mode: 'overwrite' });
    await first.emit(event('old'));
    const second = createFileTransport({ path: file, mode: 'overwrite', maxEvents: 2 });
    for (const name of ['a', 'b', 'c']) await second.emit(event(name));
    const content = JSON.parse(await readFile(file, 'utf8')) as RunEvent[];
    expect(content.map((e) => e.job.name)).toEqual(['b', 'c']);
    expect((await readdir(path.dirname(file))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('writes one file per event, like the Python client with append: false', async () => {
    const now = new Date(2024, 0, 15, 10, 30, 45, 123);
    const transport = createFileTransport({ path: path.join(dir, 'ol'), mode: 'per-event', now: () => now });
    await transport.emit(event('a'));
    await transport.emit(event('b'));
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(['ol-20240115-103045.123000-1.json', 'ol-20240115-103045.123000.json']);
  });

  it('reports an unwritable path as retryable instead of throwing', async () => {
    const transport = createFileTransport({ path: path.join(dir, 'file.txt', 'below-a-file.ndjson') });
    await createFileTransport({ path: path.join(dir, 'file.txt') }).emit(event());
    const result = await transport.emit(event());
    expect(result.status).toBe('retryable');
    expect(result.status !== 'success' && result.error.message).toContain('below-a-file.ndjson');
  });
});

describe('composite transport', () => {
  it('fans out; one failing or throwing child does not stop the others', async () => {
    const a = createInMemoryTransport();
    const b = createInMemoryTransport();
    const throwing: Transport = {
      emit: () => {
        throw new Error('boom');
      },
    };
    const transport = createCompositeTransport({
      transports: [a, throwing, fixed({ status: 'failure', error: new Error('400') }), b],
    });
    expect(await transport.emit(event())).toEqual({ status: 'success' });
    expect(a.events).toHaveLength(1);
    expect(b.events).toHaveLength(1);
  });

  it('reports retryable when all fail and one is retryable; failure with requireAll when any fails', async () => {
    const allBad = createCompositeTransport({
      transports: [
        fixed({ status: 'failure', error: new Error('x') }),
        fixed({ status: 'retryable', error: new Error('y') }),
      ],
    });
    const result = await allBad.emit(event());
    expect(result.status).toBe('retryable');
    expect(result.status !== 'success' && result.error.message).toBe('2 of 2 composite transports failed');
    const strict = createCompositeTransport({
      transports: [createInMemoryTransport(), fixed({ status: 'failure', error: new Error('x') })],
      requireAll: true,
    });
    expect((await strict.emit(event())).status).toBe('failure');
  });

  it('fails over in order and stops at the first success', async () => {
    const first = createInMemoryTransport({
      respond: () => ({ status: 'retryable', error: new Error('down') }),
    });
    const second = createInMemoryTransport();
    const third = createInMemoryTransport();
    const transport = createCompositeTransport({ transports: [first, second, third], strategy: 'failover' });
    expect((await transport.emit(event())).status).toBe('success');
    expect([first.events.length, second.events.length, third.events.length]).toEqual([0, 1, 0]);
  });
});

describe('transform transport', () => {
  it('sends the transformed event, and drops events the function rejects', async () => {
    const sink = createInMemoryTransport();
    const transport = createTransformTransport({
      transport: sink,
      transform: (e) =>
        (e as RunEvent).job.name === 'secret'
          ? null
          : { ...e, job: { ...(e as RunEvent).job, namespace: 'prod' } },
    });
    expect((await transport.emit(event('a'))).status).toBe('success');
    expect((await transport.emit(event('secret'))).status).toBe('success');
    expect(sink.runEvents().map((e) => `${e.job.namespace}/${e.job.name}`)).toEqual(['prod/a']);
  });

  it('turns a throwing function into a failure result', async () => {
    const sink = createInMemoryTransport();
    const transport = createTransformTransport({
      transport: sink,
      transform: () => {
        throw new Error('bad mapping');
      },
    });
    const result = await transport.emit(event());
    expect(result.status).toBe('failure');
    expect(result.status === 'failure' && result.error.message).toContain('bad mapping');
    expect(sink.events).toHaveLength(0);
  });
});

describe('noop and in-memory transports', () => {
  it('noop accepts and forgets', async () => {
    expect(await createNoopTransport().emit(event())).toEqual({ status: 'success' });
  });

  it('in-memory keeps copies, filters run events, and can simulate failures', async () => {
    const transport = createInMemoryTransport({
      respond: (_e, index) =>
        index === 1 ? { status: 'failure', error: new Error('nope') } : { status: 'success' },
    });
    const sent = event('a');
    await transport.emit(sent);
    await transport.emit(event('b'));
    sent.job.name = 'mutated';
    expect(transport.runEvents().map((e) => e.job.name)).toEqual(['a']);
    transport.clear();
    expect(transport.events).toEqual([]);
  });
});

describe('safeEmitBatch without emitBatch', () => {
  it('sends one by one and reports the rest as partial at the first failure', async () => {
    const seen: string[] = [];
    const transport: Transport = {
      emit: (e: OpenLineageEvent) => {
        const name = (e as RunEvent).job.name;
        seen.push(name);
        return Promise.resolve(
          name === 'b' ? { status: 'retryable', error: new Error('busy') } : { status: 'success' },
        );
      },
    };
    const result = await safeEmitBatch(transport, [event('a'), event('b'), event('c')]);
    expect(result).toMatchObject({ status: 'partial', retryable: [1, 2], failed: [] });
    expect(seen).toEqual(['a', 'b']);
  });
});
