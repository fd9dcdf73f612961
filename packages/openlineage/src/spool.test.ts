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
