/**
 * What the facets that describe a dataset, job or run say of its record: one rule per facet, read by the writer
 * as events arrive (derive/derive.ts) and by time travel from the facets of a time (api/as-of.ts,
 * store/queries/history.ts), so that a store answers as of now what it answers now. Each takes the facet's newest
 * value. A value marked `_deleted` was removed by its producer (OpenLineage JobFacet and DatasetFacet,
 * "set to true to delete a facet"): it says nothing, as an absent facet, and what it described is unknown again
 * rather than left at an older value.
 */
import type { JobType } from './entity-types.js';

type Json = Record<string, unknown>;

/** The source a dataset belongs to when its dataSource facet names none (Marquez's default source). */
export const DEFAULT_SOURCE_NAME = 'default';

/** The facet's fields, or undefined for no facet or one its producer deleted. */
function live(facet: unknown): Json | undefined {
  if (typeof facet !== 'object' || facet === null || Array.isArray(facet)) return undefined;
  return (facet as Json)._deleted === true ? undefined : (facet as Json);
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function timeOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** The description a documentation facet (dataset or job) gives; null for none. */
export function descriptionOf(documentation: unknown): string | null {
  return str(live(documentation)?.description);
}

/** A job's type from its jobType facet: STREAM when the processingType is STREAMING, else BATCH. */
export function jobTypeOf(jobType: unknown): Extract<JobType, 'BATCH' | 'STREAM'> {
  return str(live(jobType)?.processingType)?.toUpperCase() === 'STREAMING' ? 'STREAM' : 'BATCH';
}

/** The code location (its url) a sourceCodeLocation facet gives; null for none. */
export function codeLocationOf(sourceCodeLocation: unknown): string | null {
  return str(live(sourceCodeLocation)?.url);
}

/** The name of the source a dataSource facet names; {@link DEFAULT_SOURCE_NAME} for none (or an empty one). */
export function sourceNameOf(dataSource: unknown): string {
  return str(live(dataSource)?.name) || DEFAULT_SOURCE_NAME;
}

/** The nominal start and end times (epoch ms) a nominalTime run facet gives; null for those it does not. */
export function nominalTimesOf(nominalTime: unknown): { startMs: number | null; endMs: number | null } {
  const facet = live(nominalTime);
  return { startMs: timeOf(facet?.nominalStartTime), endMs: timeOf(facet?.nominalEndTime) };
}
