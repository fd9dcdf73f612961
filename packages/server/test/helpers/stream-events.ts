import { randomUUID } from 'node:crypto';
import type { OpenLineageEvent } from '@headwater/openlineage';

/** A RunEvent of the streams tests, with its run id and job at hand. */
export type TestRunEvent = OpenLineageEvent & {
  run: { runId: string };
  job: { namespace: string; name: string };
};

/** A minimal valid RunEvent of `namespace`/`job`. */
export const runEvent = (namespace: string, job: string, eventType = 'COMPLETE', runId = randomUUID()) =>
  ({
    eventType,
    eventTime: new Date().toISOString(),
    producer: 'https://example.com/streams-test',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId },
    job: { namespace, name: job },
    inputs: [],
    outputs: [],
  }) as unknown as TestRunEvent;

/** RunEvents stored in the server at `url` (the events page counts RunEvents). */
export async function storedRunEvents(url: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/events/lineage?limit=1`);
  return ((await response.json()) as { totalCount: number }).totalCount;
}

/** Polls `probe` until `done` holds for its value (and returns it), or fails after `timeoutMs` saying what it awaited. */
export async function until<T>(
  what: string,
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await probe();
  }
  return value;
}
