import { appendFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSpoolQueue } from './spool.js';

describe('the spool queue', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'openlineage-spool-queue-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps what was appended and not acked across a reopen, in order', async () => {
    const spool = openSpoolQueue({ dir, segmentBytes: 64 });
    const texts = Array.from({ length: 50 }, (_, i) => `{"n":${i}}`);
    // Appends made together share a flush and keep their order.
    expect(await Promise.all([spool.append(texts.slice(0, 20)), spool.append(texts.slice(20))])).toEqual([
      true,
      true,
    ]);
    expect(spool.depth).toBe(50);
    expect(spool.peek(3)).toEqual(texts.slice(0, 3));
    await spool.ack(30);
    expect(spool.peek(100)).toEqual(texts.slice(30));
    // Nothing is closed: as after SIGKILL.
    const again = openSpoolQueue({ dir, segmentBytes: 64 });
    expect(again.depth).toBe(20);
    expect(again.peek(100)).toEqual(texts.slice(30));
    expect(await again.append(['{"n":50}'])).toBe(true);
    await again.ack(20);
    expect(again.peek(5)).toEqual(['{"n":50}']);
    // Segments wholly acked are deleted.
    expect(readdirSync(dir).filter((f) => f.endsWith('.ndjson')).length).toBeLessThan(5);
    await again.close();
    await spool.close();
  });

  it('cuts off a line torn by a crash and refuses appends past its size', async () => {
    const spool = openSpoolQueue({ dir, maxBytes: 2048 });
    expect(await spool.append(['{"a":1}'])).toBe(true);
    await spool.close();
    const segment = readdirSync(dir).find((f) => f.endsWith('.ndjson'))!;
    appendFileSync(path.join(dir, segment), '{"torn":');
    const reopened = openSpoolQueue({ dir, maxBytes: 2048 });
    expect(reopened.peek(10)).toEqual(['{"a":1}']);
    expect(await reopened.append(['x'.repeat(3000)])).toBe(false);
    expect(await reopened.append(['{"b":2}'])).toBe(true);
    expect(reopened.peek(10)).toEqual(['{"a":1}', '{"b":2}']);
    await reopened.close();
  });
});
