import { contentUuid, runUuidOf } from '../core/ids.js';
import { parseEventTime } from '../core/event-time.js';
import type { EventType } from './run-state.js';

/** The three OpenLineage event kinds: RunEvent, DatasetEvent and JobEvent. */
export type EventKind = 'run' | 'dataset' | 'job';

/** Facets keyed by facet name, as received. */
export type FacetMap = Readonly<Record<string, Record<string, unknown>>>;

/** A namespace and a name: how OpenLineage identifies datasets and jobs. */
export interface Ref {
  readonly namespace: string;
  readonly name: string;
}

/** A dataset as an event names it. */
export interface EventDataset extends Ref {
  readonly facets: FacetMap;
  /** inputFacets or outputFacets: per-run statistics and quality results. */
  readonly ioFacets: FacetMap;
}

/** An accepted event reduced to what the lineage model needs; the raw text is kept as `body`. */
export interface NormalizedEvent {
  readonly kind: EventKind;
  /** Content address of `body`: identical events share it, and are stored once. */
  readonly hash: string;
  /** The event's JSON text, stored and served unchanged. */
  readonly body: string;
  /** eventTime in ms since the epoch. */
  readonly eventTime: number;
  readonly eventType: EventType | undefined;
  readonly run:
    | {
        readonly uuid: string;
        /** The producer's runId when it is not a UUID (the uuid is then derived from it). */
        readonly externalId: string | undefined;
        readonly facets: FacetMap;
        readonly parent: { readonly runUuid: string; readonly job: Ref } | undefined;
      }
    | undefined;
  readonly job: (Ref & { readonly facets: FacetMap }) | undefined;
  readonly inputs: readonly EventDataset[];
  readonly outputs: readonly EventDataset[];
  /** The dataset of a DatasetEvent. */
  readonly dataset: EventDataset | undefined;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const eventTypes = new Set<string>(['START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER']);

/** Keeps the facets whose value is an object; anything else under a facet key cannot be a facet. */
function facetsOf(value: unknown): FacetMap {
  if (!isObject(value)) return {};
  let clean = true;
  for (const key in value) if (!isObject(value[key])) clean = false;
  if (clean) return value as FacetMap;
  const result: Record<string, Json> = {};
  for (const [key, facet] of Object.entries(value)) if (isObject(facet)) result[key] = facet;
  return result;
}

function refOf(value: unknown): Ref | undefined {
  if (!isObject(value)) return undefined;
  const { namespace, name } = value;
  return typeof namespace === 'string' && typeof name === 'string' && namespace !== '' && name !== ''
    ? { namespace, name }
    : undefined;
}

function datasetsOf(value: unknown, ioKey: 'inputFacets' | 'outputFacets'): EventDataset[] {
  if (!Array.isArray(value)) return [];
  const result: EventDataset[] = [];
  for (const item of value) {
    const ref = refOf(item);
    if (!ref || !isObject(item)) continue;
    result.push({ ...ref, facets: facetsOf(item.facets), ioFacets: facetsOf(item[ioKey]) });
  }
  return result;
}

/**
 * Reduces a validated event (see validate.ts) to a {@link NormalizedEvent}. Malformed optional parts, such as a
 * parent facet without a runId, are ignored by the model but stay in the stored body: the lenient server keeps
 * what producers send.
 */
export function normalizeEvent(
  event: Json,
  kind: EventKind,
  body: string = JSON.stringify(event),
): NormalizedEvent {
  const eventTime = parseEventTime(String(event.eventTime));
  if (eventTime === undefined) throw new TypeError('normalizeEvent needs a validated event: bad eventTime');
  const eventType =
    typeof event.eventType === 'string' && eventTypes.has(event.eventType)
      ? (event.eventType as EventType)
      : undefined;
  const jobRef = refOf(event.job);
  const job = jobRef && isObject(event.job) ? { ...jobRef, facets: facetsOf(event.job.facets) } : undefined;

  let run: NormalizedEvent['run'];
  if (kind === 'run' && isObject(event.run) && typeof event.run.runId === 'string') {
    const runId = event.run.runId;
    const uuid = runUuidOf(runId);
    const facets = facetsOf(event.run.facets);
    run = {
      uuid,
      externalId: uuid === runId.toLowerCase() ? undefined : runId,
      facets,
      parent: parentOf(facets.parent ?? facets.parentRun),
    };
  }
  const datasetRef = kind === 'dataset' ? refOf(event.dataset) : undefined;
  return {
    kind,
    hash: contentUuid(body),
    body,
    eventTime,
    eventType,
    run,
    job,
    inputs: kind === 'dataset' ? [] : datasetsOf(event.inputs, 'inputFacets'),
    outputs: kind === 'dataset' ? [] : datasetsOf(event.outputs, 'outputFacets'),
    dataset:
      datasetRef && isObject(event.dataset)
        ? { ...datasetRef, facets: facetsOf(event.dataset.facets), ioFacets: {} }
        : undefined,
  };
}

function parentOf(facet: unknown): { runUuid: string; job: Ref } | undefined {
  if (!isObject(facet) || !isObject(facet.run) || typeof facet.run.runId !== 'string') return undefined;
  const job = refOf(facet.job);
  return job ? { runUuid: runUuidOf(facet.run.runId), job } : undefined;
}

/**
 * The parent job a JobEvent declares (Headwater's `headwater_parentJob` job facet, `{"job": {"namespace", "name"}}`, the
 * ParentRunFacet without the run): a pipeline's structure pushed before any run names each node's pipeline job.
 */
export function declaredParentOf(facets: FacetMap): Ref | undefined {
  const facet = facets.headwater_parentJob;
  return isObject(facet) ? refOf(facet.job) : undefined;
}
