import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEvent } from '../events.js';
import type { RunEvent } from '../generated/model.js';
import type { LineageServer } from '../test-support/lineage-server.js';
import { closedPort, startLineageServer } from '../test-support/lineage-server.js';
import { HttpTransportError, createHttpTransport, joinUrl, parseRetryAfter } from './http-transport.js';
import type { RetryAttempt } from './retry.js';
import { withRetry } from './retry.js';
import type { Transport } from './transport.js';

const event = (name = 'job'): RunEvent => runEvent({ eventType: 'START', job: { namespace: 'test', name } });
/** Records waits instead of sleeping, so back-off is observable and the tests take no real time. */
const recordingSleep = (log: number[]) => (ms: number) => {
  log.push(ms);
  return Promise.resolve();
};

let server: LineageServer;
const transports: Transport[] = [];
const track = <T extends Transport>(t: T): T => {
  transports.push(t);
  return t;
};

beforeEach(async () => {
  server = await startLineageServer();
});
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close?.(1000) ?? Promise.resolve(true)));
  await server.close();
});

describe('createHttpTransport', () => {
  it('POSTs the event as JSON to url + endpoint with auth and custom headers', async () => {
    const transport = track(
      createHttpTransport({
        url: `${server.url}/`,
        auth: { type: 'api_key', apiKey: 'secret-key' },
        headers: { 'X-Team': 'data', Accept: 'application/x-custom' },
        urlParams: { source: 'test' },
      }),
    );
    const sent = event();
    expect(await transport.emit(sent)).toEqual({ status: 'success' });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/api/v1/lineage?source=test');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers.authorization).toBe('Bearer secret-key');
    expect(request!.headers['x-team']).toBe('data');
    expect(request!.headers.accept).toBe('application/x-custom');
    expect(request!.body).toEqual(sent);
  });

  it('gzips the body when asked', async () => {
    const transport = track(
      createHttpTransport({ url: server.url, compression: 'gzip', endpoint: '/custom/path' }),
    );
    const sent = event();
    expect((await transport.emit(sent)).status).toBe('success');
    expect(server.requests[0]!.headers['content-encoding']).toBe('gzip');
    expect(server.requests[0]!.url).toBe('/custom/path');
    expect(server.requests[0]!.body).toEqual(sent);
  });

  it('asks a token provider before every request', async () => {
    let calls = 0;
    const transport = track(
      createHttpTransport({
        url: server.url,
        auth: { type: 'bearer', token: () => Promise.resolve(`t${++calls}`) },
      }),
    );
    await transport.emit(event());
    await transport.emit(event());
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer t1', 'Bearer t2']);
  });

  it('reports a failing token provider as retryable, without sending', async () => {
    const transport = track(
      createHttpTransport({
        url: server.url,
        auth: {
          type: 'bearer',
          token: () => {
            throw new Error('vault sealed');
          },
        },
      }),
    );
    const result = await transport.emit(event());
    expect(result.status).toBe('retryable');
    expect(result.status !== 'success' && result.error.message).toContain('vault sealed');
    expect(server.requests).toHaveLength(0);
  });

  it('keeps the connection alive between events', async () => {
    const transport = track(createHttpTransport({ url: server.url }));
    for (let i = 0; i < 5; i++) expect((await transport.emit(event())).status).toBe('success');
    expect(server.requests).toHaveLength(5);
    expect(server.connections()).toBe(1);
  });

  it('reports 4xx as failure with the status and the start of the response body', async () => {
    server.reply({ status: 422, body: '{"error":"job.name is required"}' });
    const transport = track(createHttpTransport({ url: server.url }));
    const result = await transport.emit(event());
    expect(result.status).toBe('failure');
    if (result.status !== 'failure') return;
    expect(result.error).toBeInstanceOf(HttpTransportError);
    expect((result.error as HttpTransportError).statusCode).toBe(422);
    expect(result.error.message).toContain('422');
    expect(result.error.message).toContain('job.name is required');
  });

  it('reports 429 and 5xx as retryable and reads Retry-After', async () => {
    server.reply({ status: 429, headers: { 'Retry-After': '3' } }, { status: 503 }, { status: 501 });
    const transport = track(createHttpTransport({ url: server.url }));
    expect(await transport.emit(event())).toMatchObject({ status: 'retryable', retryAfterMs: 3000 });
    const second = await transport.emit(event());
    expect(second.status).toBe('retryable');
    expect('retryAfterMs' in second).toBe(false);
    expect((await transport.emit(event())).status).toBe('failure');
  });

  it('reports a backend that does not answer in time as retryable', async () => {
    server.reply('hang');
    const transport = track(createHttpTransport({ url: server.url, timeoutMs: 200 }));
    const started = Date.now();
    const result = await transport.emit(event());
    expect(result.status).toBe('retryable');
    expect(result.status !== 'success' && result.error.message).toContain('no response within 200 ms');
    // Generous bound: the timeout must fire, not the test's.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a refused connection as retryable', async () => {
    const transport = track(createHttpTransport({ url: `http://127.0.0.1:${await closedPort()}` }));
    const result = await transport.emit(event());
    expect(result.status).toBe('retryable');
    expect(result.status !== 'success' && result.error.message).toContain('ECONNREFUSED');
  });

  it('reports an event that cannot be serialised as failure', async () => {
    const transport = track(createHttpTransport({ url: server.url }));
    const circular = event() as RunEvent & { self?: unknown };
    circular.self = circular;
    const result = await transport.emit(circular);
    expect(result.status).toBe('failure');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses to emit after close()', async () => {
    const transport = createHttpTransport({ url: server.url });
    await transport.close!(100);
    expect((await transport.emit(event())).status).toBe('failure');
  });

  it('throws at construction for a bad URL or timeout', () => {
    expect(() => createHttpTransport({ url: 'not a url' })).toThrow(/not a valid URL/);
    expect(() => createHttpTransport({ url: 'ftp://host' })).toThrow(/http:\/\/ or https:\/\//);
    expect(() => createHttpTransport({ url: server.url, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });

  describe('batch endpoint', () => {
    it('POSTs arrays to /api/v1/lineage/batch and reads partial_success', async () => {
      server.reply(
        { status: 204 },
        {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            status: 'partial_success',
            failed_events: [
              { index: 0, reason: 'bad runId', retriable: false },
              { index: 2, reason: 'storage busy', retriable: true },
            ],
          }),
        },
      );
      const transport = track(createHttpTransport({ url: server.url, batch: true }));
      const events = [event('a'), event('b'), event('c')];
      expect(await transport.emitBatch!(events)).toEqual({ status: 'success' });
      expect(server.requests[0]!.url).toBe('/api/v1/lineage/batch');
      expect(server.requests[0]!.body).toEqual(events);
      const result = await transport.emitBatch!(events);
      expect(result).toMatchObject({ status: 'partial', retryable: [2], failed: [0] });
      expect(result.status === 'partial' && result.error.message).toContain('bad runId');
    });

    it('is only offered when configured', () => {
      expect('emitBatch' in track(createHttpTransport({ url: server.url }))).toBe(false);
    });
  });
});

describe('http transport with withRetry', () => {
  it('retries 503 with exponential back-off and jitter, then succeeds', async () => {
    server.reply({ status: 503 }, { status: 503 }, { status: 502 });
    const waits: number[] = [];
    const attempts: RetryAttempt[] = [];
    const transport = track(
      withRetry(createHttpTransport({ url: server.url }), {
        baseDelayMs: 100,
        random: () => 0.5,
        sleep: recordingSleep(waits),
        onRetry: (attempt) => attempts.push(attempt),
      }),
    );
    const sent = event();
    expect(await transport.emit(sent)).toEqual({ status: 'success' });
    // delay = d/2 + random * d/2 with d = 100 * 2^(attempt-1)
    expect(waits).toEqual([75, 150, 300]);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts[0]!.error.message).toContain('503');
    expect(server.requests).toHaveLength(4);
    expect(server.requests.every((r) => JSON.stringify(r.body) === JSON.stringify(sent))).toBe(true);
  });

  it('waits at least Retry-After on 429', async () => {
    server.reply({ status: 429, headers: { 'Retry-After': '2' } });
    const waits: number[] = [];
    const transport = track(
      withRetry(createHttpTransport({ url: server.url }), { baseDelayMs: 10, sleep: recordingSleep(waits) }),
    );
    expect((await transport.emit(event())).status).toBe('success');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(2000);
  });

  it('does not retry 4xx', async () => {
    server.reply({ status: 400 });
    const waits: number[] = [];
    const transport = track(
      withRetry(createHttpTransport({ url: server.url }), { sleep: recordingSleep(waits) }),
    );
    expect((await transport.emit(event())).status).toBe('failure');
    expect(waits).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('gives up after the configured retries and reports retryable', async () => {
    server.reply(...Array.from({ length: 10 }, () => ({ status: 500 })));
    const waits: number[] = [];
    const transport = track(
      withRetry(createHttpTransport({ url: server.url }), { retries: 2, sleep: recordingSleep(waits) }),
    );
    expect((await transport.emit(event())).status).toBe('retryable');
    expect(server.requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
  });

  it('loses nothing when the backend comes back within the retry window', async () => {
    const port = await closedPort();
    let revived: LineageServer | undefined;
    const waits: number[] = [];
    const transport = track(
      withRetry(createHttpTransport({ url: `http://127.0.0.1:${port}`, timeoutMs: 2000 }), {
        retries: 5,
        sleep: async (ms) => {
          waits.push(ms);
          // The backend comes back up before the third attempt.
          if (waits.length === 2) revived = await startLineageServer(port);
        },
      }),
    );
    const sent = [event('a'), event('b')];
    const results = [await transport.emit(sent[0]!), await transport.emit(sent[1]!)];
    try {
      expect(results).toEqual([{ status: 'success' }, { status: 'success' }]);
      expect(waits).toHaveLength(2);
      expect(revived!.requests.map((r) => r.body)).toEqual(sent);
    } finally {
      await revived?.close();
    }
  });

  it('retries only the retryable events of a partial batch', async () => {
    server.reply({
      status: 200,
      body: JSON.stringify({
        status: 'partial_success',
        failed_events: [
          { index: 1, retriable: true },
          { index: 2, retriable: false },
        ],
      }),
    });
    const waits: number[] = [];
    const transport = track(
      withRetry(createHttpTransport({ url: server.url, batch: true }), { sleep: recordingSleep(waits) }),
    );
    const events = [event('a'), event('b'), event('c')];
    const result = await transport.emitBatch!(events);
    expect(result).toMatchObject({ status: 'partial', retryable: [], failed: [2] });
    expect(server.requests.map((r) => (r.body as RunEvent[]).map((e) => e.job.name))).toEqual([
      ['a', 'b', 'c'],
      ['b'],
    ]);
  });
});

describe('joinUrl and parseRetryAfter', () => {
  it('joins with exactly one slash and keeps a base path', () => {
    expect(joinUrl('http://h:5000', 'api/v1/lineage').href).toBe('http://h:5000/api/v1/lineage');
    expect(joinUrl('http://h:5000/', '/api/v1/lineage').href).toBe('http://h:5000/api/v1/lineage');
    expect(joinUrl('http://h/prefix', 'api/v1/lineage').href).toBe('http://h/prefix/api/v1/lineage');
    expect(joinUrl('http://h/prefix', 'https://other/x').href).toBe('https://other/x');
  });

  it('parses seconds and HTTP dates', () => {
    expect(parseRetryAfter('5')).toBe(5000);
    expect(parseRetryAfter('0.5')).toBe(500);
    const now = Date.parse('2024-01-15T10:00:00Z');
    expect(parseRetryAfter('Mon, 15 Jan 2024 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
