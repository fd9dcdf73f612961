/**
 * The writes that do not come from events: a namespace declared (PUT) or soft-deleted, a dataset or job
 * soft-deleted, tags, owners, aliases, a source declared through Marquez's legacy API. Each runs inside the one transaction
 * the writer opens for it (IngestPipeline, with its commit-feed entry) and returns, beside its answer, what it
 * changed of what the server holds in memory: a {@link CatalogEdit}. The writer's mirror ({@link applyEdit}) and the
 * read side (replica/read-side.ts) take that edit only once the transaction has committed, as they take a batch's
 * changeset and read delta.
 */
import type { Queryable } from './db.js';
import type { ModelState, NamespaceRow, SourceRow } from './model-state.js';
import {
  aliasesTouching,
  deleteAlias,
  insertAlias,
  readAliases,
  type AliasRecord,
  type AliasRow,
} from './queries/aliases.js';
import {
  hideDataset,
  tagDataset,
  tagDatasetField,
  untagDataset,
  untagDatasetField,
} from './queries/datasets.js';
import { hideJob, tagJob, untagJob } from './queries/jobs.js';
import { hideNamespace, upsertNamespace, type NamespaceRecord } from './queries/namespaces.js';
import { declareOwners, type Owner } from './queries/owners.js';
import { upsertSource, type SourceRecord } from './queries/sources.js';

/** What an edit changed of the names, flags and aliases held in memory. */
export interface CatalogEdit {
  /** Namespaces made or changed, as the writer's mirror holds them. */
  readonly namespaces: readonly NamespaceRow[];
  /** Sources made or changed (only the writer's mirror holds sources). */
  readonly sources: readonly SourceRow[];
  /** Ids of the namespaces, datasets and jobs it soft-deleted. */
  readonly hidden: {
    readonly namespaces: readonly number[];
    readonly datasets: readonly number[];
    readonly jobs: readonly number[];
  };
  /** Every alias after the edit, when it changed them; undefined when it did not. */
  readonly aliases: readonly AliasRow[] | undefined;
}

/** An edit that changed nothing held in memory (a tag, say), though it wrote to the store. */
export const NO_EDIT: CatalogEdit = Object.freeze({
  namespaces: [],
  sources: [],
  hidden: Object.freeze({ namespaces: [], datasets: [], jobs: [] }),
  aliases: undefined,
});

/**
 * The outcome of an edit's write: the caller's answer, and what changed in memory; `edit` is undefined when
 * nothing was written (the writer then records no commit-feed entry).
 */
export interface Edited<T> {
  readonly result: T;
  readonly edit: CatalogEdit | undefined;
}

/** Brings the writer's mirror in step with a committed edit. */
export function applyEdit(mirror: ModelState, edit: CatalogEdit): void {
  for (const row of edit.namespaces) {
    mirror.addNamespace(row);
    mirror.next.namespace = Math.max(mirror.next.namespace, row.id + 1);
  }
  for (const row of edit.sources) {
    mirror.sources.set(row.name, row);
    mirror.next.source = Math.max(mirror.next.source, row.id + 1);
  }
  for (const id of edit.hidden.namespaces) {
    const row = mirror.namespacesById.get(id);
    if (row) mirror.addNamespace({ ...row, isHidden: true });
  }
  for (const id of edit.hidden.datasets) {
    const row = mirror.datasetsById.get(id);
    if (row) mirror.addDataset({ ...row, isHidden: true });
  }
  for (const id of edit.hidden.jobs) {
    const row = mirror.jobsById.get(id);
    if (row) mirror.addJob({ ...row, isHidden: true });
  }
}

/** What PUT /api/v1/namespaces/{name} declares. */
export interface NamespacePut {
  readonly name: string;
  readonly ownerName: string;
  /** Left as it is when undefined. */
  readonly description: string | undefined;
}

/**
 * Creates a namespace, or updates its owner and description and un-hides it. A new namespace takes the next id of
 * the writer's mirror, which learns it (and moves its counter on) after commit.
 */
export async function putNamespace(
  tx: Queryable,
  mirror: ModelState,
  put: NamespacePut,
  now: Date,
): Promise<Edited<NamespaceRecord>> {
  const id = mirror.namespaces.get(put.name)?.id ?? mirror.next.namespace;
  const record = await upsertNamespace(tx, { ...put, id, now });
  const row: NamespaceRow = {
    id: record.id,
    name: record.name,
    createdAt: record.createdAt.getTime(),
    updatedAt: record.updatedAt.getTime(),
    isHidden: false,
  };
  return { result: record, edit: { ...NO_EDIT, namespaces: [row] } };
}

/** What Marquez's legacy PUT /api/v1/sources/{name} declares. */
export interface SourcePut {
  readonly name: string;
  readonly type: string;
  readonly connectionUrl: string;
  readonly description: string | null;
}

/** Creates or replaces a source; a new one takes the next id of the writer's mirror (see {@link putNamespace}). */
export async function putSource(
  tx: Queryable,
  mirror: ModelState,
  put: SourcePut,
  now: Date,
): Promise<Edited<SourceRecord>> {
  const id = mirror.sources.get(put.name)?.id ?? mirror.next.source;
  const record = await upsertSource(tx, { ...put, id, at: now });
  const row: SourceRow = {
    id,
    name: put.name,
    type: put.type,
    connectionUrl: put.connectionUrl,
    createdAt: record.createdAt.getTime(),
    updatedAt: record.updatedAt.getTime(),
  };
  return { result: record, edit: { ...NO_EDIT, sources: [row] } };
}

/** What may be soft-deleted: hidden until the next event that names it (a namespace with its datasets and jobs). */
export type Hideable = 'namespace' | 'dataset' | 'job';

/** Soft-deletes the namespace, dataset or job `id`. */
export async function hide(tx: Queryable, kind: Hideable, id: number): Promise<Edited<undefined>> {
  if (kind === 'namespace') {
    const { datasetIds, jobIds } = await hideNamespace(tx, id);
    return {
      result: undefined,
      edit: { ...NO_EDIT, hidden: { namespaces: [id], datasets: datasetIds, jobs: jobIds } },
    };
  }
  if (kind === 'dataset') await hideDataset(tx, id);
  else await hideJob(tx, id);
  const hidden = {
    namespaces: [],
    datasets: kind === 'dataset' ? [id] : [],
    jobs: kind === 'job' ? [id] : [],
  };
  return { result: undefined, edit: { ...NO_EDIT, hidden } };
}

/** A tag on a dataset, on a field of a dataset, or on a job. */
export type TagChange =
  | { readonly kind: 'dataset' | 'job'; readonly id: number; readonly tag: string }
  | { readonly kind: 'field'; readonly id: number; readonly field: string; readonly tag: string };

/** Puts tags on (creating those that do not exist yet) or takes them off; what is already so stays. */
export async function setTags(
  tx: Queryable,
  changes: readonly TagChange[],
  on: boolean,
): Promise<Edited<undefined>> {
  for (const change of changes) {
    if (change.kind === 'field')
      await (on ? tagDatasetField : untagDatasetField)(tx, change.id, change.field, change.tag);
    else if (change.kind === 'dataset') await (on ? tagDataset : untagDataset)(tx, change.id, change.tag);
    else await (on ? tagJob : untagJob)(tx, change.id, change.tag);
  }
  // Tags are read from the store, never held in memory.
  return { result: undefined, edit: NO_EDIT };
}

/** A declaration of who owns a dataset or job, through the API (see store/queries/owners.ts). */
export interface OwnersPut {
  readonly kind: 'dataset' | 'job';
  readonly id: number;
  /** The whole list; empty withdraws the declaration. */
  readonly owners: readonly Owner[];
  readonly by: string;
}

/** Records a declaration of a node's owners. Owners are read from the store, never held in memory. */
export async function putOwners(tx: Queryable, put: OwnersPut, at: Date): Promise<Edited<undefined>> {
  await declareOwners(tx, put.kind, put.id, put.owners, at, put.by);
  return { result: undefined, edit: NO_EDIT };
}

/**
 * What came of declaring an alias: it was declared, or was already; or an alias in the store stands in the way
 * (`blockedBy`): the dataset is already an alias of another, the target is itself an alias, or the dataset has
 * aliases of its own. Aliases name the dataset they are, never another alias, so a chain is refused.
 */
export type AliasDeclaration =
  { readonly declared: boolean; readonly record: AliasRecord } | { readonly blockedBy: AliasRecord };

/** Declares that dataset `datasetId` is dataset `targetId` (two different datasets), by `actor`. */
export async function declareAlias(
  tx: Queryable,
  datasetId: number,
  targetId: number,
  actor: string,
): Promise<Edited<AliasDeclaration>> {
  // Read from the store, not memory: it is what the next writer will find too.
  for (const row of await aliasesTouching(tx, [datasetId, targetId])) {
    if (row.datasetId === datasetId && row.targetId === targetId)
      return { result: { declared: false, record: row }, edit: undefined };
    // Another alias of the same target is no obstacle.
    if (row.datasetId === datasetId || row.datasetId === targetId || row.targetId === datasetId)
      return { result: { blockedBy: row }, edit: undefined };
  }
  const record = await insertAlias(tx, datasetId, targetId, actor);
  return { result: { declared: true, record }, edit: { ...NO_EDIT, aliases: await readAliases(tx) } };
}

/** Removes the alias that dataset `datasetId` is `targetId`; undefined when there is no such alias. */
export async function removeAlias(
  tx: Queryable,
  datasetId: number,
  targetId: number,
): Promise<Edited<AliasRecord | undefined>> {
  const removed = await deleteAlias(tx, datasetId, targetId);
  if (!removed) return { result: undefined, edit: undefined };
  return { result: removed, edit: { ...NO_EDIT, aliases: await readAliases(tx) } };
}
