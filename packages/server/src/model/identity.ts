/** The names and ids of model entities, shared by derivation, the store, the API and security. */
import { canonicalJson, contentUuid, nameUuid } from '../core/ids.js';
import type { Ref } from './normalize.js';

/**
 * The output field of a column edge from an input column that influences the whole output dataset (the
 * columnLineage facet's `dataset` list: JOIN, FILTER, GROUP_BY, SORT...). Such an edge is no column of the
 * output: it is kept apart, and analyses count it as an input of every column of the output.
 */
export const DATASET_FIELD = '';

/**
 * The id Headwater gives a job where Marquez shows a job uuid (parentJobUuid): the name-based (version 3)
 * UUID of its node id `job:<namespace>:<name>`, as Java's `UUID.nameUUIDFromBytes` makes it. It is stable
 * across servers and restores, and any client can compute it.
 * @example jobUuid('airflow', 'etl') === nameUuid('job:airflow:etl')
 */
export function jobUuid(namespace: string, name: string): string {
  return nameUuid(`job:${namespace}:${name}`);
}

/** Producers name children `parent.child`; a job's simple name drops its parent's prefix. */
export function simpleJobName(name: string, parentName: string): string {
  return name.startsWith(`${parentName}.`) ? name.slice(parentName.length + 1) : name;
}

/**
 * The uuid of a job version: the content address of the job's code location and the datasets it read and wrote.
 * Sorts `inputs` and `outputs` in place.
 */
export function jobVersionUuid(
  namespace: string,
  name: string,
  location: string | null,
  inputs: Ref[],
  outputs: Ref[],
): string {
  const byName = (a: Ref, b: Ref) =>
    a.namespace === b.namespace ? (a.name < b.name ? -1 : 1) : a.namespace < b.namespace ? -1 : 1;
  inputs.sort(byName);
  outputs.sort(byName);
  return contentUuid(canonicalJson({ job: [namespace, name], location, inputs, outputs }));
}

/**
 * The uuid of a dataset version: the content address of what describes the dataset. With no description at all
 * (`datasetVersionUuid(namespace, name)`), the empty version a dataset gets when first named without one.
 */
export function datasetVersionUuid(
  namespace: string,
  name: string,
  fields: unknown[] = [],
  lifecycleState: string | null = null,
  storage: { layer: unknown; format: unknown } | null = null,
  symlinks: string[] | null = null,
): string {
  return contentUuid(
    canonicalJson({ dataset: [namespace, name], fields, lifecycleState, storage, symlinks }),
  );
}
