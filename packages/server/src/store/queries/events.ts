import type { Queryable } from '../db.js';

const HOUR_MS = 3_600_000;

/** Which events {@link listEventBodies} lists, and in which order. */
export interface EventRange {
  /** The earliest eventTime listed (included), as ISO 8601 text. */
  readonly after: string;
  /** The latest eventTime listed (included), as ISO 8601 text. */
  readonly before: string;
  /** The kinds listed: 'run', 'dataset', 'job'. */
  readonly kinds: readonly string[];
  /** By eventTime, then by id. */
  readonly direction: 'ASC' | 'DESC';
}

/** The events in `range` as received (their JSON text), in its order, from `offset` on, at most `limit`. */
export function listEventBodies(
  db: Queryable,
  range: EventRange,
  limit: number,
  offset: number,
): Promise<{ body: string }[]> {
  const { direction } = range;
  return db.query<{ body: string }>(
    `SELECT body FROM events WHERE event_time >= $1::timestamptz AND event_time <= $2::timestamptz AND kind = ANY($3::text[]) ORDER BY event_time ${direction}, id ${direction} LIMIT $4 OFFSET $5`,
    [range.after, range.before, range.kinds, limit, offset],
  );
}

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
