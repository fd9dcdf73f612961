import type { Queryable } from '../db.js';

/** Only these namespaces (what a caller may read), by name and id. */
export interface NamespaceScope {
  readonly names: readonly string[];
  readonly ids: readonly number[];
}

/** DAY: the last 24 hours, hour by hour (UTC). WEEK: the last 7 days, day by day in a time zone. */
export type StatsPeriod = 'DAY' | 'WEEK';

/** A bucket with the OpenLineage run events received in it, by eventType. */
export interface LineageEventBucket {
  readonly startInterval: Date;
  readonly endInterval: Date;
  readonly fail: number;
  readonly start: number;
  readonly complete: number;
  readonly abort: number;
}

/** A bucket with how many entities existed (were created) by its end. */
export interface CountBucket {
  readonly startInterval: Date;
  readonly endInterval: Date;
  readonly count: number;
}

/**
 * The buckets of a period as a CTE `buckets(label_start, label_end, start_at, end_at)`: `start_at`/`end_at`
 * are the instants counted, `label_*` what the API reports.
 *
 * DAY buckets are the 24 UTC hours up to and including the current one (computed in UTC, not in the
 * session's time zone, so that zones with half-hour offsets do not shift them).
 *
 * WEEK buckets are the 7 local days in `$1` (an IANA zone) up to and including today. Marquez reports each
 * local midnight as that wall-clock time written in UTC (a local 2024-05-02 00:00 in Tokyo is reported as
 * 2024-05-02T00:00:00Z), and its web UI formats the labels in UTC accordingly; the same is done here so that
 * the UI shows the right days. The counting itself uses the true instants of the local midnights.
 */
function bucketsCte(period: StatsPeriod): string {
  if (period === 'DAY') {
    return `buckets AS (
      SELECT h AS label_start, h + interval '1 hour' AS label_end, h AS start_at, h + interval '1 hour' AS end_at
      FROM generate_series(
        (date_trunc('hour', now() AT TIME ZONE 'UTC') - interval '23 hours') AT TIME ZONE 'UTC',
        date_trunc('hour', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
        interval '1 hour') AS h)`;
  }
  return `days AS (
      SELECT date_trunc('day', now() AT TIME ZONE $1) - make_interval(days => n) AS day
      FROM generate_series(0, 6) AS n),
    buckets AS (
      SELECT day AT TIME ZONE 'UTC' AS label_start, (day + interval '1 day') AT TIME ZONE 'UTC' AS label_end,
             day AT TIME ZONE $1 AS start_at, (day + interval '1 day') AT TIME ZONE $1 AS end_at
      FROM days)`;
}

/**
 * Run events per bucket and eventType (by eventTime), from the stored events. `timeZone` is required for WEEK.
 */
export function lineageEventStats(
  db: Queryable,
  period: StatsPeriod,
  timeZone: string | undefined,
  namespaces?: NamespaceScope,
): Promise<LineageEventBucket[]> {
  const params: unknown[] = period === 'WEEK' ? [timeZone] : [];
  // A caller who may not read every namespace counts the events of the jobs they may read.
  const only = namespaces ? `AND e.job_namespace = ANY($${params.push(namespaces.names)}::text[])` : '';
  return db.query<LineageEventBucket>(
    `WITH ${bucketsCte(period)}
     SELECT b.label_start AS "startInterval", b.label_end AS "endInterval",
            count(e.id) FILTER (WHERE e.event_type = 'FAIL')::int AS fail,
            count(e.id) FILTER (WHERE e.event_type = 'START')::int AS start,
            count(e.id) FILTER (WHERE e.event_type = 'COMPLETE')::int AS complete,
            count(e.id) FILTER (WHERE e.event_type = 'ABORT')::int AS abort
     FROM buckets b
     LEFT JOIN events e ON e.event_time >= b.start_at AND e.event_time < b.end_at ${only}
     GROUP BY b.label_start, b.label_end, b.start_at
     ORDER BY b.start_at`,
    params,
  );
}

const COUNTED = { jobs: 'jobs', datasets: 'datasets', sources: 'sources' } as const;

/** What the growth charts count. */
export type CountedEntity = keyof typeof COUNTED;

/**
 * The cumulative number of jobs, datasets or sources at the end of each bucket, by their created_at (the
 * eventTime that first named them). Soft-deleted ones are counted, as in Marquez.
 */
export function entityCountStats(
  db: Queryable,
  entity: CountedEntity,
  period: StatsPeriod,
  timeZone: string | undefined,
  namespaces?: NamespaceScope,
): Promise<CountBucket[]> {
  const table = COUNTED[entity];
  const params: unknown[] = period === 'WEEK' ? [timeZone] : [];
  // Sources have no namespace: a source is the namespace of the same name (OpenLineage names both alike).
  const only = !namespaces
    ? ''
    : entity === 'sources'
      ? `AND t.name = ANY($${params.push(namespaces.names)}::text[])`
      : `AND t.namespace_id = ANY($${params.push(namespaces.ids)}::int[])`;
  return db.query<CountBucket>(
    `WITH ${bucketsCte(period)},
     per_bucket AS (
       SELECT b.label_start, b.label_end, b.start_at, count(t.id) AS created
       FROM buckets b LEFT JOIN ${table} t ON t.created_at >= b.start_at AND t.created_at < b.end_at ${only}
       GROUP BY b.label_start, b.label_end, b.start_at),
     earlier AS (
       SELECT count(*) AS created FROM ${table} t WHERE t.created_at < (SELECT min(start_at) FROM buckets) ${only})
     SELECT label_start AS "startInterval", label_end AS "endInterval",
            ((SELECT created FROM earlier) + sum(created) OVER (ORDER BY start_at))::int AS count
     FROM per_bucket
     ORDER BY start_at`,
    params,
  );
}
