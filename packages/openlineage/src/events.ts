import { CORE_SCHEMA_ID } from './generated/model.js';
import type {
  DatasetEvent,
  DatasetFacets,
  InputDataset,
  InputDatasetFacets,
  Job,
  JobEvent,
  JobFacets,
  OpenLineageEvent,
  OutputDataset,
  OutputDatasetFacets,
  RunEvent,
  RunFacets,
  StaticDataset,
} from './generated/model.js';
import { DEFAULT_PRODUCER } from './producer.js';
import { uuidv7 } from './uuid.js';

/** The `eventType` of a run event. */
export type EventType = NonNullable<RunEvent['eventType']>;

/** `schemaURL` of a RunEvent of the spec version this client implements. */
export const RUN_EVENT_SCHEMA_URL = `${CORE_SCHEMA_ID}#/$defs/RunEvent`;
/** `schemaURL` of a DatasetEvent of the spec version this client implements. */
export const DATASET_EVENT_SCHEMA_URL = `${CORE_SCHEMA_ID}#/$defs/DatasetEvent`;
/** `schemaURL` of a JobEvent of the spec version this client implements. */
export const JOB_EVENT_SCHEMA_URL = `${CORE_SCHEMA_ID}#/$defs/JobEvent`;

/** Fields every event builder accepts. */
export interface BaseEventOptions {
  /**
   * When the event occurred; a `Date` is written as an ISO-8601 UTC string.
   * @default now
   */
  readonly eventTime?: Date | string;
  /**
   * URI of the code producing the event.
   * @default DEFAULT_PRODUCER
   */
  readonly producer?: string;
}

/** Options of {@link runEvent}. */
export interface RunEventOptions extends BaseEventOptions {
  /** The run state transition. Optional in the spec; set it for every event a run emits. */
  readonly eventType?: EventType;
  /**
   * The run. `runId` should be generated once per run (see {@link uuidv7}) and reused by all its events.
   * @default a new UUIDv7 with no facets
   */
  readonly run?: { readonly runId?: string; readonly facets?: RunFacets };
  /** The job the run belongs to. */
  readonly job: { readonly namespace: string; readonly name: string; readonly facets?: JobFacets };
  /** Datasets read by the run. */
  readonly inputs?: readonly InputDataset[];
  /** Datasets written by the run. */
  readonly outputs?: readonly OutputDataset[];
}

function eventTimeOf(value: Date | string | undefined): string {
  if (value === undefined) return new Date().toISOString();
  return typeof value === 'string' ? value : value.toISOString();
}

function jobOf(init: RunEventOptions['job']): Job {
  const job: Job = { namespace: init.namespace, name: init.name };
  if (init.facets !== undefined) job.facets = init.facets;
  return job;
}

/**
 * Builds a RunEvent with `eventTime`, `producer` and `schemaURL` filled in.
 *
 * @example
 * ```ts
 * const event = runEvent({
 *   eventType: 'START',
 *   run: { runId },
 *   job: { namespace: 'etl', name: 'daily_orders' },
 *   inputs: [inputDataset({ namespace: 'postgres://db:5432', name: 'shop.public.orders' })],
 * });
 * ```
 */
export function runEvent(options: RunEventOptions): RunEvent {
  const event: RunEvent = {
    eventTime: eventTimeOf(options.eventTime),
    producer: options.producer ?? DEFAULT_PRODUCER,
    schemaURL: RUN_EVENT_SCHEMA_URL,
    run: { runId: options.run?.runId ?? uuidv7() },
    job: jobOf(options.job),
  };
  if (options.eventType !== undefined) event.eventType = options.eventType;
  if (options.run?.facets !== undefined) event.run.facets = options.run.facets;
  if (options.inputs !== undefined) event.inputs = [...options.inputs];
  if (options.outputs !== undefined) event.outputs = [...options.outputs];
  return event;
}

/** Options of {@link jobEvent}. */
export interface JobEventOptions extends BaseEventOptions {
  /** The job described (runless, "static" lineage). */
  readonly job: RunEventOptions['job'];
  /** Datasets the job reads. */
  readonly inputs?: readonly InputDataset[];
  /** Datasets the job writes. */
  readonly outputs?: readonly OutputDataset[];
}

/** Builds a JobEvent (job metadata without a run), filling `eventTime`, `producer` and `schemaURL`. */
export function jobEvent(options: JobEventOptions): JobEvent {
  const event: JobEvent = {
    eventTime: eventTimeOf(options.eventTime),
    producer: options.producer ?? DEFAULT_PRODUCER,
    schemaURL: JOB_EVENT_SCHEMA_URL,
    job: jobOf(options.job),
  };
  if (options.inputs !== undefined) event.inputs = [...options.inputs];
  if (options.outputs !== undefined) event.outputs = [...options.outputs];
  return event;
}

/** Options of {@link datasetEvent}. */
export interface DatasetEventOptions extends BaseEventOptions {
  /** The dataset described (metadata without a job or run). */
  readonly dataset: { readonly namespace: string; readonly name: string; readonly facets?: DatasetFacets };
}

/** Builds a DatasetEvent (dataset metadata alone), filling `eventTime`, `producer` and `schemaURL`. */
export function datasetEvent(options: DatasetEventOptions): DatasetEvent {
  const dataset: StaticDataset = { namespace: options.dataset.namespace, name: options.dataset.name };
  if (options.dataset.facets !== undefined) dataset.facets = options.dataset.facets;
  return {
    eventTime: eventTimeOf(options.eventTime),
    producer: options.producer ?? DEFAULT_PRODUCER,
    schemaURL: DATASET_EVENT_SCHEMA_URL,
    dataset,
  };
}

/** Builds an input dataset; `inputFacets` are the facets about this read (statistics, subset...). */
export function inputDataset(init: {
  readonly namespace: string;
  readonly name: string;
  readonly facets?: DatasetFacets;
  readonly inputFacets?: InputDatasetFacets;
}): InputDataset {
  const dataset: InputDataset = { namespace: init.namespace, name: init.name };
  if (init.facets !== undefined) dataset.facets = init.facets;
  if (init.inputFacets !== undefined) dataset.inputFacets = init.inputFacets;
  return dataset;
}

/** Builds an output dataset; `outputFacets` are the facets about this write (statistics, subset...). */
export function outputDataset(init: {
  readonly namespace: string;
  readonly name: string;
  readonly facets?: DatasetFacets;
  readonly outputFacets?: OutputDatasetFacets;
}): OutputDataset {
  const dataset: OutputDataset = { namespace: init.namespace, name: init.name };
  if (init.facets !== undefined) dataset.facets = init.facets;
  if (init.outputFacets !== undefined) dataset.outputFacets = init.outputFacets;
  return dataset;
}

/** The kind of an event, decided the way the spec's `not` guards imply: `run` first, then `dataset`, then `job`. */
export function eventKind(event: OpenLineageEvent): 'RunEvent' | 'DatasetEvent' | 'JobEvent' {
  if ('run' in event && event.run !== undefined) return 'RunEvent';
  if ('dataset' in event) return 'DatasetEvent';
  return 'JobEvent';
}
