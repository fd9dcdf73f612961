import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';
import { parseExposition } from './helpers/prometheus.js';
import { runEvent, T0 } from './read-scenario.js';

const [embedded] = backends();

describe('GET /metrics', () => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    ctx = await startApp(embedded!);
  });
  afterAll(async () => {
    await ctx?.stop();
  });
  const scrape = async () => {
    const response = await ctx.request('/metrics');
    expect(response.headers.get('content-type')).toContain('text/plain');
    return parseExposition(await response.text());
  };
  const sum = (samples: Map<string, number>, prefix: string) =>
    [...samples].filter(([key]) => key.startsWith(prefix)).reduce((total, [, value]) => total + value, 0);

  it('parses as text exposition, and its series move under load', async () => {
    const before = await scrape();
    for (const series of ['headwater_ingest_queue_events', 'process_cpu_user_seconds_total'])
      expect(
        [...before.keys()].some((key) => key.startsWith(series)),
        series,
      ).toBe(true);
    const event = (i: number) =>
      runEvent({
        eventType: 'COMPLETE',
        time: T0 + i,
        runId: `0190d3a2-0000-7000-8000-${String(i).padStart(12, '0')}`,
        job: `job_${i % 7}`,
        outputs: [{ namespace: 'm', name: `d${i % 5}` }],
      });
    // 20 concurrent single posts, 4 batches of 50, one invalid event and one duplicate.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ctx.request('/api/v1/lineage', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(event(i)),
        }),
      ),
    );
    for (let b = 0; b < 4; b++) {
      await ctx.request('/api/v1/lineage/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(Array.from({ length: 50 }, (_, i) => event(100 + b * 50 + i))),
      });
    }
    await ctx.request('/api/v1/lineage', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"eventType":"START"}',
    });
    await ctx.request('/api/v1/lineage', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event(0)),
    });
    const after = await scrape();
    expect(
      [...after.keys()].some((key) => key.startsWith('headwater_http_request_duration_seconds_bucket')),
    ).toBe(true);
    const producer = 'producer="https://github.com/headwater/test"';
    const stored = after.get(`headwater_ingest_events_total{outcome="stored",${producer}}`) ?? 0;
    const duplicate = after.get(`headwater_ingest_events_total{outcome="duplicate",${producer}}`) ?? 0;
    // 221 valid events, one of them sent twice.
    expect(stored + duplicate).toBe(221);
    expect(stored).toBe(220);
    expect(after.get('headwater_ingest_events_total{outcome="invalid",producer="unknown"}')).toBe(1);
    expect(after.get('headwater_ingest_commit_group_events_sum')).toBe(stored + duplicate);
    expect(after.get('headwater_ingest_commit_group_events_count')).toBeGreaterThanOrEqual(5);
    expect(after.get('headwater_ingest_commit_group_events_count')).toBeLessThanOrEqual(24);
    expect(sum(after, 'headwater_store_query_duration_seconds_count')).toBeGreaterThan(
      sum(before, 'headwater_store_query_duration_seconds_count'),
    );
    expect(
      after.get(
        'headwater_http_request_duration_seconds_count{method="POST",route="/api/v1/lineage",status_code="201"}',
      ),
    ).toBe(21);
    expect(
      after.get(
        'headwater_http_request_duration_seconds_count{method="POST",route="/api/v1/lineage",status_code="422"}',
      ),
    ).toBe(1);
  });

  it('lets other parts register series into the same registry', async () => {
    const lag = ctx.server.metrics.gauge({ name: 'headwater_test_lag_seconds', help: 'A test series' });
    lag.set(4.5);
    expect((await scrape()).get('headwater_test_lag_seconds')).toBe(4.5);
  });
});
