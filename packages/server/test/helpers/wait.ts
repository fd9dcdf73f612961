/** How long {@link until} and {@link waitFor} wait, and how often they look. */
export interface WaitOptions {
  /**
   * Long, since a loaded CI machine is slow; a condition that holds ends the wait at once.
   * @default 90000
   */
  readonly timeoutMs?: number;
  /** @default 50 */
  readonly intervalMs?: number;
}

/**
 * Polls `probe` until `done` holds for its value, and returns that value; fails after `timeoutMs` saying what
 * it awaited and the last value or error it saw. A probe that throws counts as not yet: a server that restarts
 * refuses connections for a while.
 *
 * @example
 * ```ts
 * const count = await until('500 events stored', () => storedRunEvents(url), (n) => n >= 500);
 * ```
 */
export async function until<T>(
  what: string,
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  options: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 90_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const value = await probe();
      if (done(value)) return value;
      last = `the last value was ${JSON.stringify(value)}`;
    } catch (error) {
      last = `the last probe failed: ${(error as Error).message}`;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${last}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Polls `condition` until it is true; see {@link until}. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  options: WaitOptions = {},
): Promise<void> {
  await until(what, condition, (holds) => holds, options);
}
