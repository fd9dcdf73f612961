/** The dashboard's counts (GET /stats/*): one bucket per hour or day. */
import { Shared, Time, Type, type Static } from '../../core/json-schema.js';

/** Run events of one hour or day, by eventType (GET /stats/lineage-events). */
export const LineageEventsBucketSchema = Shared('LineageEventsBucket', {
  startInterval: Time(),
  endInterval: Time(),
  fail: Type.Integer(),
  start: Type.Integer(),
  complete: Type.Integer(),
  abort: Type.Integer(),
});
export type LineageEventsBucketJson = Static<typeof LineageEventsBucketSchema>;

/** How many jobs, datasets or sources existed at the end of one hour or day (GET /stats/{jobs,datasets,sources}). */
export const CountBucketSchema = Shared('CountBucket', {
  startInterval: Time(),
  endInterval: Time(),
  count: Type.Integer(),
});
export type CountBucketJson = Static<typeof CountBucketSchema>;
