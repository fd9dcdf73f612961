import { describe, expect, test } from 'vitest';
import { hourlyBuckets } from './activity.js';

describe('hourlyBuckets', () => {
  test('24 hours ending with the hour of the latest event, counted by type', () => {
    const latest = new Date('2025-03-14T06:00:48Z');
    const buckets = hourlyBuckets(
      [
        { eventType: 'COMPLETE', eventTime: '2025-03-14T06:00:48Z' },
        { eventType: 'START', eventTime: '2025-03-14T06:00:00Z' },
        { eventType: 'FAIL', eventTime: '2025-03-14T02:01:42Z' },
        { eventType: 'RUNNING', eventTime: '2025-03-14T02:01:00Z' },
        { eventType: 'ABORT', eventTime: '2025-03-13T07:00:00Z' },
        // Outside the window: an hour too early.
        { eventType: 'COMPLETE', eventTime: '2025-03-13T06:59:59Z' },
      ],
      latest,
    );
    expect(buckets).toHaveLength(24);
    expect(buckets[0]!.startInterval).toBe('2025-03-13T07:00:00.000Z');
    expect(buckets[23]!.endInterval).toBe('2025-03-14T07:00:00.000Z');
    expect(buckets[23]).toMatchObject({ start: 1, complete: 1, fail: 0, abort: 0 });
    expect(buckets[19]).toMatchObject({ fail: 1, start: 0 });
    expect(buckets[0]).toMatchObject({ abort: 1, complete: 0 });
    expect(buckets.reduce((n, b) => n + b.start + b.complete + b.fail + b.abort, 0)).toBe(4);
  });
});
