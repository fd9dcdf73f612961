import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createForwarder, loadForwardConfig, SpoolFullError, type ForwardedEvent } from './forwarder.js';

type Forwarder = ReturnType<typeof createForwarder>;

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Events of about 200 bytes each. */
const events = (from: number, count: number): ForwardedEvent[] =>
  Array.from({ length: count }, (_, i) => {
    const value = {
      eventType: 'START',
      job: { namespace: 'ns', name: `job_${from + i}` },
      pad: 'x'.repeat(150),
    };
    return { value, text: JSON.stringify(value) };
  });

describe('a forwarder whose sink spool fills', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-forwarder-'));
  });
  /** Closed before their directory goes, even after a failed assertion (a sink may still be writing there). */
  const opened: Forwarder[] = [];
  afterEach(async () => {
    for (const forward of opened.splice(0)) await forward.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Two sinks: an archive that always takes events, and an HTTP endpoint that is down (nothing listens). */
  const forwarder = (whenFull?: string) => {
    const file = path.join(dir, `forward-${whenFull ?? 'default'}.yml`);
    writeFileSync(
      file,
      [
        `spool: { dir: ./spool-${whenFull ?? 'default'}, maxBytesPerSink: 4096${whenFull ? `, whenFull: ${whenFull}` : ''} }`,
        'sinks:',
        `  archive: { type: archive, dir: ./archive-${whenFull ?? 'default'} }`,
        '  down: { type: http, url: "http://127.0.0.1:9" }',
      ].join('\n'),
    );
    const forward = createForwarder(loadForwardConfig(file), {
      log: quiet,
      baseBackoffMs: 50,
      maxBackoffMs: 50,
    });
    opened.push(forward);
    return forward;
  };

  it('refuses new events by default, acknowledging nothing it cannot keep for every sink', async () => {
    const forward = forwarder();
    forward.start();
    let accepted = 0;
    let refusal: unknown;
    for (let batch = 0; batch < 20; batch++) {
      try {
        await forward.accept(events(batch * 5, 5));
      } catch (error) {
        refusal = error;
        break;
      }
      accepted += 5;
      // The archive keeps up, but on a busy machine it can be a batch behind, and its spool was then the one
      // found full: the spool to fill is the down sink's.
      await expect.poll(() => forward.depth('archive')).toBe(0);
    }
    expect(refusal).toBeInstanceOf(SpoolFullError);
    expect((refusal as Error).message).toContain('sink down is full');
    // Everything accepted waits for the sink that is down; nothing refused was half-taken by the other.
    expect(forward.depth('down')).toBe(accepted);
    expect(accepted).toBeGreaterThan(0);
  });

  it('with whenFull: drop, drops the full sink’s copy and goes on taking events for the others', async () => {
    const forward = forwarder('drop');
    for (let batch = 0; batch < 20; batch++) await forward.accept(events(batch * 5, 5));
    expect(forward.depth('down')).toBeLessThan(100);
  });
});
