import { describe, expect, it, vi } from 'vitest';
import { runEvent } from '../events.js';
import type { OpenLineageEvent, RunEvent } from '../generated/model.js';
import { startLineageServer } from '../test-support/lineage-server.js';
import { createAsyncTransport } from './async-transport.js';
import { createHttpTransport } from './http-transport.js';
import type { BatchEmitResult, EmitResult, Transport } from './transport.js';

const event = (name: string, eventType: RunEvent['eventType'] = 'START'): RunEvent =>
  runEvent({ eventType, job: { namespace: 'n', name } });
const names = (events: readonly OpenLineageEvent[]) => events.map((e) => (e as RunEvent).job.name);

/** A batch-capable transport whose answers are controlled by the test. */
function controlled(
  answer: (batch: readonly OpenLineageEvent[]) => Promise<BatchEmitResult> = () =>
    Promise.resolve({ status: 'success' }),
) {
  const batches: OpenLineageEvent[][] = [];
  let closed = false;
  const transport: Transport = {
    emit: (e) => answer([e]) as Promise<EmitResult>,
    emitBatch: (events) => {
      batches.push([...events]);
      return answer(events);
    },
    close: () => {
      closed = true;
      return Promise.resolve(true);
    },
  };
  return { transport, batches, isClosed: () => closed };
}

describe('createAsyncTransport', () => {
  it('accepts at once and sends full batches in order', async () => {
    const inner = controlled();
    const transport = createAsyncTransport({
      transport: inner.transport,
      batchSize: 2,
      flushIntervalMs: 60_000,
    });
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      expect(await transport.emit(event(name))).toEqual({ status: 'success' });
    expect(await transport.flush!(5000)).toBe(true);
    expect(inner.batches.map(names)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(transport.stats()).toEqual({ queued: 0, sent: 5, undelivered: 0, rejected: 0 });
    await transport.close!(1000);
  });

  it('flush() waits for the batch in flight and for events emitted while it runs', async () => {
    // A real receiver that holds its answers: a batch stays in flight until the test releases it.
    const receiver = await startLineageServer();
    const release = receiver.hold();
    const transport = createAsyncTransport({
      transport: createHttpTransport({ url: receiver.url, batch: true }),
      batchSize: 2,
      flushIntervalMs: 60_000,
    });
    try {
      // A full batch goes at once: when flush() is called nothing is queued, and one batch is in flight.
      await transport.emit(event('a'));
      await transport.emit(event('b'));
      await receiver.received(1);
      let settled = false;
      // What had reached the receiver, and the counters, when flush() resolved.
      const flushed = transport.flush!(5000).then((done) => {
        settled = true;
        return {
          done,
          received: receiver.requests.flatMap((request) => names(request.body as OpenLineageEvent[])),
          stats: transport.stats(),
        };
      });
      for (const name of ['c', 'd', 'e'])
        expect(await transport.emit(event(name))).toEqual({ status: 'success' });
      // A turn of the event loop: a flush() that did not wait for the unanswered batch has resolved by now.
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      release();
      expect(await flushed).toEqual({
        done: true,
        received: ['a', 'b', 'c', 'd', 'e'],
        stats: { queued: 0, sent: 5, undelivered: 0, rejected: 0 },
      });
    } finally {
      await transport.close!(1000);
      await receiver.close();
    }
  });

  it('sends a partial batch after flushIntervalMs', async () => {
    const inner = controlled();
    const transport = createAsyncTransport({
      transport: inner.transport,
      batchSize: 100,
      flushIntervalMs: 20,
    });
    await transport.emit(event('a'));
    // Nothing fills the batch, nothing flushes it: only the interval sends it.
    await vi.waitFor(() => expect(inner.batches.map(names)).toEqual([['a']]), { timeout: 5000 });
    await transport.close!(1000);
  });

  it('bounds memory: a full queue refuses events instead of blocking', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inner = controlled(async () => {
      await gate;
      return { status: 'success' };
    });
    const transport = createAsyncTransport({ transport: inner.transport, batchSize: 1, maxQueueSize: 2 });
    await transport.emit(event('in-flight'));
    await transport.emit(event('q1'));
    await transport.emit(event('q2'));
    const refused = await transport.emit(event('q3'));
    expect(refused.status).toBe('failure');
    expect(refused.status === 'failure' && refused.error.message).toContain('queue full');
    expect(transport.stats()).toMatchObject({ queued: 2, rejected: 1 });
    release();
    expect(await transport.flush!(5000)).toBe(true);
    expect(transport.stats()).toMatchObject({ queued: 0, sent: 3, rejected: 1 });
    await transport.close!(1000);
  });

  it('hands undelivered events to onUndelivered, including the failed part of a partial batch', async () => {
    const undelivered: string[] = [];
    let call = 0;
    const inner = controlled((batch) =>
      Promise.resolve(
        call++ === 0
          ? { status: 'partial', error: new Error('some bad'), retryable: [1], failed: [] }
          : { status: 'failure', error: new Error(`rejected ${batch.length}`) },
      ),
    );
    const transport = createAsyncTransport({
      transport: inner.transport,
      batchSize: 2,
      onUndelivered: (events, error) =>
        undelivered.push(...names(events).map((n) => `${n}:${error.message}`)),
    });
    for (const name of ['a', 'b', 'c', 'd']) await transport.emit(event(name));
    expect(await transport.flush!(5000)).toBe(true);
    expect(undelivered).toEqual(['b:some bad', 'c:rejected 2', 'd:rejected 2']);
    expect(transport.stats()).toMatchObject({ sent: 1, undelivered: 3 });
    await transport.close!(1000);
  });

  it('uses emit one by one when the inner transport has no emitBatch, keeping order', async () => {
    const seen: string[] = [];
    const transport = createAsyncTransport({
      transport: {
        emit: (e) => {
          seen.push(`${(e as RunEvent).job.name}:${(e as RunEvent).eventType}`);
          return Promise.resolve({ status: 'success' });
        },
      },
      batchSize: 3,
    });
    await transport.emit(event('run1', 'START'));
    await transport.emit(event('run1', 'COMPLETE'));
    await transport.emit(event('run2', 'START'));
    await transport.emit(event('run2', 'FAIL'));
    expect(await transport.close!(5000)).toBe(true);
    expect(seen).toEqual(['run1:START', 'run1:COMPLETE', 'run2:START', 'run2:FAIL']);
  });

  it('close() returns within its timeout with a stuck backend and gives back what is unsent', async () => {
    const inner = controlled(() => new Promise<BatchEmitResult>(() => undefined));
    const undelivered: string[] = [];
    const transport = createAsyncTransport({
      transport: inner.transport,
      batchSize: 1,
      onUndelivered: (events) => undelivered.push(...names(events)),
    });
    for (const name of ['stuck', 'x', 'y']) await transport.emit(event(name));
    const started = Date.now();
    expect(await transport.close!(100)).toBe(false);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(undelivered).toEqual(['x', 'y']);
    expect(inner.isClosed()).toBe(true);
    expect((await transport.emit(event('late'))).status).toBe('failure');
  });
});
