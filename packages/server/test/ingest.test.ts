import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';
import { conformanceFiles, hasConformance, readEvents } from './helpers/conformance.js';

function runEvent(overrides: Record<string, unknown> = {}) {
  return {
    eventType: 'START',
    eventTime: '2024-05-01T10:00:00.000Z',
    producer: 'https://example.com/test',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: randomUUID() },
    job: { namespace: 'test', name: 'job' },
    inputs: [{ namespace: 'db', name: 'in' }],
    outputs: [{ namespace: 'db', name: 'out' }],
    ...overrides,
  };
}

describe.each(backends())('ingest on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const api = (path: string) => `/api/v1${path}`;
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    ctx.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const eventCount = async () => {
    const body = (await (
      await ctx.request(api('/events/lineage?limit=0&kind=run&kind=dataset&kind=job'))
    ).json()) as { totalCount: number };
    return body.totalCount;
  };

  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it.skipIf(!hasConformance())(
    'accepts every real conformance event and serves it back unchanged',
    async () => {
      const files = conformanceFiles(['valid', 'facet-invalid', 'invalid']).filter(
        (file) => file !== 'fluentd-proxy/event_no_run_id.json',
      );
      expect(files.length).toBeGreaterThan(100);
      const sent: unknown[] = [];
      for (const file of files) {
        for (const event of readEvents(file)) {
          const response = await post(api('/lineage'), JSON.stringify(event));
          expect({ file, status: response.status, body: await response.text() }).toEqual({
            file,
            status: 201,
            body: '',
          });
          sent.push(event);
        }
      }
      const stored = (await (
        await ctx.request(
          api(`/events/lineage?limit=1000&after=1900-01-01T00:00:00Z&kind=run&kind=dataset&kind=job`),
        )
      ).json()) as {
        events: unknown[];
        totalCount: number;
      };
      const key = (event: unknown) => JSON.stringify(event);
      // Some fixtures are the same event in two groups; identical events are stored once.
      const distinct = new Set(sent.map(key));
      expect(stored.totalCount).toBe(distinct.size);
      expect(new Set(stored.events.map(key))).toEqual(distinct);
    },
  );

  it.skipIf(!hasConformance())(
    'rejects the event without a runId with 422 naming the path, and stores nothing',
    async () => {
      const before = await eventCount();
      const [event] = readEvents('fluentd-proxy/event_no_run_id.json');
      const response = await post(api('/lineage'), JSON.stringify(event));
      expect(response.status).toBe(422);
      const body = (await response.json()) as { errors: string[] };
      expect(body.errors.some((error) => error.startsWith('$.run.runId'))).toBe(true);
      expect(await eventCount()).toBe(before);
    },
  );

  it('stores an identical event once', async () => {
    const before = await eventCount();
    const text = JSON.stringify(runEvent());
    for (let i = 0; i < 3; i++) expect((await post(api('/lineage'), text)).status).toBe(201);
    const batch = await post(api('/lineage/batch'), `[${text},${text}]`);
    expect(await batch.json()).toMatchObject({
      status: 'success',
      summary: { received: 2, successful: 2, failed: 0 },
    });
    expect(await eventCount()).toBe(before + 1);
  });

  it('answers bad input with a clear error and changes nothing', async () => {
    const before = await eventCount();
    const malformed = await post(api('/lineage'), '{"eventTime": ');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 400, error: 'MALFORMED_JSON' });

    const missing = await post(
      api('/lineage'),
      JSON.stringify({ eventTime: '2024-01-01T00:00:00Z', run: {}, job: {} }),
    );
    expect(missing.status).toBe(422);
    const { errors } = (await missing.json()) as { errors: string[] };
    expect(errors.map((error) => error.split(':')[0]).sort()).toEqual(
      ['$.job.name', '$.job.namespace', '$.producer', '$.run.runId'].sort(),
    );

    const wrongType = await post(api('/lineage'), JSON.stringify(runEvent()), {
      'content-type': 'text/plain',
    });
    expect(wrongType.status).toBe(415);

    const huge = await post(
      api('/lineage'),
      JSON.stringify(runEvent({ padding: 'x'.repeat(11 * 1024 * 1024) })),
    );
    expect(huge.status).toBe(413);

    for (const body of ['null', '[]', '"text"', '42', '{}', '{"run":{"runId":1}}']) {
      const response = await post(api('/lineage'), body);
      expect({ body, status: response.status }).toEqual({ body, status: 422 });
    }
    expect(await eventCount()).toBe(before);
  });

  it('stores and serves the text the producer sent, byte for byte', async () => {
    const text = JSON.stringify(runEvent({ eventTime: '2031-01-01T00:00:00Z' })).replace(
      '"eventType"',
      '"ratio": 1.0, "name": "caf\\u00e9",\n  "eventType"',
    );
    expect((await post(api('/lineage'), text)).status).toBe(201);
    const served = await (
      await ctx.request(api('/events/lineage?limit=1&after=2030-12-31T00:00:00Z'))
    ).text();
    expect(served).toContain(text);
  });

  it('accepts gzip-compressed events', async () => {
    const before = await eventCount();
    const response = await ctx.request(api('/lineage'), {
      method: 'POST',
      body: gzipSync(JSON.stringify(runEvent())),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(response.status).toBe(201);
    expect(await eventCount()).toBe(before + 1);
  });

  it('refuses an event with an eventType but no run (a RunEvent needs its run), alone and in a batch', async () => {
    const before = await eventCount();
    const { run: _run, ...runless } = runEvent();
    const single = await post(api('/lineage'), JSON.stringify(runless));
    expect(single.status).toBe(422);
    const { errors } = (await single.json()) as { errors: string[] };
    expect(errors).toEqual([
      expect.stringMatching(/^\$\.run: is required: an event with an eventType is a RunEvent/),
    ]);
    const batch = await post(api('/lineage/batch'), JSON.stringify([runEvent(), runless]));
    const body = (await batch.json()) as {
      status: string;
      failed_events: { index: number; reason: string }[];
    };
    expect(body.status).toBe('partial_success');
    expect(
      body.failed_events.map((failure) => [failure.index, failure.reason.split(': is required')[0]]),
    ).toEqual([[1, '$.run']]);
    expect(await eventCount()).toBe(before + 1);
  });

  it('reports partial success of a batch by index, in JSON and NDJSON', async () => {
    const before = await eventCount();
    const good = [runEvent(), runEvent()];
    const bad = { ...runEvent(), producer: undefined };
    const response = await post(api('/lineage/batch'), JSON.stringify([good[0], bad, good[1]]));
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      status: string;
      summary: unknown;
      failed_events: { index: number; reason: string }[];
    };
    expect(body.status).toBe('partial_success');
    expect(body.summary).toEqual({ received: 3, successful: 2, failed: 1, retriable: 0, non_retriable: 1 });
    expect(body.failed_events.map((failure) => failure.index)).toEqual([1]);
    expect(body.failed_events[0]!.reason).toContain('$.producer');

    const ndjson = [runEvent(), runEvent()].map((event) => JSON.stringify(event)).join('\n') + '\n{oops\n';
    const second = await post(api('/lineage/batch'), ndjson, { 'content-type': 'application/x-ndjson' });
    expect(await second.json()).toMatchObject({
      status: 'partial_success',
      summary: { received: 3, successful: 2, failed: 1 },
    });
    expect(await eventCount()).toBe(before + 4);
  });
});
