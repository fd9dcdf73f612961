/**
 * Waits until `start` calls the `done` it is given, or until `signal` aborts, whichever comes first. The abort
 * listener is removed once the wait ends, and so is what `start` set up (the function it returns): a loop that
 * waits again and again on one long-lived signal would otherwise pile a listener onto it per wait, which is
 * memory that grows with uptime (Node warns at 11).
 */
export function untilAborted(
  signal: AbortSignal,
  start: (done: () => void) => (() => void) | void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    let undo: (() => void) | void = undefined;
    const done = () => {
      signal.removeEventListener('abort', done);
      undo?.();
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    undo = start(done);
  });
}

/** Waits `ms`, or less when `signal` aborts first. */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  untilAborted(signal, (done) => {
    const timer = setTimeout(done, ms);
    return () => clearTimeout(timer);
  });
