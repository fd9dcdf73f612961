import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EmitErrorContext } from './client.js';
import { createClient } from './client.js';
import { runEvent } from './events.js';
import { sqlJobFacet, tagsJobFacet } from './generated/facet-builders.js';
import type { RunEvent } from './generated/model.js';
import type { LineageServer } from './test-support/lineage-server.js';
import { closedPort, startLineageServer } from './test-support/lineage-server.js';
import { createInMemoryTransport } from './transports/in-memory-transport.js';
import type { EmitResult, Transport } from './transports/transport.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'openlineage-client-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const noEnv = () => ({ env: {}, cwd: dir, homeDir: dir });
const event = (name = 'j', eventType: RunEvent['eventType'] = 'START', runId?: string): RunEvent =>
  runEvent({ eventType, job: { namespace: 'n', name }, ...(runId === undefined ? {} : { run: { runId } }) });

describe('createClient transport resolution', () => {
  it('falls back to the console with a warning', () => {
    const warnings: string[] = [];
    const client = createClient({ sources: noEnv(), onWarning: (w) => warnings.push(w) });
    expect(warnings[0]).toContain('no transport configured');
    expect('emitBatch' in client.transport).toBe(false);
  });

  it('uses OPENLINEAGE_URL, OPENLINEAGE_ENDPOINT and OPENLINEAGE_API_KEY', async () => {
    const server = await startLineageServer();
    try {
      const client = createClient({
        sources: {
          env: {
            OPENLINEAGE_URL: server.url,
            OPENLINEAGE_ENDPOINT: 'custom/lineage',
            OPENLINEAGE_API_KEY: 'K',
          },
          cwd: dir,
          homeDir: dir,
        },
      });
      await client.emit(event());
      expect(server.requests.map((r) => [r.url, r.headers.authorization])).toEqual([
        ['/custom/lineage', 'Bearer K'],
      ]);
      await client.close(1000);
    } finally {
      await server.close();
    }
  });

  it('uses noop when OPENLINEAGE_DISABLED=true, even with an explicit transport', async () => {
    const memory = createInMemoryTransport();
    const client = createClient({
      transport: memory,
      sources: { env: { OPENLINEAGE_DISABLED: 'true' }, cwd: dir, homeDir: dir },
    });
    await client.emit(event());
    expect(memory.events).toHaveLength(0);
    expect(client.stats().accepted).toBe(1);
  });

  it('throws once at construction for bad configuration', () => {
    expect(() => createClient({ sources: noEnv(), config: { transport: { type: 'http' } } })).toThrow(
      /transport\.url: is required/,
    );
  });
});

describe('client.emit', () => {
  it('never throws into the caller, even when the transport and the hook throw', async () => {
    const errors: Error[] = [];
    const client = createClient({
      sources: noEnv(),
      transport: {
        emit: () => {
          throw new Error('transport bug');
        },
      },
      onError: (error) => {
        errors.push(error);
        throw new Error('hook bug');
      },
    });
    await expect(client.emit(event())).resolves.toBeUndefined();
    await client.flush(1000);
    expect(errors.map((e) => e.message)).toEqual(['transport bug']);
    expect(client.stats()).toMatchObject({ emitted: 1, undelivered: 1, dropped: 1, accepted: 0 });
  });

  it('returns within emitTimeoutMs when the transport hangs, and counts it', async () => {
    const client = createClient({
      sources: noEnv(),
      transport: { emit: () => new Promise<EmitResult>(() => undefined) },
      emitTimeoutMs: 50,
      onError: () => undefined,
    });
    const started = Date.now();
    await client.emit(event());
    expect(Date.now() - started).toBeLessThan(3000);
    expect(client.stats().timedOut).toBe(1);
    expect(await client.close(50)).toBe(false);
  });

  it('bounds memory: beyond maxPendingEmits events are undelivered, not queued', async () => {
    const contexts: EmitErrorContext[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const memory = createInMemoryTransport();
    const client = createClient({
      sources: noEnv(),
      transport: { emit: async (e) => (await gate, memory.emit(e)) },
      maxPendingEmits: 2,
      emitTimeoutMs: 10,
      onError: (_error, context) => contexts.push(context),
    });
    for (const name of ['a', 'b', 'c', 'd']) await client.emit(event(name));
    release();
    expect(await client.flush(5000)).toBe(true);
    expect(memory.runEvents().map((e) => e.job.name)).toEqual(['a', 'b']);
    expect(contexts.map((c) => [c.reason, (c.events[0] as RunEvent).job.name])).toEqual([
      ['overflow', 'c'],
      ['overflow', 'd'],
    ]);
  });

  it('keeps the events of one run in order although emit() returned before delivery', async () => {
    const delivered: string[] = [];
    let first = true;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const client = createClient({
      sources: noEnv(),
      emitTimeoutMs: 5,
      transport: {
        emit: async (e) => {
          // The first delivery (the START) is held until the COMPLETE is emitted; it must still come after it.
          if (first) {
            first = false;
            await held;
          }
          delivered.push((e as RunEvent).eventType!);
          return { status: 'success' };
        },
      },
    });
    const runId = '0190b6a2-5c3e-7a41-9d2f-6c0e8b1f2a3d';
    await client.emit(event('j', 'START', runId));
    await client.emit(event('j', 'COMPLETE', runId));
    expect(delivered).toEqual([]);
    release();
    expect(await client.flush(5000)).toBe(true);
    expect(delivered).toEqual(['START', 'COMPLETE']);
  });

  it('spools undelivered events to a file, up to maxBytes, then drops them', async () => {
    const spoolFile = path.join(dir, 'spool', 'openlineage.ndjson');
    const contexts: EmitErrorContext[] = [];
    const client = createClient({
      sources: noEnv(),
      transport: { emit: () => Promise.resolve({ status: 'retryable', error: new Error('backend down') }) },
      spool: { path: spoolFile, maxBytes: 2000 },
      onError: (_error, context) => contexts.push(context),
    });
    const first = event('first');
    await client.emit(first);
    await client.emit(event('x'.repeat(3000)));
    await client.flush(1000);
    const lines = (await readFile(spoolFile, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([first]);
    expect(contexts.map((c) => c.outcome)).toEqual(['spooled', 'dropped']);
    expect(client.stats()).toMatchObject({ undelivered: 2, spooled: 1, dropped: 1 });
  });

  it('applies hygiene, YAML facet deny-list, filters and environment variables before sending', async () => {
    const memory = createInMemoryTransport();
    const client = createClient({
      transport: memory,
      sources: { env: { TEAM: 'data', DB_PASSWORD: 'hunter2' }, cwd: dir, homeDir: dir },
      config: {
        facets: {
          environment_variables: ['TEAM', 'DB_PASSWORD', 'MISSING'],
          sql: { disabled: false },
          debug: { disabled: true },
        },
        filters: [
          { type: 'exact', match: 'skip_me' },
          { type: 'regex', regex: 'tmp_.*' },
        ],
      },
      hygiene: { maxSqlLength: 10 },
    });
    const sent = runEvent({
      eventType: 'START',
      job: {
        namespace: 'n',
        name: 'load',
        facets: {
          sql: sqlJobFacet({ query: 'select * from a_very_long_table' }),
          debug: { _producer: 'https://x', _schemaURL: 'https://y', dump: 'big' },
        },
      },
    });
    await client.emit(sent);
    await client.emit(event('skip_me'));
    await client.emit(event('tmp_123'));
    await client.emit(event('not_tmp_123'));
    const [out] = memory.runEvents();
    expect(out!.job.facets!.sql!.query).toBe('select * f');
    expect(out!.job.facets!.debug).toBeUndefined();
    expect(out!.run.facets!.environmentVariables!.environmentVariables).toEqual([
      { name: 'TEAM', value: 'data' },
      { name: 'DB_PASSWORD', value: '***' },
    ]);
    expect(sent.job.facets!.sql!.query).toBe('select * from a_very_long_table');
    expect(memory.runEvents().map((e) => e.job.name)).toEqual(['load', 'not_tmp_123']);
    expect(client.stats()).toMatchObject({ emitted: 4, filtered: 2, accepted: 2, facetsRemoved: 1 });
  });

  it('applies the named rules of openlineage.yml (hygiene.rules), in the format of the server redaction config', async () => {
    const memory = createInMemoryTransport();
    const client = createClient({
      transport: memory,
      sources: noEnv(),
      config: {
        hygiene: {
          rules: [
            { name: 'emails', type: 'mask', builtin: 'email', replacement: '<email>' },
            { name: 'sql-literals', type: 'maskSqlLiterals' },
          ],
        },
      },
    });
    await client.emit(
      runEvent({
        eventType: 'START',
        job: {
          namespace: 'n',
          name: 'load',
          facets: { sql: sqlJobFacet({ query: "select * from users where mail = 'ana@corp.example'" }) },
        },
      }),
    );
    expect(memory.runEvents()[0]!.job.facets!.sql!.query).toBe('select * from users where mail = ?');
    expect(() =>
      createClient({ transport: memory, sources: noEnv(), config: { hygiene: { rules: [{ name: 'x' }] } } }),
    ).toThrow(/hygiene\.rules\[0\]\.type: must be dropFacets/);
  });

  it('treats emit after close as undelivered', async () => {
    const contexts: EmitErrorContext[] = [];
    const client = createClient({
      sources: noEnv(),
      transport: createInMemoryTransport(),
      onError: (_e, c) => contexts.push(c),
    });
    expect(await client.close()).toBe(true);
    await client.emit(event());
    await client.flush(100);
    expect(contexts.map((c) => c.reason)).toEqual(['closed']);
  });
});

describe('client over HTTP with the backend down', () => {
  let server: LineageServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('retries, loses nothing when the backend comes back, and never blocks the caller beyond the bound', async () => {
    const port = await closedPort();
    let retries = 0;
    const client = createClient({
      sources: noEnv(),
      config: { transport: { type: 'http', url: `http://127.0.0.1:${port}`, timeout: 2 } },
      // A retry window of several seconds, so a slow machine still brings the backend back within it.
      retryDefaults: { retries: 100, baseDelayMs: 20, maxDelayMs: 100, onRetry: () => void retries++ },
      emitTimeoutMs: 50,
      onError: () => undefined,
    });
    const sent = [event('a', 'START', '0190b6a2-5c3e-7a41-9d2f-6c0e8b1f2a3d'), event('b')];
    const started = Date.now();
    for (const e of sent) await client.emit(e);
    expect(Date.now() - started).toBeLessThan(3000);
    // The backend comes back only once the client has retried against the closed port.
    await vi.waitFor(() => expect(retries).toBeGreaterThanOrEqual(2), { timeout: 5000 });
    server = await startLineageServer(port);
    expect(await client.flush(10_000)).toBe(true);
    expect(server.requests.map((r) => (r.body as RunEvent).job.name).sort()).toEqual(['a', 'b']);
    expect(client.stats()).toMatchObject({ accepted: 2, undelivered: 0 });
    expect(await client.close(1000)).toBe(true);
  });

  it('with async_http, queues without waiting and spools what could not be sent at close', async () => {
    const port = await closedPort();
    const spoolFile = path.join(dir, 'spool.ndjson');
    const client = createClient({
      sources: noEnv(),
      config: {
        transport: { type: 'async_http', url: `http://127.0.0.1:${port}`, batch: true, flush_interval: 0.01 },
      },
      retryDefaults: { retries: 1, baseDelayMs: 10 },
      spool: { path: spoolFile },
      onError: () => undefined,
    });
    await client.emit(event('a'));
    await client.emit(event('b'));
    expect(await client.close(5000)).toBe(true);
    const spooled = (await readFile(spoolFile, 'utf8')).trimEnd().split('\n');
    expect(spooled.map((l) => (JSON.parse(l) as RunEvent).job.name)).toEqual(['a', 'b']);
    expect(client.stats()).toMatchObject({ accepted: 2, undelivered: 2, spooled: 2 });
  });
});

describe('a custom transport in ten lines', () => {
  it('works with the client', async () => {
    const lines: string[] = [];
    const transport: Transport = {
      emit(e) {
        lines.push(JSON.stringify(e));
        return Promise.resolve({ status: 'success' });
      },
    };
    const client = createClient({ transport, sources: noEnv() });
    await client.emit(event());
    expect(lines).toHaveLength(1);
  });
});

describe('tags from configuration', () => {
  it('adds job and run tags, overriding event tags case-insensitively', async () => {
    const memory = createInMemoryTransport();
    const client = createClient({
      transport: memory,
      sources: noEnv(),
      config: { tags: { job: { Team: 'data', tier: 1 }, run: { env: 'prod' } } },
    });
    const sent = runEvent({
      eventType: 'START',
      job: {
        namespace: 'n',
        name: 'j',
        facets: {
          tags: tagsJobFacet({
            tags: [
              { key: 'team', value: 'old', source: 'INTEGRATION' },
              { key: 'keep', value: 'k' },
            ],
          }),
        },
      },
    });
    await client.emit(sent);
    const [out] = memory.runEvents();
    expect(out!.job.facets!.tags!.tags).toEqual([
      { key: 'keep', value: 'k' },
      { key: 'team', value: 'data', source: 'USER' },
      { key: 'tier', value: '1', source: 'USER' },
    ]);
    expect(out!.run.facets!.tags!.tags).toEqual([{ key: 'env', value: 'prod', source: 'USER' }]);
  });

  it('rejects malformed tags at construction', () => {
    expect(() =>
      createClient({
        sources: noEnv(),
        transport: createInMemoryTransport(),
        config: { tags: { job: ['x'] } },
      }),
    ).toThrow(/tags\.job: must be a mapping/);
  });
});
