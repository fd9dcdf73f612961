import { afterEach, describe, expect, it, vi } from 'vitest';
import { StoreHealth } from './availability.js';
import { LISTEN_RECONNECT_BACKOFF } from './db.js';
import { backoffCeilingMs } from '../core/backoff.js';

describe('the store back-off policies', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('probes a store that is down ever more rarely, up to maxBackoffMs, and starts again after it recovers', async () => {
    vi.useFakeTimers();
    // Jitter at the top of its range: each wait is just under its ceiling.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.99);
    let up = false;
    let probes = 0;
    const health = new StoreHealth({
      minBackoffMs: 1000,
      maxBackoffMs: 8000,
      probe: () => {
        probes++;
        return up ? Promise.resolve() : Promise.reject(new Error('connection refused'));
      },
    });
    health.markDown(new Error('Connection terminated'));
    // Retry-After follows the nominal probe interval: 1, 2, 4, 8 s, then stays at the cap.
    const asked: number[] = [health.retryAfterSeconds];
    for (let failed = 1; failed <= 5; failed++) {
      await vi.advanceTimersByTimeAsync(health.retryAfterSeconds * 1000);
      expect(probes).toBe(failed);
      asked.push(health.retryAfterSeconds);
    }
    expect(asked).toEqual([1, 2, 4, 8, 8, 8]);
    up = true;
    await vi.advanceTimersByTimeAsync(8000);
    expect(health.available).toBe(true);
    health.markDown(new Error('Connection terminated'));
    expect(health.retryAfterSeconds).toBe(1);
    expect(probes).toBe(6);
    // Jitter at the bottom of its range: equal jitter still waits half the first interval.
    random.mockReturnValue(0);
    health.close();
    const again = new StoreHealth({
      minBackoffMs: 1000,
      maxBackoffMs: 8000,
      probe: () => {
        probes++;
        return Promise.reject(new Error('connection refused'));
      },
    });
    again.markDown(new Error('Connection terminated'));
    await vi.advanceTimersByTimeAsync(499);
    expect(probes).toBe(6);
    await vi.advanceTimersByTimeAsync(1);
    expect(probes).toBe(7);
    again.close();
  });

  it('reconnects a LISTEN connection after 200 ms at first, doubling to at most 5 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffCeilingMs(n, LISTEN_RECONNECT_BACKOFF))).toEqual([
      200, 400, 800, 1600, 3200, 5000, 5000, 5000,
    ]);
  });
});
