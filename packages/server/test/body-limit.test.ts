/**
 * A body over --max-body-bytes, sent over a real socket to a `headwater serve` process by the clients a producer
 * uses: Node's fetch (undici) and the TypeScript client's HTTP transport must read the 413, not a broken pipe,
 * so that the producer learns its event is too large instead of retrying it for ever. The pipe broke in about
 * one request in ten against a separate process (never in-process), hence several attempts of each size.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHttpTransport, type RunEvent } from '@headwater/openlineage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ChildServer } from './helpers/child-server.js';

const MAX_BODY_BYTES = 256 * 1024;
const ATTEMPTS = 8;

/** A RunEvent of about `bytes` bytes (the padding is in a custom run facet). */
function eventOf(bytes: number): RunEvent {
  const padding = {
    _producer: 'https://example.com/p',
    _schemaURL: 'https://example.com/p',
    text: 'x'.repeat(bytes),
  };
  return {
    eventType: 'COMPLETE',
    eventTime: '2024-06-01T00:00:00Z',
    producer: 'https://example.com/body-limit-test',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: randomUUID(), facets: { padding } },
    job: { namespace: 'limits', name: 'big' },
  };
}

describe('a body over the limit, over a real socket', () => {
  let dir: string;
  let server: ChildServer;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-body-limit-'));
    server = await spawnServer(['--data-dir', dir, '--max-body-bytes', String(MAX_BODY_BYTES)]);
  }, 90_000);
  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it.each([2, 44, 200])(
    'Node fetch reads 413 for a body %i times the limit, with what to do',
    async (times) => {
      const body = JSON.stringify(eventOf(times * MAX_BODY_BYTES));
      const outcomes: string[] = [];
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        try {
          const response = await fetch(`${server.url}/api/v1/lineage`, {
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json' },
          });
          const { message } = (await response.json()) as { message: string };
          outcomes.push(
            `${response.status} ${message.includes('--max-body-bytes') ? 'says the flag' : message}`,
          );
        } catch (error) {
          const cause = (error as Error & { cause?: { code?: string } }).cause;
          outcomes.push(`${(error as Error).message} (${cause?.code ?? ''})`);
        }
      }
      expect(outcomes).toEqual(outcomes.map(() => '413 says the flag'));
    },
    60_000,
  );

  it('Node fetch reads 413 for a streamed body (no Content-Length)', async () => {
    const text = new TextEncoder().encode(JSON.stringify(eventOf(44 * MAX_BODY_BYTES)));
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let offset = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= text.length) return controller.close();
          controller.enqueue(text.subarray(offset, (offset += 64 * 1024)));
        },
      });
      const response = await fetch(`${server.url}/api/v1/lineage`, {
        method: 'POST',
        body,
        duplex: 'half',
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(413);
      await response.body?.cancel();
    }
  }, 60_000);

  it('the TypeScript client reports it as a failure (not retryable), and the next event goes through', async () => {
    const transport = createHttpTransport({ url: server.url, timeoutMs: 20_000 });
    try {
      const results: string[] = [];
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const result = await transport.emit(eventOf(44 * MAX_BODY_BYTES));
        results.push(
          result.status === 'success'
            ? 'success'
            : `${result.status} ${/answered (\d+)/.exec(result.error.message)?.[1] ?? result.error.message}`,
        );
      }
      expect(results).toEqual(results.map(() => 'failure 413'));
      expect((await transport.emit(eventOf(10))).status).toBe('success');
    } finally {
      await transport.close?.(1000);
    }
  }, 60_000);
});
