import { describe, expect, it } from 'vitest';
import { runEvent } from '../events.js';
import type { EmitResult, Transport } from './transport.js';
import { withRetry } from './retry.js';

const event = runEvent({ eventType: 'START', job: { namespace: 'n', name: 'j' } });
const retryable = (retryAfterMs?: number): EmitResult =>
  retryAfterMs === undefined
    ? { status: 'retryable', error: new Error('busy') }
    : { status: 'retryable', error: new Error('busy'), retryAfterMs };

function scripted(results: EmitResult[]): Transport & { calls: number } {
  const transport = {
    calls: 0,
    emit() {
      transport.calls++;
      return Promise.resolve(results.shift() ?? { status: 'success' as const });
    },
  };
  return transport;
}

describe('withRetry', () => {
  it('caps the exponential delay at maxDelayMs and spreads it with jitter', async () => {
    const waits: number[] = [];
    const randoms = [0, 0.999, 0, 0.999, 0.5];
    const inner = scripted(Array.from({ length: 5 }, () => retryable()));
    const transport = withRetry(inner, {
      retries: 5,
      baseDelayMs: 1000,
      maxDelayMs: 4000,
      random: () => randoms.shift()!,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    expect(await transport.emit(event)).toEqual({ status: 'success' });
    // d = min(4000, 1000 * 2^(n-1)); wait in [d/2, d)
    expect(waits.map(Math.round)).toEqual([500, 1999, 2000, 3998, 3000]);
  });

  it('gives up at once when Retry-After exceeds maxRetryAfterMs', async () => {
    const inner = scripted([retryable(120_000)]);
    const waits: number[] = [];
    const transport = withRetry(inner, {
      maxRetryAfterMs: 60_000,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    const result = await transport.emit(event);
    expect(result).toMatchObject({ status: 'retryable', retryAfterMs: 120_000 });
    expect(inner.calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('turns a throwing transport into a failure without retrying', async () => {
    let calls = 0;
    const transport = withRetry({
      emit: () => {
        calls++;
        throw new Error('bug in transport');
      },
    });
    const result = await transport.emit(event);
    expect(result.status).toBe('failure');
    expect(result.status === 'failure' && result.error.message).toBe('bug in transport');
    expect(calls).toBe(1);
  });

  it('stops waiting when closed, returning the last result, so a process can exit', async () => {
    const inner = scripted(Array.from({ length: 10 }, () => retryable()));
    let backingOff!: () => void;
    const waiting = new Promise<void>((resolve) => (backingOff = resolve));
    const transport = withRetry(inner, {
      baseDelayMs: 3_600_000,
      maxDelayMs: 3_600_000,
      onRetry: () => backingOff(),
    });
    const pending = transport.emit(event);
    // Closed once it waits out its first back-off (of an hour).
    await waiting;
    expect(await transport.close!(100)).toBe(true);
    expect((await pending).status).toBe('retryable');
    expect(inner.calls).toBe(1);
  });
});
