import type { LineageEventsBucket } from './types.js';

const hourMs = 3600_000;

/** The part of a stored event the activity chart reads. */
export interface EventTimeAndType {
  readonly eventType?: string;
  readonly eventTime: string;
}

/**
 * Hourly buckets of the 24 hours up to and including the hour of `latest`, counted by event type the way
 * `/api/v1/stats/lineage-events` counts them (START, COMPLETE, FAIL, ABORT; other types are not counted). For
 * the home page when nothing arrived in the last 24 hours: the server's stats are anchored at now, the
 * latest activity may be older.
 */
export function hourlyBuckets(events: readonly EventTimeAndType[], latest: Date): LineageEventsBucket[] {
  const lastHour = Math.floor(latest.getTime() / hourMs) * hourMs;
  const first = lastHour - 23 * hourMs;
  const buckets: LineageEventsBucket[] = Array.from({ length: 24 }, (_, i) => ({
    startInterval: new Date(first + i * hourMs).toISOString(),
    endInterval: new Date(first + (i + 1) * hourMs).toISOString(),
    fail: 0,
    start: 0,
    complete: 0,
    abort: 0,
  }));
  const keys = { START: 'start', COMPLETE: 'complete', FAIL: 'fail', ABORT: 'abort' } as const;
  for (const event of events) {
    const key = keys[event.eventType as keyof typeof keys] as (typeof keys)[keyof typeof keys] | undefined;
    const index = Math.floor((Date.parse(event.eventTime) - first) / hourMs);
    const bucket = buckets[index];
    if (key && bucket) bucket[key]++;
  }
  return buckets;
}
