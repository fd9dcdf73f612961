import type { Queryable } from './db.js';
import { readAll, readPaged, selectColumns, type BulkColumn } from './paged-read.js';
import type { RunStateAggregate, TerminalState } from '../model/run-state.js';
import type { ExecutionOutcome } from '../model/execution.js';

/** Ms since the epoch. */
export type Ms = number;

/**
 * SQL for a timestamptz column read as ms since the epoch (a float8, which the drivers hand over as a number):
 * the loads at start read hundreds of thousands of times, and parsing their text into Dates cost more than
 * the queries. Truncated to the ms, as a Date of it would be.
 */
export const MS = (column: string): string => `trunc(extract(epoch FROM ${column}) * 1000)::float8`;

export interface NamespaceRow {
  id: number;
  name: string;
  createdAt: Ms;
  updatedAt: Ms;
  isHidden: boolean;
}

export interface SourceRow {
  id: number;
  name: string;
  type: string;
  connectionUrl: string;
  createdAt: Ms;
  updatedAt: Ms;
}

export interface DatasetRow {
  id: number;
  namespaceId: number;
  name: string;
  sourceId: number;
  description: string | null;
  currentVersionId: number | null;
  currentVersionTime: Ms | null;
  lifecycleState: string | null;
  lastModifiedAt: Ms | null;
  isHidden: boolean;
  createdAt: Ms;
  updatedAt: Ms;
  /** What the store holds of the times that are written at a coarser resolution (see derive.ts). */
  storedUpdatedAt: Ms | null;
  storedVersionTime: Ms | null;
}

export interface JobRow {
  id: number;
  namespaceId: number;
  name: string;
  simpleName: string;
  parentJobId: number | null;
  type: string;
  integration: string | null;
  jobType: string | null;
  description: string | null;
  location: string | null;
  currentVersionId: number | null;
  currentVersionTime: Ms | null;
  isHidden: boolean;
  createdAt: Ms;
  updatedAt: Ms;
  /** updated_at as last written; updated_at alone is rewritten at most once a second (see derive.ts). */
  storedUpdatedAt: Ms | null;
}

export interface RunRow {
  uuid: string;
  externalId: string | null;
  jobId: number;
  parentRunUuid: string | null;
  jobVersionId: number | null;
  aggregate: RunStateAggregate;
  nominalStartTime: Ms | null;
  nominalEndTime: Ms | null;
  /** The code the run says it ran: the url of the newest sourceCodeLocation facet among its events, and when. */
  codeLocation: string | null;
  codeLocationAt: Ms | null;
  /**
   * Whether the run executed, as its newest event that says so reports it (model/execution.ts), and that event's
   * time; null: no event said, and the run counts as executed.
   */
  execution: ExecutionOutcome | null;
  executionAt: Ms | null;
  /** Datasets the run read or wrote: `${direction}:${datasetId}` -> dataset version id. */
  io: Map<string, number | null>;
}

/** The latest value of a facet on an entity: its hash, its exact time, and the time its row holds. */
export interface FacetLatest {
  readonly hash: string;
  readonly latestAt: Ms;
  readonly storedAt: Ms;
}

export interface VersionRef {
  readonly id: number;
  readonly ownerId: number;
}

/**
 * The facets whose newest value sets a column of the entity (source and description of datasets; type,
 * description and code location of jobs): the writer must know their newest time to apply a late event right.
 */
export const DESCRIBING_FACETS = {
  dataset: ['dataSource', 'documentation'],
  job: ['jobType', 'documentation', 'sourceCodeLocation'],
} as const;

/** A Map that forgets its least recently used entries beyond `capacity`. */
export class LruMap<K, V> {
  readonly #map = new Map<K, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
      this.evictions++;
    }
  }

  /** How many entries it has forgotten. */
  evictions = 0;

  get capacity(): number {
    return this.#capacity;
  }

  get size(): number {
    return this.#map.size;
  }
}

/**
 * Dataset or job version ids by version uuid: the newest ones, up to a capacity, so that the mirror does not
 * grow with history (versions are kept forever; a dataset whose schema keeps changing makes one per change).
 * While it holds every version the store has (`complete`), a uuid it lacks is a new version; once it has
 * forgotten some, the writer asks the store about the uuids a batch would create (see
 * IngestPipeline's #prepare) before it gives them new ids.
 */
export class VersionCache extends LruMap<string, VersionRef> {
  /** Whether the store holds no version that is missing here. */
  #loadedAll = true;

  get complete(): boolean {
    return this.#loadedAll && this.evictions === 0;
  }

  /** Loads the newest versions of `table` (dataset_versions or job_versions), up to the capacity. */
  async load(db: Queryable, table: 'dataset_versions' | 'job_versions', owner: string): Promise<void> {
    let read = 0;
    // Oldest first, so that the newest are the most recently used; one more than fits, to learn whether all do.
    await readPaged<{ id: number; owner: number; version: string }>(
      db,
      {
        select: `SELECT id, ${owner} AS owner, version::text AS version FROM ${table}`,
        where: `id >= coalesce((SELECT id FROM ${table} ORDER BY id DESC OFFSET $1 LIMIT 1), 0)`,
        params: [this.capacity],
        key: ['id'],
      },
      (rows) => {
        read += rows.length;
        for (const row of rows) this.set(row.version, { id: row.id, ownerId: row.owner });
      },
    );
    this.#loadedAll = read <= this.capacity;
  }
}

/** How many version ids of each kind the mirror keeps (about 150 bytes each). */
const VERSION_CACHE_SIZE = 200_000;

/** Reads runs (and their inputs and outputs) whose uuid is in the uuid[] parameter `param`. */
export const RUNS_SQL = (param: string) =>
  `SELECT r.uuid::text AS uuid, r.external_id, r.job_id, r.parent_run_uuid::text AS parent_run_uuid,
          r.job_version_id, r.state, r.started_at, r.first_running_at, r.ended_at, r.created_at, r.updated_at,
          r.nominal_start_time, r.nominal_end_time, r.code_location, r.code_location_at, r.terminals_seen, r.execution, r.execution_at,
          (SELECT json_agg(json_build_array(io.direction, io.dataset_id, io.dataset_version_id))
           FROM run_io io WHERE io.run_uuid = r.uuid) AS io
   FROM runs r WHERE r.uuid = ANY(${param}::uuid[])`;

/** Key of a dataset or job: namespace id and name. */
export const entityKey = (namespaceId: number, name: string): string => `${namespaceId}\u0000${name}`;

/**
 * The writer's mirror of the model. Namespaces, sources, datasets and jobs are loaded whole at start and kept
 * exact (the writer is the only one that changes them); the newest version ids are loaded into a cache that asks
 * the store about what it lacks (see VersionCache); runs are loaded on demand into an LRU.
 * The facet and column-lineage caches let the writer skip upserts that would change nothing, so a miss there
 * costs a write, never correctness; the facets that describe entities are the exception, loaded whole at start
 * (see DESCRIBING_FACETS).
 */
export class ModelState {
  readonly namespaces = new Map<string, NamespaceRow>();
  readonly namespacesById = new Map<number, NamespaceRow>();
  readonly sources = new Map<string, SourceRow>();
  readonly datasets = new Map<string, DatasetRow>();
  readonly datasetsById = new Map<number, DatasetRow>();
  readonly jobs = new Map<string, JobRow>();
  readonly jobsById = new Map<number, JobRow>();
  readonly datasetVersions: VersionCache;
  readonly jobVersions: VersionCache;
  readonly runs = new LruMap<string, RunRow>(50_000);
  /**
   * `${kind}:${entity}:${name}` -> the latest value of a facet. The facets that describe entities (see
   * DESCRIBING_FACETS) are loaded for all of them at start; others are learnt as events arrive.
   */
  readonly facets = new LruMap<string, FacetLatest>(500_000);
  /** Column edge key -> the earliest eventTime it was seen. */
  readonly columnEdges = new LruMap<string, Ms>(500_000);
  readonly symlinks = new LruMap<string, true>(100_000);
  /** Dataset version uuids by the text hashes of the facets that address them (a pure memo). */
  readonly versionMemo = new LruMap<string, string>(200_000);
  readonly next = { namespace: 1, source: 1, dataset: 1, job: 1, datasetVersion: 1, jobVersion: 1, event: 1 };
  /** Jobs whose row in job_cutoffs is stale: the writer works them out again before its next batch (job-cutoffs.ts). */
  readonly staleCutoffs = new Set<number>();

  constructor(versionCacheSize = VERSION_CACHE_SIZE) {
    this.datasetVersions = new VersionCache(versionCacheSize);
    this.jobVersions = new VersionCache(versionCacheSize);
  }

  /** Loads the exact parts of the mirror from the store. */
  async load(db: Queryable): Promise<void> {
    // Times are read as numbers (see MS).
    const time = (value: unknown): Ms => value as number;
    const timeOrNull = (value: unknown): Ms | null => (value === null ? null : time(value));
    for (const row of await db.query(
      `SELECT id, name, ${MS('created_at')} AS created_at, ${MS('updated_at')} AS updated_at, is_hidden FROM namespaces`,
    )) {
      this.addNamespace({
        id: row.id as number,
        name: row.name as string,
        createdAt: time(row.created_at),
        updatedAt: time(row.updated_at),
        isHidden: row.is_hidden as boolean,
      });
    }
    for (const row of await db.query(
      `SELECT id, name, type, connection_url, ${MS('created_at')} AS created_at, ${MS('updated_at')} AS updated_at
       FROM sources`,
    )) {
      this.sources.set(row.name as string, {
        id: row.id as number,
        name: row.name as string,
        type: row.type as string,
        connectionUrl: row.connection_url as string,
        createdAt: time(row.created_at),
        updatedAt: time(row.updated_at),
      });
    }
    const times = (...names: string[]): BulkColumn[] => names.map((name) => [name, 'number', MS(name)]);
    const datasets = readAll(
      db,
      {
        ...selectColumns<Record<string, unknown>>(
          [
            ['id', 'number'],
            ['namespace_id', 'number'],
            ['name', 'text'],
            ['source_id', 'number'],
            ['description', 'text'],
            ['current_version_id', 'number'],
            ['lifecycle_state', 'text'],
            ['is_hidden', 'boolean'],
            ...times('current_version_time', 'last_modified_at', 'created_at', 'updated_at'),
          ],
          'datasets',
        ),
        key: ['id'],
      },
      (rows) => {
        for (const row of rows) {
          this.addDataset({
            id: row.id as number,
            namespaceId: row.namespace_id as number,
            name: row.name as string,
            sourceId: row.source_id as number,
            description: row.description as string | null,
            currentVersionId: row.current_version_id as number | null,
            currentVersionTime: timeOrNull(row.current_version_time),
            lifecycleState: row.lifecycle_state as string | null,
            lastModifiedAt: timeOrNull(row.last_modified_at),
            isHidden: row.is_hidden as boolean,
            createdAt: time(row.created_at),
            updatedAt: time(row.updated_at),
            storedUpdatedAt: time(row.updated_at),
            storedVersionTime: timeOrNull(row.current_version_time),
          });
        }
      },
    );
    const jobs = readAll(
      db,
      {
        ...selectColumns<Record<string, unknown>>(
          [
            ['id', 'number'],
            ['namespace_id', 'number'],
            ['name', 'text'],
            ['simple_name', 'text'],
            ['parent_job_id', 'number'],
            ['type', 'text'],
            ['integration', 'text'],
            ['job_type', 'text'],
            ['description', 'text'],
            ['location', 'text'],
            ['current_version_id', 'number'],
            ['is_hidden', 'boolean'],
            ...times('current_version_time', 'created_at', 'updated_at'),
          ],
          'jobs',
        ),
        key: ['id'],
      },
      (rows) => {
        for (const row of rows) {
          this.addJob({
            id: row.id as number,
            namespaceId: row.namespace_id as number,
            name: row.name as string,
            simpleName: row.simple_name as string,
            parentJobId: row.parent_job_id as number | null,
            type: row.type as string,
            integration: row.integration as string | null,
            jobType: row.job_type as string | null,
            description: row.description as string | null,
            location: row.location as string | null,
            currentVersionId: row.current_version_id as number | null,
            currentVersionTime: timeOrNull(row.current_version_time),
            isHidden: row.is_hidden as boolean,
            createdAt: time(row.created_at),
            updatedAt: time(row.updated_at),
            storedUpdatedAt: time(row.updated_at),
          });
        }
      },
    );
    // Independent reads, at once: the store works on one while this process takes in another.
    await Promise.all([
      datasets,
      jobs,
      db.query<{ job_id: number }>('SELECT job_id FROM job_cutoffs WHERE stale').then((rows) => {
        for (const row of rows) this.staleCutoffs.add(row.job_id);
      }),
      this.datasetVersions.load(db, 'dataset_versions', 'dataset_id'),
      this.jobVersions.load(db, 'job_versions', 'job_id'),
      ...(
        [
          ['dataset', 'dataset_facets', 'dataset_id'],
          ['job', 'job_facets', 'job_id'],
        ] as const
      ).map(([kind, table, column]) =>
        readAll<{ id: number; name: string; hash: string; at: Ms }>(
          db,
          {
            select: `SELECT DISTINCT ON (${column}, name) ${column} AS id, name, hash::text AS hash,
                            ${MS('event_time')} AS at FROM ${table}`,
            // Constant names, written in: a bulk read takes no parameters.
            where: `name IN (${DESCRIBING_FACETS[kind].map((name) => `'${name}'`).join(', ')})`,
            fromText: (f) => ({ id: Number(f[0]), name: f[1]!, hash: f[2]!, at: Number(f[3]) }),
            key: [column, 'name'],
            keyOf: (row) => [row.id, row.name],
            orderBy: `${column}, name, event_time DESC, hash DESC`,
          },
          (rows) => {
            for (const row of rows)
              this.facets.set(`${kind}:${row.id}:${row.name}`, {
                hash: row.hash,
                latestAt: row.at,
                storedAt: row.at,
              });
          },
        ),
      ),
    ]);
    const [max] = await db.query<Record<string, number | null>>(
      `SELECT (SELECT max(id) FROM namespaces) AS namespace, (SELECT max(id) FROM sources) AS source,
              (SELECT max(id) FROM datasets) AS dataset, (SELECT max(id) FROM jobs) AS job,
              (SELECT max(id) FROM dataset_versions) AS dataset_version, (SELECT max(id) FROM job_versions) AS job_version,
              (SELECT max(id) FROM events) AS event`,
    );
    this.next.namespace = (max?.namespace ?? 0) + 1;
    this.next.source = (max?.source ?? 0) + 1;
    this.next.dataset = (max?.dataset ?? 0) + 1;
    this.next.job = (max?.job ?? 0) + 1;
    this.next.datasetVersion = (max?.dataset_version ?? 0) + 1;
    this.next.jobVersion = (max?.job_version ?? 0) + 1;
    this.next.event = (max?.event ?? 0) + 1;
  }

  /** The runs in `uuids` that are not in the LRU. */
  missingRuns(uuids: readonly string[]): string[] {
    return [...new Set(uuids)].filter((uuid) => !this.runs.has(uuid));
  }

  /** Adds rows of {@link RUNS_SQL} to the LRU (times may come as Date or, through JSON, as text). */
  addRuns(rows: readonly Record<string, unknown>[]): void {
    const time = (value: unknown): Ms | null =>
      value === null || value === undefined ? null : new Date(value as string | Date).getTime();
    for (const row of rows) {
      const state = row.state as string;
      const endedAt = time(row.ended_at);
      const terminal: TerminalState | null =
        (state === 'COMPLETED' || state === 'FAILED' || state === 'ABORTED') && endedAt !== null
          ? { state, at: endedAt }
          : null;
      const io = new Map<string, number | null>();
      for (const [direction, datasetId, versionId] of (row.io as [number, number, number | null][] | null) ??
        []) {
        io.set(`${direction}:${datasetId}`, versionId);
      }
      this.runs.set(row.uuid as string, {
        uuid: row.uuid as string,
        externalId: row.external_id as string | null,
        jobId: row.job_id as number,
        parentRunUuid: row.parent_run_uuid as string | null,
        jobVersionId: row.job_version_id as number | null,
        aggregate: {
          startedAt: time(row.started_at),
          firstRunningAt: time(row.first_running_at),
          terminal,
          terminalsSeen: Number(row.terminals_seen ?? 0),
          firstEventAt: time(row.created_at)!,
          lastEventAt: time(row.updated_at)!,
        },
        nominalStartTime: time(row.nominal_start_time),
        nominalEndTime: time(row.nominal_end_time),
        codeLocation: (row.code_location as string | null | undefined) ?? null,
        codeLocationAt: time(row.code_location_at),
        execution: (row.execution as ExecutionOutcome | null | undefined) ?? null,
        executionAt: time(row.execution_at),
        io,
      });
    }
  }

  addNamespace(row: NamespaceRow): void {
    this.namespaces.set(row.name, row);
    this.namespacesById.set(row.id, row);
  }

  addDataset(row: DatasetRow): void {
    this.datasets.set(entityKey(row.namespaceId, row.name), row);
    this.datasetsById.set(row.id, row);
  }

  addJob(row: JobRow): void {
    this.jobs.set(entityKey(row.namespaceId, row.name), row);
    this.jobsById.set(row.id, row);
  }
}
