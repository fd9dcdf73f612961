/**
 * Marquez's legacy (deprecated) write API as OpenLineage events. Each call of `PUT .../datasets/{ds}`,
 * `PUT .../jobs/{job}`, `POST .../jobs/{job}/runs` and `POST /api/v1/jobs/runs/{id}/start|complete|fail|abort`
 * becomes the event an OpenLineage producer would have sent for the same fact, and goes through the one front
 * door: the writer gives the ids and derives the state, so a run made through the legacy API is the same run, in
 * the same tables, graph and answers, as one sent to `POST /api/v1/lineage`.
 *
 * Marquez's run state NEW (a run created but not started) is a RunEvent without `eventType`: the spec makes
 * `eventType` optional, an event without it changes no state (Marquez: "null means the run state is not
 * touched"), and a run whose events carry none is NEW here as in Marquez. `OTHER` would say the same here, but
 * Marquez reads OTHER as RUNNING, so the stored event would mean another state to Marquez.
 */
import {
  datasetEvent,
  datasourceDatasetFacet,
  documentationDatasetFacet,
  documentationJobFacet,
  jobEvent,
  jobTypeJobFacet,
  nominalTimeRunFacet,
  runEvent,
  schemaDatasetFacet,
  sourceCodeLocationJobFacet,
  type DatasetEvent,
  type DatasetFacets,
  type JobEvent,
  type JobFacets,
  type RunEvent,
  type RunFacets,
} from '@headwater/openlineage';

/** `{namespace, name}` of a dataset or job. */
export interface LegacyRef {
  readonly namespace: string;
  readonly name: string;
}

/** A field of Marquez's DbTableMeta/StreamMeta. */
export interface LegacyField {
  readonly name: string;
  readonly type?: string | null | undefined;
  readonly description?: string | null | undefined;
  readonly tags?: readonly string[] | null | undefined;
}

/** Marquez's DatasetMeta (`PUT /api/v1/namespaces/{ns}/datasets/{ds}`) with its source resolved. */
export interface LegacyDatasetMeta {
  readonly dataset: LegacyRef;
  readonly source: { readonly name: string; readonly connectionUrl: string };
  readonly fields?: readonly LegacyField[] | null | undefined;
  readonly description?: string | null | undefined;
  /** The run that wrote this version, with its job: the event is then that run's, naming the dataset as output. */
  readonly run?: { readonly id: string; readonly job: LegacyRef } | undefined;
}

/** Marquez's JobMeta (`PUT /api/v1/namespaces/{ns}/jobs/{job}`). */
export interface LegacyJobMeta {
  readonly job: LegacyRef;
  readonly type?: string | null | undefined;
  readonly inputs: readonly LegacyRef[];
  readonly outputs: readonly LegacyRef[];
  readonly location?: string | null | undefined;
  readonly description?: string | null | undefined;
}

/** Marquez's RunMeta (`POST /api/v1/namespaces/{ns}/jobs/{job}/runs`) with the run id chosen. */
export interface LegacyRunMeta {
  readonly id: string;
  readonly job: LegacyRef;
  readonly nominalStartTime?: string | null | undefined;
  readonly nominalEndTime?: string | null | undefined;
  readonly args?: Readonly<Record<string, string>> | null | undefined;
  /** The job's current inputs, outputs and code location: what Marquez maps the run to. */
  readonly inputs: readonly LegacyRef[];
  readonly outputs: readonly LegacyRef[];
  readonly location?: string | null | undefined;
}

/**
 * The job as a legacy run's events name it: with the job's current code location, so that the run says what it
 * ran (Marquez versions a legacy run by the job's location) and its job version does not depend on the order
 * its events and the job's arrive in.
 */
function runJob(job: LegacyRef, location: string | null | undefined, producer: string) {
  if (!location) return job;
  return {
    ...job,
    facets: {
      sourceCodeLocation: sourceCodeLocationJobFacet({ type: 'unknown', url: location }, { producer }),
    },
  };
}

/** The actions of `POST /api/v1/jobs/runs/{id}/{action}` and the eventType each one is. */
export const LEGACY_RUN_ACTIONS = {
  start: 'START',
  complete: 'COMPLETE',
  fail: 'FAIL',
  abort: 'ABORT',
} as const;

/** A legacy run action. */
export type LegacyRunAction = keyof typeof LEGACY_RUN_ACTIONS;

/**
 * The run facet that keeps Marquez's run `args` (free-form key/value pairs OpenLineage has no facet for); the
 * Run shape serves them as `args` beside those it builds from the nominalTime and parent facets.
 */
export const LEGACY_RUN_ARGS_FACET = 'marquez_runArgs';

/** The `producer` of the events the legacy API makes (a URI, as the spec asks). */
export function legacyProducer(version: string): string {
  return `https://github.com/headwater/headwater/tree/v${version}/packages/server/src/accept/marquez-legacy.ts`;
}

const refs = (list: readonly LegacyRef[]) => list.map(({ namespace, name }) => ({ namespace, name }));

/**
 * The dataset's facets: schema (name, type, description of each field), dataSource (the source's name and URL,
 * which names the dataset's source) and documentation.
 */
function datasetFacets(meta: LegacyDatasetMeta, producer: string): DatasetFacets {
  const facets: DatasetFacets = {
    dataSource: datasourceDatasetFacet(
      { name: meta.source.name, uri: meta.source.connectionUrl },
      { producer },
    ),
  };
  if (meta.fields && meta.fields.length > 0) {
    facets.schema = schemaDatasetFacet(
      {
        fields: meta.fields.map((field) => ({
          name: field.name,
          ...(field.type ? { type: field.type } : {}),
          ...(field.description ? { description: field.description } : {}),
        })),
      },
      { producer },
    );
  }
  if (meta.description)
    facets.documentation = documentationDatasetFacet({ description: meta.description }, { producer });
  return facets;
}

/**
 * The event for a dataset PUT: a DatasetEvent, or, when the PUT names the run that wrote the dataset (Marquez's
 * `runId`), a RunEvent of that run without eventType that names the dataset as its output.
 */
export function legacyDatasetEvent(
  meta: LegacyDatasetMeta,
  producer: string,
  at: Date,
): DatasetEvent | RunEvent {
  const facets = datasetFacets(meta, producer);
  if (meta.run) {
    return runEvent({
      eventTime: at,
      producer,
      run: { runId: meta.run.id },
      job: meta.run.job,
      outputs: [{ ...meta.dataset, facets }],
    });
  }
  return datasetEvent({ eventTime: at, producer, dataset: { ...meta.dataset, facets } });
}

/**
 * The event for a job PUT: a JobEvent declaring the job's inputs and outputs (runless, static lineage), its
 * description and code location, and, for a STREAM job, the jobType facet that makes it a streaming job.
 */
export function legacyJobEvent(meta: LegacyJobMeta, producer: string, at: Date): JobEvent {
  const facets: JobFacets = {};
  if (meta.type?.toUpperCase() === 'STREAM') {
    facets.jobType = jobTypeJobFacet(
      { processingType: 'STREAMING', integration: 'MARQUEZ_API', jobType: 'JOB' },
      { producer },
    );
  }
  if (meta.description)
    facets.documentation = documentationJobFacet({ description: meta.description }, { producer });
  if (meta.location) {
    facets.sourceCodeLocation = sourceCodeLocationJobFacet(
      { type: 'unknown', url: meta.location },
      { producer },
    );
  }
  return jobEvent({
    eventTime: at,
    producer,
    job: { ...meta.job, ...(Object.keys(facets).length > 0 ? { facets } : {}) },
    inputs: refs(meta.inputs),
    outputs: refs(meta.outputs),
  });
}

/** The event that creates a run in state NEW: a RunEvent without eventType (see the module comment). */
export function legacyNewRunEvent(meta: LegacyRunMeta, producer: string, at: Date): RunEvent {
  const facets: RunFacets = {};
  if (meta.nominalStartTime) {
    facets.nominalTime = nominalTimeRunFacet(
      {
        nominalStartTime: meta.nominalStartTime,
        ...(meta.nominalEndTime ? { nominalEndTime: meta.nominalEndTime } : {}),
      },
      { producer },
    );
  }
  if (meta.args && Object.keys(meta.args).length > 0) {
    facets[LEGACY_RUN_ARGS_FACET] = {
      _producer: producer,
      _schemaURL: `${producer}#/$defs/MarquezRunArgsRunFacet`,
      args: { ...meta.args },
    };
  }
  return runEvent({
    eventTime: at,
    producer,
    run: { runId: meta.id, ...(Object.keys(facets).length > 0 ? { facets } : {}) },
    job: runJob(meta.job, meta.location, producer),
    inputs: refs(meta.inputs),
    outputs: refs(meta.outputs),
  });
}

/**
 * The event of a run's transition (`start`, `complete`, `fail`, `abort`) at `at`, naming the job's current
 * inputs, outputs and code location as Marquez maps a legacy run to them, so the run's lineage is the job's.
 */
export function legacyRunTransitionEvent(
  run: Pick<LegacyRunMeta, 'id' | 'job' | 'inputs' | 'outputs' | 'location'>,
  action: LegacyRunAction,
  producer: string,
  at: Date,
): RunEvent {
  return runEvent({
    eventType: LEGACY_RUN_ACTIONS[action],
    eventTime: at,
    producer,
    run: { runId: run.id },
    job: runJob(run.job, run.location, producer),
    inputs: refs(run.inputs),
    outputs: refs(run.outputs),
  });
}
