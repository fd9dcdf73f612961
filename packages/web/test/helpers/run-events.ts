/** OpenLineage run events for the browser tests' pipeline scenarios (a Kedro-like producer). */

export const PRODUCER = 'https://github.com/headwater/kedro-openlineage';

/** A facet named by its spec schema, e.g. `facet('ParentRunFacet', {...})`. */
export const facet = (name: string, body: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json`,
  ...body,
});

/** What a run event may carry beyond its type, time, run and job. */
export interface RunEventExtra {
  /** The parent run's id: a `parent` facet naming it and the pipeline job. */
  readonly parent?: string;
  /** The parent facet's job; the builder's pipeline when not given. */
  readonly pipeline?: string;
  readonly inputs?: unknown[];
  readonly outputs?: unknown[];
  readonly runFacets?: object;
}

/**
 * A builder of RunEvents for jobs of `namespace` whose parent job is `pipeline` (unless an event names another).
 *
 * @example
 * const event = runEventBuilder('kedro-shop', 'shop.__default__');
 * event('START', Date.now(), runId, 'ingest.load', { parent: pipelineRunId });
 */
export function runEventBuilder(namespace: string, pipeline: string) {
  return (eventType: string, ms: number, runId: string, job: string, extra: RunEventExtra = {}) => ({
    eventType,
    eventTime: new Date(ms).toISOString(),
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: {
      runId,
      facets: {
        ...(extra.parent
          ? {
              parent: facet('ParentRunFacet', {
                run: { runId: extra.parent },
                job: { namespace, name: extra.pipeline ?? pipeline },
              }),
            }
          : {}),
        ...extra.runFacets,
      },
    },
    job: { namespace, name: job, facets: {} },
    inputs: extra.inputs ?? [],
    outputs: extra.outputs ?? [],
  });
}
