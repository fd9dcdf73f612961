import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep, untilAborted } from './abortable.js';

describe('waits on a long-lived signal', () => {
  it('leaves no listener behind, however many waits end', async () => {
    const stopping = new AbortController();
    for (let i = 0; i < 50; i++) {
      await sleep(0, stopping.signal);
      await untilAborted(stopping.signal, (done) => void setImmediate(done));
    }
    expect(getEventListeners(stopping.signal, 'abort')).toHaveLength(0);
  });

  it('ends at once on abort and undoes what the wait set up', async () => {
    const stopping = new AbortController();
    let undone = false;
    const waiting = untilAborted(stopping.signal, () => () => (undone = true));
    stopping.abort();
    await waiting;
    expect(undone).toBe(true);
    const started = Date.now();
    await sleep(60_000, stopping.signal);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
