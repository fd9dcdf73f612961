import type { Queryable } from './db.js';
import type { ReadDelta } from './read-delta.js';
import { readAll, selectColumns, type BulkColumn } from './paged-read.js';
import { entityKey } from './model-state.js';

/** A namespace as readers see it. */
export interface NamespaceRef {
  readonly id: number;
  readonly name: string;
  readonly isHidden: boolean;
}

/** A dataset or job as readers see it: its id, where it lives, and whether it is soft-deleted. */
export interface EntityRef {
  readonly id: number;
  readonly namespaceId: number;
  readonly name: string;
  readonly isHidden: boolean;
}

/** A job as readers see it: with its type (BATCH, STREAM, SERVICE). */
export interface JobRef extends EntityRef {
  readonly type: string;
}

/**
 * Names and ids of namespaces, datasets and jobs, looked up by name or by id. Both the read model and the
 * writer's mirror (ModelState) have this shape, so the lookups in store/queries/lookup.ts serve both.
 */
export interface Catalog<
  N extends NamespaceRef = NamespaceRef,
  D extends EntityRef = EntityRef,
  J extends EntityRef = EntityRef,
> {
  readonly namespaces: ReadonlyMap<string, N>;
  readonly namespacesById: ReadonlyMap<number, N>;
  readonly datasets: ReadonlyMap<string, D>;
  readonly datasetsById: ReadonlyMap<number, D>;
  readonly jobs: ReadonlyMap<string, J>;
  readonly jobsById: ReadonlyMap<number, J>;
}

/**
 * What readers resolve names and ids against: exactly what is committed. The writer's mirror runs ahead of the
 * store (it takes a batch's changes as soon as they are derived, before the write commits, and is rebuilt after
 * a failed write); readers never see it. This model takes only the read deltas of committed batches and the
 * committed edits (soft deletes, namespaces made through the API; see store/edits.ts), so a batch in flight is
 * never visible, and a writer's recovery never makes a committed dataset disappear.
 *
 * Memory: one small entry per namespace, dataset and job (the current graph), plus the nodeId text of those an
 * answer has named (at most one per entity and field).
 */
export class ReadModel implements Catalog<NamespaceRef, EntityRef, JobRef> {
  readonly #namespaces = new Map<string, NamespaceRef>();
  readonly #namespacesById = new Map<number, NamespaceRef>();
  readonly #datasets = new Map<string, EntityRef>();
  readonly #datasetsById = new Map<number, EntityRef>();
  readonly #jobs = new Map<string, JobRef>();
  readonly #jobsById = new Map<number, JobRef>();
  /**
   * nodeIds (`dataset:<namespace>:<name>`, `job:...`) by id, built on demand by the analyses. An id's namespace
   * and name never change, and ids are never handed out twice, so entries never go stale.
   */
  readonly nodeIds = {
    datasets: new Map<number, string>(),
    jobs: new Map<number, string>(),
    /** dataset id -> field -> `datasetField:...` */
    fields: new Map<number, Map<string, string>>(),
  };

  get namespaces(): ReadonlyMap<string, NamespaceRef> {
    return this.#namespaces;
  }
  get namespacesById(): ReadonlyMap<number, NamespaceRef> {
    return this.#namespacesById;
  }
  get datasets(): ReadonlyMap<string, EntityRef> {
    return this.#datasets;
  }
  get datasetsById(): ReadonlyMap<number, EntityRef> {
    return this.#datasetsById;
  }
  get jobs(): ReadonlyMap<string, JobRef> {
    return this.#jobs;
  }
  get jobsById(): ReadonlyMap<number, JobRef> {
    return this.#jobsById;
  }

  /**
   * Takes the namespaces, datasets and jobs of a catalog that holds exactly what is committed: the writer's
   * mirror right after it was loaded, before any batch. Saves reading the same rows twice at start.
   */
  copy(catalog: Catalog<NamespaceRef, EntityRef, JobRef>): void {
    // Synchronous: readers never see the model half-replaced.
    for (const map of [
      this.#namespaces,
      this.#namespacesById,
      this.#datasets,
      this.#datasetsById,
      this.#jobs,
      this.#jobsById,
    ])
      map.clear();
    for (const row of catalog.namespaces.values()) this.setNamespace(row);
    for (const row of catalog.datasets.values()) this.#setDataset(row);
    for (const row of catalog.jobs.values()) this.#setJob(row);
  }

  /** Takes in what a committed batch changed. */
  apply(delta: ReadDelta): void {
    for (const [id, name, isHidden] of delta.namespaces) this.setNamespace({ id, name, isHidden });
    for (const [id, namespaceId, name, isHidden] of delta.datasets)
      this.#setDataset({ id, namespaceId, name, isHidden });
    for (const [id, namespaceId, name, isHidden, type] of delta.jobs)
      this.#setJob({ id, namespaceId, name, isHidden, type });
  }

  /**
   * Reads every namespace, dataset and job from the store into a new model (a follower's answer to a write that
   * did not come from events, whose effect it cannot derive): the caller swaps it in with {@link copy}. At
   * start, into the empty model `model`.
   */
  static async load(db: Queryable, model = new ReadModel()): Promise<ReadModel> {
    for (const row of await db.query<{ id: number; name: string; is_hidden: boolean }>(
      'SELECT id, name, is_hidden FROM namespaces',
    ))
      model.setNamespace({ id: row.id, name: row.name, isHidden: row.is_hidden });
    type Row = { id: number; namespace_id: number; name: string; is_hidden: boolean; type: string };
    const columns: BulkColumn[] = [
      ['id', 'number'],
      ['namespace_id', 'number'],
      ['name', 'text'],
      ['is_hidden', 'boolean'],
    ];
    await Promise.all([
      readAll<Row>(db, { ...selectColumns<Row>(columns, 'datasets'), key: ['id'] }, (rows) => {
        for (const row of rows)
          model.#setDataset({
            id: row.id,
            namespaceId: row.namespace_id,
            name: row.name,
            isHidden: row.is_hidden,
          });
      }),
      readAll<Row>(
        db,
        { ...selectColumns<Row>([...columns, ['type', 'text']], 'jobs'), key: ['id'] },
        (rows) => {
          for (const row of rows) {
            model.#setJob({
              id: row.id,
              namespaceId: row.namespace_id,
              name: row.name,
              isHidden: row.is_hidden,
              type: row.type,
            });
          }
        },
      ),
    ]);
    return model;
  }

  /** Records a committed namespace (made or changed through the API). */
  setNamespace(row: NamespaceRef): void {
    const ref = { id: row.id, name: row.name, isHidden: row.isHidden };
    this.#namespaces.set(ref.name, ref);
    this.#namespacesById.set(ref.id, ref);
  }

  /** Records a committed soft delete (or its undoing). */
  setHidden(kind: 'namespace' | 'dataset' | 'job', id: number, isHidden: boolean): void {
    if (kind === 'namespace') {
      const row = this.#namespacesById.get(id);
      if (row) this.setNamespace({ ...row, isHidden });
      return;
    }
    if (kind === 'dataset') {
      const row = this.#datasetsById.get(id);
      if (row) this.#setDataset({ ...row, isHidden });
    } else {
      const row = this.#jobsById.get(id);
      if (row) this.#setJob({ ...row, isHidden });
    }
  }

  #setDataset(row: EntityRef): void {
    const ref = { id: row.id, namespaceId: row.namespaceId, name: row.name, isHidden: row.isHidden };
    this.#datasets.set(entityKey(ref.namespaceId, ref.name), ref);
    this.#datasetsById.set(ref.id, ref);
  }

  #setJob(row: JobRef): void {
    const ref = {
      id: row.id,
      namespaceId: row.namespaceId,
      name: row.name,
      isHidden: row.isHidden,
      type: row.type,
    };
    this.#jobs.set(entityKey(ref.namespaceId, ref.name), ref);
    this.#jobsById.set(ref.id, ref);
  }
}
