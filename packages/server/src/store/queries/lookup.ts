import { HeadwaterError } from '../../core/errors.js';
import type { Queryable } from '../db.js';
import { entityKey } from '../model-state.js';
import type { Catalog, EntityRef, NamespaceRef } from '../read-model.js';

// Names are resolved to ids through a catalog held in memory (the read model for readers, the writer's mirror
// for writes): a lookup costs no query, and the queries that follow can run in parallel on the id.

/** The error for a namespace that does not exist. */
export function namespaceNotFound(name: string): HeadwaterError {
  return new HeadwaterError(
    'NOT_FOUND',
    `Namespace '${name}' not found. List the namespaces with GET /api/v1/namespaces.`,
  );
}

/** The namespace called `name` (hidden ones included, as in Marquez), or a NOT_FOUND error. */
export function namespaceNamed<N extends NamespaceRef>(
  state: Catalog<N, EntityRef, EntityRef>,
  name: string,
): N {
  const namespace = state.namespaces.get(name);
  if (!namespace) throw namespaceNotFound(name);
  return namespace;
}

/** The visible (not soft-deleted) dataset `name` of `namespace`, or a NOT_FOUND error. */
export function datasetNamed<D extends EntityRef>(
  state: Catalog<NamespaceRef, D, EntityRef>,
  namespace: string,
  name: string,
): D {
  const { id } = namespaceNamed(state, namespace);
  const dataset = state.datasets.get(entityKey(id, name));
  if (!dataset || dataset.isHidden) {
    throw new HeadwaterError(
      'NOT_FOUND',
      `Dataset '${name}' not found in namespace '${namespace}'. List them with GET /api/v1/namespaces/{namespace}/datasets.`,
    );
  }
  return dataset;
}

/** The visible (not soft-deleted) job `name` of `namespace`, or a NOT_FOUND error. */
export function jobNamed<J extends EntityRef>(
  state: Catalog<NamespaceRef, EntityRef, J>,
  namespace: string,
  name: string,
): J {
  const { id } = namespaceNamed(state, namespace);
  const job = state.jobs.get(entityKey(id, name));
  if (!job || job.isHidden) {
    throw new HeadwaterError(
      'NOT_FOUND',
      `Job '${name}' not found in namespace '${namespace}'. List them with GET /api/v1/namespaces/{namespace}/jobs.`,
    );
  }
  return job;
}

/** `{namespace, name}` of datasets known to the catalog, sorted by namespace then name. */
export function datasetRefs(state: Catalog, ids: Iterable<number>): { namespace: string; name: string }[] {
  const refs: { namespace: string; name: string }[] = [];
  for (const id of ids) {
    const dataset = state.datasetsById.get(id);
    const namespace = dataset && state.namespacesById.get(dataset.namespaceId);
    if (dataset && namespace) refs.push({ namespace: namespace.name, name: dataset.name });
  }
  return refs.sort((a, b) => compareText(a.namespace, b.namespace) || compareText(a.name, b.name));
}

/** Code-point order, the same on every platform (localeCompare is not). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * {@link datasetNamed}, or else the visible dataset a `symlinks` facet gave that other name (a Hive metastore
 * table name for a storage path, say), as Marquez resolves them; else the NOT_FOUND error of the name itself.
 */
export async function datasetNamedOrLinked(
  db: Queryable,
  state: Catalog,
  namespace: string,
  name: string,
): Promise<EntityRef> {
  try {
    return datasetNamed(state, namespace, name);
  } catch (error) {
    if (!(error instanceof HeadwaterError) || error.code !== 'NOT_FOUND') throw error;
    const rows = await db.query<{ id: number }>(
      'SELECT dataset_id AS id FROM dataset_symlinks WHERE namespace = $1 AND name = $2 ORDER BY dataset_id',
      [namespace, name],
    );
    for (const { id } of rows) {
      const dataset = state.datasetsById.get(id);
      if (dataset && !dataset.isHidden) return dataset;
    }
    throw error;
  }
}
