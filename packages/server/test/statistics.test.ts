import { describe, expect, it } from 'vitest';
import { backends, startServer } from './helpers/backends.js';

const embedded = backends().find((backend) => backend.name === 'embedded')!;

describe('planner statistics on the embedded store', () => {
  it('analyses a store that was never analysed, soon after start', async () => {
    const ctx = await startServer(embedded);
    try {
      const reltuples = async () =>
        (
          await ctx.server.db.query<{ n: number }>(
            `SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'dataset_sightings'`,
          )
        )[0]!.n;
      const deadline = Date.now() + 10_000;
      while ((await reltuples()) < 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await reltuples()).toBeGreaterThanOrEqual(0);
    } finally {
      await ctx.stop();
    }
  });
});
