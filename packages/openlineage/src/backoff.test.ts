import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, retryDelayMs, sleep, untilAborted } from './backoff.js';

describe('back-off', () => {
  it('doubles from the base up to the cap, and a base of 0 retries at once', () => {
    const policy = { baseDelayMs: 300, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 60, 1e6].map((n) => backoffCeilingMs(n, policy))).toEqual([
      300, 600, 1000, 1000, 1000, 1000,
    ]);
    // The client's `backoff_factor: 0`, and a cap below the base (the cap wins), as the Python client allows.
    expect([1, 2, 100].map((n) => backoffCeilingMs(n, { baseDelayMs: 0, maxDelayMs: 10_000 }))).toEqual([
      0, 0, 0,
    ]);
    expect(backoffCeilingMs(1, { baseDelayMs: 500, maxDelayMs: 100 })).toBe(100);
  });

  it('draws from the upper half of the ceiling, and never shortens a Retry-After', () => {
    const policy = { baseDelayMs: 1000, maxDelayMs: 60_000 };
    expect(retryDelayMs(3, policy, { random: () => 0 })).toBe(2000);
    expect(retryDelayMs(3, policy, { random: () => 0.5 })).toBe(3000);
    expect(retryDelayMs(1, policy, { retryAfterMs: 30_000, random: () => 0 })).toBe(30_000);
    expect(retryDelayMs(1, policy, { retryAfterMs: Number.NaN, random: () => 0 })).toBe(500);
  });
});

describe('waits on a long-lived signal', () => {
  it('leaves no listener behind, however many waits end', async () => {
    const stopping = new AbortController();
    for (let i = 0; i < 50; i++) {
      await sleep(0, stopping.signal);
      await untilAborted(stopping.signal, (done) => void setImmediate(done));
    }
    expect(getEventListeners(stopping.signal, 'abort')).toHaveLength(0);
  });

  it('ends at once on abort and undoes what the wait set up', async () => {
    const stopping = new AbortController();
    let undone = false;
    const waiting = untilAborted(stopping.signal, () => () => (undone = true));
    stopping.abort();
    await waiting;
    expect(undone).toBe(true);
    // A wait whose work ends before `start` returns is undone too.
    let alsoUndone = false;
    await untilAborted(undefined, (done) => {
      done();
      return () => (alsoUndone = true);
    });
    expect(alsoUndone).toBe(true);
    const started = Date.now();
    await sleep(60_000, stopping.signal);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
