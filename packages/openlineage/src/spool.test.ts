import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEvent } from './events.js';
import type { RunEvent } from './generated/model.js';
import { createSpoolWriter, replaySpool } from './spool.js';
import { createInMemoryTransport } from './transports/in-memory-transport.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'openlineage-spool-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
const event = (name: string): RunEvent => runEvent({ eventType: 'START', job: { namespace: 'n', name } });

describe('spool', () => {
  it('replays in order, appends failures back and drops invalid lines', async () => {
    const file = path.join(dir, 'spool.ndjson');
    const writer = createSpoolWriter({ path: file });
    expect(await writer.write([event('a'), event('b'), event('c')])).toBe(true);
    await writeFile(file, 'not json\n[1]\n', { flag: 'a' });
    const transport = createInMemoryTransport({
      respond: (e) =>
        (e as RunEvent).job.name === 'b'
          ? { status: 'retryable', error: new Error('busy') }
          : { status: 'success' },
    });
    expect(await replaySpool(file, transport)).toEqual({ sent: 2, requeued: 1, invalid: 2 });
    expect(transport.runEvents().map((e) => e.job.name)).toEqual(['a', 'c']);
    const left = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(left.map((l) => (JSON.parse(l) as RunEvent).job.name)).toEqual(['b']);
    expect((await readdir(dir)).sort()).toEqual(['spool.ndjson']);
  });

  it('does nothing when there is no spool file', async () => {
    expect(await replaySpool(path.join(dir, 'none.ndjson'), createInMemoryTransport())).toEqual({
      sent: 0,
      requeued: 0,
      invalid: 0,
    });
  });

  it('refuses writes beyond maxBytes without throwing', async () => {
    const writer = createSpoolWriter({ path: path.join(dir, 'small.ndjson'), maxBytes: 10 });
    expect(await writer.write([event('a')])).toBe(false);
    const blocked = createSpoolWriter({ path: path.join(dir, 'small.ndjson', 'below-a-missing-dir.ndjson') });
    await writeFile(path.join(dir, 'small.ndjson'), '');
    expect(await blocked.write([event('a')])).toBe(false);
  });
});

describe('the spool file', () => {
  it('keeps the order of writes made together, and keeps a line torn by a crash off the next event', async () => {
    const file = path.join(dir, 'spool.ndjson');
    await writeFile(file, '{"eventType":"START","torn');
    const writer = createSpoolWriter({ path: file });
    const written = await Promise.all(['a', 'b', 'c'].map((name) => writer.write([event(name)])));
    expect(written).toEqual([true, true, true]);
    const transport = createInMemoryTransport();
    expect(await replaySpool(file, transport)).toEqual({ sent: 3, requeued: 0, invalid: 1 });
    expect(transport.runEvents().map((e) => e.job.name)).toEqual(['a', 'b', 'c']);
  });

  it('counts what is already in the file, and what is being written, against maxBytes', async () => {
    const file = path.join(dir, 'bounded.ndjson');
    const size = Buffer.byteLength(`${JSON.stringify(event('a'))}\n`);
    await writeFile(file, `${JSON.stringify(event('a'))}\n`);
    const writer = createSpoolWriter({ path: file, maxBytes: size * 3 });
    const written = await Promise.all(['b', 'c', 'd'].map((name) => writer.write([event(name)])));
    expect(written).toEqual([true, true, false]);
    expect((await readFile(file, 'utf8')).trimEnd().split('\n')).toHaveLength(3);
  });
});
