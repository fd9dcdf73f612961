import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, backoffDelayMs, checkBackoffPolicy, retryDelayMs, sleep } from './backoff.js';

describe('back-off', () => {
  it('doubles from the base up to the cap', () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5, 6, 100, 10_000].map((n) => backoffCeilingMs(n, policy))).toEqual([
      100, 200, 400, 800, 1000, 1000, 1000, 1000,
    ]);
  });

  it('draws each delay from the upper half of its ceiling, for any attempt, policy and random value', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseDelayMs, extra, random) => {
          const policy = { baseDelayMs, maxDelayMs: baseDelayMs + extra };
          const ceiling = Math.min(policy.maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
          const delay = backoffDelayMs(attempt, policy, () => random);
          return delay >= ceiling / 2 && delay <= ceiling && delay <= policy.maxDelayMs;
        },
      ),
    );
  });

  it('never waits less than Retry-After asks, and otherwise keeps its own delay', () => {
    const policy = { baseDelayMs: 1000, maxDelayMs: 60_000 };
    expect(retryDelayMs(1, policy, { retryAfterMs: 30_000, random: () => 0 })).toBe(30_000);
    expect(retryDelayMs(3, policy, { retryAfterMs: 10, random: () => 0 })).toBe(2000);
    expect(retryDelayMs(3, policy, { random: () => 0.5 })).toBe(3000);
  });

  it('refuses a policy that cannot work, naming the field', () => {
    expect(() => checkBackoffPolicy({ baseDelayMs: 0 })).toThrow(/baseDelayMs must be a positive number/);
    expect(() => checkBackoffPolicy({ baseDelayMs: 500, maxDelayMs: 100 }, 'webhook retries')).toThrow(
      /^webhook retries: maxDelayMs must be .* no smaller than baseDelayMs \(500\), got 100/,
    );
    expect(checkBackoffPolicy({})).toEqual({ baseDelayMs: 1000, maxDelayMs: 300_000 });
  });

  it('sleeps until aborted, not for the whole delay', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const pending = sleep(3_600_000, controller.signal);
    controller.abort();
    await pending;
    expect(performance.now() - started).toBeLessThan(1000);
    // An already aborted signal resolves at once, too.
    await sleep(3_600_000, controller.signal);
  });
});
