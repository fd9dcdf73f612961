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
