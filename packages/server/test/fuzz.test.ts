import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';

// Events that pass lenient validation but carry arbitrary content where producers put arbitrary content:
// facets of any shape under any key (standard keys included), odd names, extreme times, parents and
// column lineage pointing anywhere. The server must store each or reject it with 4xx, never fail with 5xx.
const name = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom('a', 'b', 'x.y', 's3://b/k', '"', '\u0000z'),
);
const facetKey = fc.oneof(
  fc.constantFrom(
    'schema',
    'parent',
    'nominalTime',
    'columnLineage',
    'dataSource',
    'jobType',
    'documentation',
  ),
  fc.constantFrom('sql', 'symlinks', 'lifecycleStateChange', 'dataQualityAssertions', 'ownership', 'storage'),
  fc.string({ maxLength: 8 }),
);
const facets = fc.dictionary(facetKey, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
const time = fc.oneof(
  fc
    .date({
      min: new Date('0001-01-01T00:00:00Z'),
      max: new Date('9999-12-31T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString()),
  fc.constantFrom('2024-01-01T00:00:00', '2024-01-01T00:00:00.123456789+05:30', '2024-02-30T10:00:00Z'),
);
const dataset = fc.record({ namespace: name, name, facets, inputFacets: facets, outputFacets: facets });
const event = fc.record({
  eventType: fc.constantFrom('START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER', undefined),
  eventTime: time,
  producer: fc.constant('https://example.com/fuzz'),
  run: fc.record({ runId: fc.oneof(fc.uuid(), name), facets }),
  job: fc.record({ namespace: name, name, facets }),
  inputs: fc.array(dataset, { maxLength: 3 }),
  outputs: fc.array(dataset, { maxLength: 3 }),
});

describe.each(backends())('ingest of arbitrary content on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('answers every event with 201 or 4xx and keeps serving', async () => {
    const samples = fc.sample(event, { numRuns: 300, seed: 11 });
    const statuses = new Map<number, number>();
    for (const sample of samples) {
      const response = await ctx.request('/api/v1/lineage', {
        method: 'POST',
        body: JSON.stringify(sample),
        headers: { 'content-type': 'application/json' },
      });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status >= 500) expect({ sample, body: await response.text() }).toBeUndefined();
    }
    const batch = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      body: JSON.stringify(fc.sample(event, { numRuns: 200, seed: 12 })),
      headers: { 'content-type': 'application/json' },
    });
    expect(batch.status).toBe(200);
    expect((statuses.get(201) ?? 0) + (statuses.get(422) ?? 0)).toBe(samples.length);
    expect(statuses.get(201) ?? 0).toBeGreaterThan(100);
    expect((await ctx.request('/healthcheck')).status).toBe(200);
    const lineage = await ctx.request('/api/v1/jobs?limit=5');
    expect(lineage.status).toBe(200);
  });
});
