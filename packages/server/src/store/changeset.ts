/**
 * What the writer writes for a batch of events: the rows derivation produced, keyed so that a batch names each
 * row once. The store owns this contract; derivation fills it, the writer's mirror takes it at once (before the
 * write commits, see {@link applyChangeset}), the writer writes it in one transaction, and only after commit does
 * the read side learn its read delta (store/read-delta.ts).
 */
import type { AssertionResult } from '../model/assertions.js';
import type { FacetMap, Ref } from '../model/normalize.js';
import type {
  DatasetRow,
  FacetLatest,
  JobRow,
  ModelState,
  Ms,
  NamespaceRow,
  RunRow,
  SourceRow,
} from './model-state.js';

/** Input (0) or output (1) of a run or job. */
export type Direction = 0 | 1;

export interface DatasetVersionInsert {
  id: number;
  datasetId: number;
  version: string;
  fields: unknown[];
  lifecycleState: string | null;
  createdAt: Ms;
  createdByRun: string | null;
}

export interface JobVersionInsert {
  id: number;
  jobId: number;
  version: string;
  location: string | null;
  inputs: Ref[];
  outputs: Ref[];
  createdAt: Ms;
}

export interface RunIoUpsert {
  runUuid: string;
  direction: Direction;
  datasetId: number;
  versionId: number | null;
  facets: FacetMap;
  eventTime: Ms;
}

export interface ColumnEdgeUpsert {
  outputDatasetId: number;
  outputField: string;
  inputDatasetId: number;
  inputField: string;
  type: string;
  subtype: string;
  description: string | null;
  masking: boolean;
  seen: Ms;
}

/** What one event told a dataset, kept for time travel (table dataset_sightings). */
export interface DatasetSighting {
  datasetId: number;
  /** 0: read, 1: written, 2: the dataset of a DatasetEvent, 3: only named as a column-lineage input. */
  kind: 0 | 1 | 2 | 3;
  eventHash: string;
  eventTime: Ms;
  seq: number;
  jobId: number | null;
  runUuid: string | null;
  versionId: number | null;
  definesVersion: boolean;
  modifies: boolean;
  /** Facet name -> hash of its value. */
  facets: Record<string, string>;
  /** The run's input or output facets for the dataset, as this event gave them. */
  ioFacets: FacetMap;
}

/** What one event told a job (kind 0), or that a run event named it as its parent's job (kind 1). */
export interface JobSighting {
  jobId: number;
  kind: 0 | 1;
  eventHash: string;
  eventTime: Ms;
  seq: number;
  runUuid: string | null;
  eventType: string | null;
  /** The job version a JobEvent declared. */
  versionId: number | null;
  /** The job of the parent run the event named, if another job. */
  parentJobId: number | null;
  facets: Record<string, string>;
  runFacets: Record<string, string>;
}

export interface SymlinkInsert {
  datasetId: number;
  namespace: string;
  name: string;
  type: string;
}

export interface FacetUpsert {
  /** run uuid, job id or dataset id. */
  entity: string | number;
  name: string;
  hash: string;
  facet: Record<string, unknown>;
  eventTime: Ms;
  runUuid: string | null;
}

export interface AssertionUpsert extends AssertionResult {
  runUuid: string;
  datasetId: number;
  eventTime: Ms;
}

export interface MetricsUpsert {
  runUuid: string;
  datasetId: number;
  metrics: Record<string, unknown>;
  eventTime: Ms;
}

/**
 * Everything one batch of new events changes in the model. The entity maps hold every row the batch touched
 * (the writer's mirror takes them all); the `persist` sets name the rows that store/writer.ts must write.
 */
export interface Changeset {
  readonly namespaces: Map<string, NamespaceRow>;
  readonly sources: Map<string, SourceRow>;
  readonly datasets: Map<string, DatasetRow>;
  readonly jobs: Map<string, JobRow>;
  readonly runs: Map<string, RunRow>;
  readonly persist: {
    readonly namespaces: Set<string>;
    readonly datasets: Set<string>;
    readonly jobs: Set<string>;
    readonly runs: Set<string>;
  };
  readonly datasetVersions: Map<string, DatasetVersionInsert>;
  readonly jobVersions: Map<string, JobVersionInsert>;
  readonly runIo: Map<string, RunIoUpsert>;
  readonly columnEdges: Map<string, ColumnEdgeUpsert>;
  /** Other names of datasets (symlinks facet): `${datasetId}\0${namespace}\0${name}`. */
  readonly symlinks: Map<string, SymlinkInsert>;
  readonly runFacets: Map<string, FacetUpsert>;
  readonly jobFacets: Map<string, FacetUpsert>;
  readonly datasetFacets: Map<string, FacetUpsert>;
  readonly assertions: Map<string, AssertionUpsert>;
  readonly metrics: Map<string, MetricsUpsert>;
  /** History rows, by `${entity}:${kind}:${eventHash}`. */
  readonly datasetSightings: Map<string, DatasetSighting>;
  readonly jobSightings: Map<string, JobSighting>;
  /** What the mirror learns about the latest value of each facet (`${kind}:${entity}:${name}`). */
  readonly facetTimes: Map<string, FacetLatest>;
}

export function emptyChangeset(): Changeset {
  return {
    namespaces: new Map(),
    sources: new Map(),
    datasets: new Map(),
    jobs: new Map(),
    runs: new Map(),
    persist: { namespaces: new Set(), datasets: new Set(), jobs: new Set(), runs: new Set() },
    datasetVersions: new Map(),
    jobVersions: new Map(),
    runIo: new Map(),
    columnEdges: new Map(),
    symlinks: new Map(),
    runFacets: new Map(),
    jobFacets: new Map(),
    datasetFacets: new Map(),
    assertions: new Map(),
    metrics: new Map(),
    datasetSightings: new Map(),
    jobSightings: new Map(),
    facetTimes: new Map(),
  };
}

/**
 * Applies a changeset to the writer's mirror. The pipeline does so as soon as the batch is derived, before its
 * write commits (the mirror runs ahead of the store, and the next batch is derived on top of it); a write that
 * fails makes the pipeline rebuild the mirror from the store, so a rolled-back batch does not stay in it.
 */
export function applyChangeset(state: ModelState, changes: Changeset): void {
  const { persist } = changes;
  for (const [name, row] of changes.namespaces) {
    const old = state.namespaces.get(name);
    state.addNamespace(persist.namespaces.has(name) || !old ? row : { ...row, updatedAt: old.updatedAt });
  }
  for (const row of changes.sources.values()) state.sources.set(row.name, row);
  for (const [key, row] of changes.datasets) {
    state.addDataset(
      persist.datasets.has(key)
        ? { ...row, storedUpdatedAt: row.updatedAt, storedVersionTime: row.currentVersionTime }
        : row,
    );
  }
  for (const [key, row] of changes.jobs) {
    state.addJob(persist.jobs.has(key) ? { ...row, storedUpdatedAt: row.updatedAt } : row);
  }
  for (const row of changes.runs.values()) state.runs.set(row.uuid, row);
  for (const row of changes.datasetVersions.values()) {
    state.datasetVersions.set(row.version, { id: row.id, ownerId: row.datasetId });
  }
  for (const row of changes.jobVersions.values()) {
    state.jobVersions.set(row.version, { id: row.id, ownerId: row.jobId });
  }
  for (const [key, edge] of changes.columnEdges) {
    state.columnEdges.set(key, Math.min(state.columnEdges.get(key) ?? edge.seen, edge.seen));
  }
  for (const key of changes.symlinks.keys()) state.symlinks.set(key, true);
  for (const [key, latest] of changes.facetTimes) state.facets.set(key, latest);
}
