import type { Queryable } from '../db.js';

const HOUR_MS = 3_600_000;

/**
 * How many events have an eventTime in [from, to] (both included), optionally of some kinds only. Whole hours
 * inside the range come from event_counts (migration 009); only the partial hours at the two ends are counted
 * in the events table, through its eventTime index. The cost follows the span of the range (one row per hour),
 * never the size of the store.
 */
export async function countEvents(
  db: Queryable,
  from: Date,
  to: Date,
  kinds: readonly string[] = ['run', 'dataset', 'job'],
): Promise<number> {
  if (to.getTime() < from.getTime()) return 0;
  // Hour boundaries are those of date_bin from 2000-01-01T00:00Z, i.e. UTC hours.
  const firstWhole = Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS;
  const lastWhole = Math.floor(to.getTime() / HOUR_MS) * HOUR_MS;
  if (firstWhole >= lastWhole) {
    const [row] = await db.query<{ count: number }>(
      'SELECT count(*)::float8 AS count FROM events WHERE event_time >= $1 AND event_time <= $2 AND kind = ANY($3)',
      [from, to, kinds],
    );
    return row?.count ?? 0;
  }
  // [from, firstWhole) + whole hours [firstWhole, lastWhole) + [lastWhole, to]
  const [row] = await db.query<{ count: number }>(
    `SELECT (SELECT coalesce(sum(count), 0) FROM event_counts WHERE hour >= $2 AND hour < $3 AND kind = ANY($5))
          + (SELECT count(*) FROM events WHERE event_time >= $1 AND event_time < $2 AND kind = ANY($5))
          + (SELECT count(*) FROM events WHERE event_time >= $3 AND event_time <= $4 AND kind = ANY($5))
          AS count`,
    [from, new Date(firstWhole), new Date(lastWhole), to, kinds],
  );
  return Number(row?.count ?? 0);
}
