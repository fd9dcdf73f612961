import { describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.js';
import { StatisticsKeeper } from '../src/store/statistics.js';
import { backends, freshDb } from './helpers/backends.js';

const embedded = backends().find((backend) => backend.name === 'embedded')!;

/** -1 until the table is first analysed. */
const reltuples = async (db: Db) =>
  (await db.query<{ n: number }>(`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'events'`))[0]!
    .n;

describe('planner statistics on the embedded store', () => {
  it('analyses a store never analysed once it holds enough events, and again after enough new ones', async () => {
    const { db, cleanup } = await freshDb(embedded);
    try {
      expect(await reltuples(db)).toBe(-1);
      // Too small: statistics of nearly empty tables would mislead the planner as they fill up.
      await new StatisticsKeeper(db, 10, 100).close();
      expect(await reltuples(db)).toBe(-1);
      const keeper = new StatisticsKeeper(db, 10, 100);
      keeper.committed(60);
      await keeper.close();
      expect(await reltuples(db)).toBe(-1);
      keeper.committed(60);
      await keeper.close();
      expect(await reltuples(db)).toBe(0);
      // As a store that was never analysed, but large enough: analysed at start.
      await db.query(`UPDATE pg_class SET reltuples = -1 WHERE relname = 'events'`);
      expect(await reltuples(db)).toBe(-1);
      const large = new StatisticsKeeper(db, 500, 100);
      await large.close();
      expect(await reltuples(db)).toBeGreaterThanOrEqual(0);
    } finally {
      await cleanup();
    }
  });
});
