/**
 * The JSON shapes of the Marquez-compatible read API, built from the store's records, and the schemas that
 * document them in the OpenAPI document.
 *
 * Marquez writes JSON with Jackson's NON_NULL inclusion, with one quirk that clients rely on: a getter that
 * returns an empty `Optional` is written as an explicit `null` (description, lastModifiedAt, startedAt...),
 * while a plain null field is left out (parentJobName, a run's jobVersion...). The builders below follow that
 * field by field.
 *
 * Responses are serialised with JSON.stringify (see {@link plainJson}): the response schemas here only
 * document them, so a field missing from a schema can never be silently dropped from a response.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { HeadwaterError } from '../core/errors.js';
import { ERROR_FACETS, runErrorOf, type RunError } from '../model/error-facets.js';
import { LEGACY_RUN_ARGS_FACET } from '../accept/marquez-legacy.js';
import { contradictoryStates, type TerminalState } from '../model/run-state.js';
import { EXECUTION_OUTCOMES, type ExecutionOutcome } from '../model/execution.js';
import {
  columnLineageInto,
  findDatasets,
  type ColumnLineageRecord,
  type DatasetRecord,
  type DatasetVersionRecord,
} from '../store/queries/datasets.js';
import { datasetFacets, latestFacets, type Facets } from '../store/queries/facets.js';
import { findJobs, type JobRecord, type JobVersionRecord } from '../store/queries/jobs.js';
import { datasetRefs } from '../store/queries/lookup.js';
import type { NamespaceRecord } from '../store/queries/namespaces.js';
import { findRuns, latestRunsOfJobs, runIo, type RunRecord } from '../store/queries/runs.js';
import type { SourceRecord } from '../store/queries/sources.js';
import type { Queryable } from '../store/db.js';
import { type ColumnTransformation } from '../read-model/column-graph.js';
import { DATASET_FIELD, jobUuid } from '../model/identity.js';
import type { JobEdges } from '../read-model/lineage-graph.js';
import type { ServerConfig } from '../config/server-config.js';
import type { AppDeps } from './deps.js';

// ---- JSON shapes -------------------------------------------------------------------------------------------

/** `{namespace, name}` of a dataset or job. */
export interface EntityId {
  namespace: string;
  name: string;
}

/** `{namespace, name, version}` of a dataset or job version. */
export interface VersionId extends EntityId {
  version: string;
}

/** Marquez's Namespace. */
export interface NamespaceJson {
  name: string;
  createdAt: string;
  updatedAt: string;
  ownerName: string;
  description: string | null;
  isHidden: boolean;
}

/** Marquez's Source. */
export interface SourceJson {
  type: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  connectionUrl: string;
  description: string | null;
}

/** Marquez's Tag. */
export interface TagJson {
  name: string;
  description: string | null;
}

/** A schema field of a dataset. `type` is left out when the schema facet gave none. */
export interface FieldJson {
  name: string;
  type?: string;
  tags: string[];
  description: string | null;
}

/** An input field of a column-lineage entry; transformation keys are left out when unknown. */
export interface ColumnLineageInputFieldJson {
  namespace: string;
  dataset: string;
  field: string;
  /** Marquez's: the first transformation's. */
  transformationDescription?: string;
  transformationType?: string;
  /** Headwater: every transformation of the input, one per type and subtype; left out when there is none. */
  transformations?: ColumnTransformation[];
}

/** One output field of a dataset and the input fields it is derived from. */
export interface ColumnLineageJson {
  name: string;
  inputFields: ColumnLineageInputFieldJson[];
  transformationDescription?: string;
  transformationType?: string;
}

/** A dataset node of the lineage graph (Marquez's DatasetData): a Dataset without facets or column lineage. */
export interface DatasetNodeData {
  id: EntityId;
  type: string;
  name: string;
  physicalName: string;
  createdAt: string;
  updatedAt: string;
  namespace: string;
  sourceName: string;
  fields: FieldJson[];
  tags: string[];
  lastModifiedAt: string | null;
  description: string | null;
  lastLifecycleState: string | null;
}

/** Marquez's Dataset (GET /namespaces/{ns}/datasets/{ds}). */
export interface DatasetJson extends DatasetNodeData {
  currentVersion: string | null;
  /** Left out when no column lineage leads into the dataset, as in Marquez. */
  columnLineage?: ColumnLineageJson[];
  /**
   * Input columns that influence the whole dataset (the columnLineage facet's `dataset` list: JOIN, FILTER,
   * GROUP_BY, SORT...); a Headwater addition, left out when there are none.
   */
  datasetInputFields?: ColumnLineageInputFieldJson[];
  facets: Facets;
  /** The last lifecycle state was DROP (not the soft delete). */
  deleted: boolean;
  /** The dataset this one is an alias of (a Headwater addition, left out when it is none). */
  aliasOf?: EntityId;
  /** The aliases of this dataset (a Headwater addition, left out when there are none). */
  aliases?: EntityId[];
}

/** Marquez's DatasetVersion. */
export interface DatasetVersionJson {
  id: EntityId;
  type: string;
  name: string;
  physicalName: string;
  createdAt: string;
  version: string;
  namespace: string;
  sourceName: string;
  fields: FieldJson[];
  tags: string[];
  lifecycleState: string | null;
  description: string | null;
  currentSchemaVersion: string | null;
  createdByRun: RunJson | null;
  facets: Facets;
}

/** A dataset version a run read or wrote, with the run's input or output facets for it. */
export interface DatasetVersionRefJson {
  datasetVersionId: VersionId;
  facets: Facets;
}

/** Marquez's Run. */
export interface RunJson {
  id: string;
  createdAt: string;
  updatedAt: string;
  nominalStartTime: string | null;
  nominalEndTime: string | null;
  state: string;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  args: Record<string, string>;
  /** Left out until the run reaches a terminal state (or for a run of a job event). */
  jobVersion?: VersionId;
  inputDatasetVersions: DatasetVersionRefJson[];
  outputDatasetVersions: DatasetVersionRefJson[];
  facets: Facets;
  /** Beyond Marquez: the run's error, read from whichever error facet its producer sent (runErrorOf). */
  error: RunError | null;
  /**
   * Headwater: present (true) on a RUNNING run with no event for longer than `--stale-run-after`; the run may
   * never end (a producer died, Spark's internal jobs send only START).
   */
  stale?: true;
  /**
   * Headwater: present when the run's events reported contradictory terminal states (the Spark listener sends
   * FAIL, then COMPLETE): each of them, most severe first. `state` is the first.
   */
  contradictoryStates?: TerminalState['state'][];
  /**
   * Headwater: present when the run did not execute (model/execution.ts): it was skipped, reused or a no-op, so
   * its state is neither a failure nor a completion and it refreshed no data.
   */
  execution?: Exclude<ExecutionOutcome, 'executed'>;
}

/** A job node of the lineage graph (Marquez's JobData). */
export interface JobNodeData {
  id: EntityId;
  type: string;
  name: string;
  simpleName: string;
  parentJobName?: string;
  parentJobUuid?: string;
  currentRunUuid?: string;
  createdAt: string;
  updatedAt: string;
  namespace: string;
  inputs: EntityId[];
  outputs: EntityId[];
  location: string | null;
  description: string | null;
  latestRun: RunJson | null;
}

/** Marquez's Job (GET /namespaces/{ns}/jobs/{job}). */
export interface JobJson {
  id: EntityId;
  type: string;
  name: string;
  simpleName: string;
  parentJobName?: string;
  parentJobUuid?: string;
  createdAt: string;
  updatedAt: string;
  namespace: string;
  inputs: EntityId[];
  outputs: EntityId[];
  location: string | null;
  description: string | null;
  latestRun: RunJson | null;
  latestRuns: RunJson[] | null;
  facets: Facets;
  currentVersion: string | null;
  labels: string[];
  tags: string[];
}

/** Marquez's JobVersion. */
export interface JobVersionJson {
  id: VersionId;
  name: string;
  createdAt: string;
  version: string;
  namespace: string;
  location: string | null;
  inputs: EntityId[];
  outputs: EntityId[];
  latestRun?: RunJson;
}

// ---- builders ----------------------------------------------------------------------------------------------

const iso = (time: Date): string => time.toISOString();
const isoOrNull = (time: Date | null): string | null => (time === null ? null : time.toISOString());
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Builds a Namespace. */
export function namespaceJson(record: NamespaceRecord): NamespaceJson {
  return {
    name: record.name,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    ownerName: record.ownerName,
    description: record.description,
    isHidden: record.isHidden,
  };
}

/** Builds a Source. */
export function sourceJson(record: SourceRecord): SourceJson {
  return {
    type: record.type,
    name: record.name,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    connectionUrl: record.connectionUrl,
    description: record.description,
  };
}

/** The top-level fields of a schema facet, with the tags put on them through the API. */
function fieldsJson(
  fields: readonly unknown[] | null,
  fieldTags: Record<string, string[]> | null,
): FieldJson[] {
  const result: FieldJson[] = [];
  for (const field of fields ?? []) {
    if (!isObject(field) || typeof field.name !== 'string') continue;
    result.push({
      name: field.name,
      ...(typeof field.type === 'string' ? { type: field.type } : {}),
      tags: fieldTags?.[field.name] ?? [],
      description: typeof field.description === 'string' ? field.description : null,
    });
  }
  return result;
}

/** Builds the lineage-graph data of a dataset (Marquez's DatasetData). */
export function datasetNodeData(record: DatasetRecord): DatasetNodeData {
  return {
    id: { namespace: record.namespace, name: record.name },
    type: record.type,
    name: record.name,
    physicalName: record.name,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    namespace: record.namespace,
    sourceName: record.sourceName,
    fields: fieldsJson(record.fields, record.fieldTags),
    tags: record.tags,
    lastModifiedAt: isoOrNull(record.lastModifiedAt),
    description: record.description,
    lastLifecycleState: record.lifecycleState,
  };
}

/**
 * Marquez's columnLineage of a dataset: one entry per output field, its input fields in order, each input field
 * once with all its transformations (a Spark column that is both aggregated and filtered is one input).
 */
export function columnLineageJson(records: readonly ColumnLineageRecord[]): ColumnLineageJson[] {
  const byField = new Map<string, Map<string, ColumnLineageInputFieldJson>>();
  for (const record of records) {
    let inputs = byField.get(record.outputField);
    if (!inputs) byField.set(record.outputField, (inputs = new Map<string, ColumnLineageInputFieldJson>()));
    const key = JSON.stringify([record.namespace, record.dataset, record.field]);
    let input = inputs.get(key);
    if (!input) {
      input = { namespace: record.namespace, dataset: record.dataset, field: record.field };
      inputs.set(key, input);
    }
    if (record.transformationType === '') continue;
    // Marquez reports one transformation per input: the first one's.
    if (input.transformations === undefined) {
      if (record.transformationDescription !== null)
        input.transformationDescription = record.transformationDescription;
      input.transformationType = record.transformationType;
      input.transformations = [];
    }
    input.transformations.push({
      type: record.transformationType,
      subtype: record.transformationSubtype,
      description: record.transformationDescription,
      masking: record.masking,
    });
  }
  return [...byField].map(([name, inputs]) => {
    const inputFields = [...inputs.values()];
    // Marquez still reports the first input's transformation at the field level (deprecated there).
    const first = inputFields[0];
    return {
      name,
      inputFields,
      ...(first?.transformationDescription !== undefined
        ? { transformationDescription: first.transformationDescription }
        : {}),
      ...(first?.transformationType !== undefined ? { transformationType: first.transformationType } : {}),
    };
  });
}

/** Builds a Dataset from its record, latest merged facets and column lineage into it. */
export function datasetJson(
  record: DatasetRecord,
  facets: Facets,
  columnLineage: readonly ColumnLineageRecord[],
): DatasetJson {
  const data = datasetNodeData(record);
  const ofFields = columnLineage.filter((r) => r.outputField !== DATASET_FIELD);
  const ofDataset = columnLineage.filter((r) => r.outputField === DATASET_FIELD);
  return {
    ...data,
    currentVersion: record.currentVersion,
    ...(ofFields.length > 0 ? { columnLineage: columnLineageJson(ofFields) } : {}),
    ...(ofDataset.length > 0 ? { datasetInputFields: columnLineageJson(ofDataset)[0]!.inputFields } : {}),
    facets,
    deleted: record.lifecycleState === 'DROP',
  };
}

/**
 * Builds a DatasetVersion: the version's fields and lifecycle state, the dataset's name, source, description
 * and tags, the facets of the version's time and the run that created it (null if no run did).
 */
export function datasetVersionJson(
  dataset: DatasetRecord,
  version: DatasetVersionRecord,
  facets: Facets,
  createdByRun: RunJson | null,
): DatasetVersionJson {
  return {
    id: { namespace: dataset.namespace, name: dataset.name },
    type: dataset.type,
    name: dataset.name,
    physicalName: dataset.name,
    createdAt: iso(version.createdAt),
    version: version.version,
    namespace: dataset.namespace,
    sourceName: dataset.sourceName,
    fields: fieldsJson(version.fields, dataset.fieldTags),
    tags: dataset.tags,
    lifecycleState: version.lifecycleState,
    description: dataset.description,
    // Marquez's schema versions (a uuid over field names and types) are not tracked.
    currentSchemaVersion: null,
    createdByRun,
    facets,
  };
}

/**
 * Marquez's run args: those a run created through the legacy API was given (its LEGACY_RUN_ARGS_FACET), then
 * those built from the nominalTime and parent run facets (nominal_start_time, nominal_end_time, run_id, name,
 * namespace), with the values as the producer wrote them.
 */
function runArgs(facets: Facets): Record<string, string> {
  const args: Record<string, string> = {};
  const legacy = facets[LEGACY_RUN_ARGS_FACET];
  if (isObject(legacy) && isObject(legacy.args)) {
    for (const [key, value] of Object.entries(legacy.args)) if (typeof value === 'string') args[key] = value;
  }
  const nominal = facets.nominalTime;
  if (isObject(nominal)) {
    if (typeof nominal.nominalStartTime === 'string') args.nominal_start_time = nominal.nominalStartTime;
    if (typeof nominal.nominalEndTime === 'string') args.nominal_end_time = nominal.nominalEndTime;
  }
  const parent = facets.parent ?? facets.parentRun;
  if (isObject(parent) && isObject(parent.run) && isObject(parent.job)) {
    if (typeof parent.run.runId === 'string') args.run_id = parent.run.runId;
    if (typeof parent.job.name === 'string') args.name = parent.job.name;
    if (typeof parent.job.namespace === 'string') args.namespace = parent.job.namespace;
  }
  return args;
}

/** Builds a Run from its record, its latest merged run facets and the dataset versions it read and wrote. */
/**
 * Whether a run is stale: RUNNING with its last event (`updatedAt`) more than `staleAfterMs` before `now` (the
 * wall clock: a run is stale because nothing arrived for so long, whatever the event times of other runs).
 */
export function isStaleRun(
  record: Pick<RunRecord, 'state' | 'updatedAt'>,
  staleAfterMs: number,
  now = Date.now(),
): boolean {
  return record.state === 'RUNNING' && now - record.updatedAt.getTime() > staleAfterMs;
}

/** A run's startedAt, endedAt and durationMs (null unless both ends are known), as every Run shows them. */
export function runTimesJson(record: Pick<RunRecord, 'startedAt' | 'endedAt'>): {
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
} {
  const { startedAt, endedAt } = record;
  return {
    startedAt: isoOrNull(startedAt),
    endedAt: isoOrNull(endedAt),
    durationMs: startedAt !== null && endedAt !== null ? endedAt.getTime() - startedAt.getTime() : null,
  };
}

/** Builds a Run; with `staleAfterMs`, a stale run (see {@link isStaleRun}) is flagged. */
export function runJson(
  record: RunRecord,
  facets: Facets,
  io: readonly { direction: number; namespace: string; name: string; version: string; facets: Facets }[],
  staleAfterMs?: number,
): RunJson {
  const versions = (direction: number) =>
    io
      .filter((entry) => entry.direction === direction)
      .map((entry) => ({
        datasetVersionId: { namespace: entry.namespace, name: entry.name, version: entry.version },
        facets: entry.facets,
      }));
  return {
    id: record.uuid,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    nominalStartTime: isoOrNull(record.nominalStartTime),
    nominalEndTime: isoOrNull(record.nominalEndTime),
    state: record.state,
    ...runTimesJson(record),
    args: runArgs(facets),
    ...(record.jobVersion !== null
      ? { jobVersion: { namespace: record.namespace, name: record.jobName, version: record.jobVersion } }
      : {}),
    inputDatasetVersions: versions(0),
    outputDatasetVersions: versions(1),
    facets,
    error: runErrorOf(facets),
    ...(staleAfterMs !== undefined && isStaleRun(record, staleAfterMs) ? { stale: true as const } : {}),
    ...contradiction(record.terminalsSeen),
    ...(record.execution === 'executed' ? {} : { execution: record.execution }),
  };
}

/** The contradictoryStates field of a run whose events reported more than one terminal state, else nothing. */
export function contradiction(terminalsSeen: number): Pick<RunJson, 'contradictoryStates'> {
  const states = contradictoryStates(terminalsSeen);
  return states.length > 0 ? { contradictoryStates: states } : {};
}

type GraphDeps = Pick<AppDeps, 'state' | 'graph'>;

/** The inputs and outputs of a job: `edges` when given (those of a past time), else its current edges. */
function jobEdges(deps: GraphDeps, id: number, edges: JobEdges | undefined) {
  return {
    inputs: datasetRefs(deps.state, edges?.inputs ?? deps.graph.datasetsOf(id, 0)),
    outputs: datasetRefs(deps.state, edges?.outputs ?? deps.graph.datasetsOf(id, 1)),
  };
}

/**
 * Builds the lineage-graph data of a job (Marquez's JobData); inputs and outputs are its current edges, or
 * `edges` (those of a past time) when given.
 */
export function jobNodeData(
  deps: GraphDeps,
  record: JobRecord,
  latestRun: RunJson | null,
  edges?: JobEdges,
): JobNodeData {
  return {
    id: { namespace: record.namespace, name: record.name },
    type: record.type,
    name: record.name,
    simpleName: record.simpleName,
    ...parentOf(record),
    ...(latestRun ? { currentRunUuid: latestRun.id } : {}),
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    namespace: record.namespace,
    ...jobEdges(deps, record.id, edges),
    location: record.location,
    description: record.description,
    latestRun,
  };
}

function parentOf(record: JobRecord): { parentJobName?: string; parentJobUuid?: string } {
  if (record.parentName === null || record.parentNamespace === null) return {};
  return {
    parentJobName: record.parentName,
    parentJobUuid: jobUuid(record.parentNamespace, record.parentName),
  };
}

/**
 * Builds a Job: inputs and outputs are its current edges in the lineage graph (soft-deleted datasets left
 * out), or `edges` (those of a past time) when given; latestRun the first of `latestRuns` (newest first), null
 * when the job has no run, as in Marquez.
 */
export function jobJson(
  deps: GraphDeps,
  record: JobRecord,
  facets: Facets,
  latestRuns: readonly RunJson[],
  edges?: JobEdges,
): JobJson {
  return {
    id: { namespace: record.namespace, name: record.name },
    type: record.type,
    name: record.name,
    simpleName: record.simpleName,
    ...parentOf(record),
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    namespace: record.namespace,
    ...jobEdges(deps, record.id, edges),
    location: record.location,
    description: record.description,
    latestRun: latestRuns[0] ?? null,
    latestRuns: latestRuns.length > 0 ? [...latestRuns] : null,
    facets,
    currentVersion: record.currentVersion,
    labels: jobLabels(facets),
    tags: tagsOfJob(record.tags, facets),
  };
}

const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** Marquez's job labels: the jobType facet's `jobType` then its `integration` (e.g. `["DAG", "AIRFLOW"]`). */
function jobLabels(facets: Facets): string[] {
  const jobType = facets.jobType as Record<string, unknown> | undefined;
  return [textOf(jobType?.jobType), textOf(jobType?.integration)].filter((label) => label !== undefined);
}

/**
 * A job's tags: those set through the API and those of its `tags` job facet (TagsJobFacet), named `key`, or
 * `key:value` when the value says more than "true". Sorted, each once.
 */
function tagsOfJob(apiTags: readonly string[], facets: Facets): string[] {
  const facet = facets.tags as { tags?: unknown } | undefined;
  const fromFacet = (Array.isArray(facet?.tags) ? (facet.tags as unknown[]) : []).flatMap((tag) => {
    const { key, value } = (typeof tag === 'object' && tag !== null ? tag : {}) as Record<string, unknown>;
    const name = textOf(key);
    if (name === undefined) return [];
    const detail = textOf(value);
    return [detail === undefined || detail.toLowerCase() === 'true' ? name : `${name}:${detail}`];
  });
  return [...new Set([...apiTags, ...fromFacet])].sort();
}

/** Builds a JobVersion; `latestRun` is left out when no run ran the version. */
export function jobVersionJson(
  job: { namespace: string; name: string },
  version: JobVersionRecord,
  latestRun: RunJson | undefined,
): JobVersionJson {
  return {
    id: { namespace: job.namespace, name: job.name, version: version.version },
    name: job.name,
    createdAt: iso(version.createdAt),
    version: version.version,
    namespace: job.namespace,
    location: version.location,
    // Stored as jsonb, whose key order is not the API's.
    inputs: version.inputs.map(({ namespace, name }) => ({ namespace, name })),
    outputs: version.outputs.map(({ namespace, name }) => ({ namespace, name })),
    ...(latestRun ? { latestRun } : {}),
  };
}

// ---- loaders: a fixed number of queries whatever the page size -------------------------------------------

/** The Run of each record (its facets and dataset versions in one query each), in the records' order. */
export async function runsJson(
  db: Queryable,
  records: readonly RunRecord[],
  staleAfterMs?: number,
): Promise<RunJson[]> {
  const uuids = [...new Set(records.map((record) => record.uuid))];
  const [facets, io] = await Promise.all([latestFacets(db, 'run', uuids), runIo(db, uuids)]);
  return records.map((record) =>
    runJson(record, facets.get(record.uuid) ?? {}, io.get(record.uuid) ?? [], staleAfterMs),
  );
}

/** The Runs with these uuids (three queries); unknown uuids are absent from the map. */
export async function loadRuns(
  db: Queryable,
  uuids: readonly string[],
  staleAfterMs?: number,
): Promise<Map<string, RunJson>> {
  const unique = [...new Set(uuids)];
  const [records, facets, io] = await Promise.all([
    findRuns(db, unique),
    latestFacets(db, 'run', unique),
    runIo(db, unique),
  ]);
  return new Map(
    records.map((record) => [
      record.uuid,
      runJson(record, facets.get(record.uuid) ?? {}, io.get(record.uuid) ?? [], staleAfterMs),
    ]),
  );
}

/** The Dataset of each record, with its latest merged facets and column lineage, in the records' order. */
export async function datasetsJson(db: Queryable, records: readonly DatasetRecord[]): Promise<DatasetJson[]> {
  const ids = records.map((record) => record.id);
  const [facets, lineage] = await Promise.all([datasetFacets(db, ids), columnLineageInto(db, ids)]);
  return records.map((record) =>
    datasetJson(record, facets.get(record.id) ?? {}, lineage.get(record.id) ?? []),
  );
}

/** Datasets by id with facets and column lineage (three queries run together); unknown ids are absent. */
export async function loadDatasets(db: Queryable, ids: readonly number[]): Promise<Map<number, DatasetJson>> {
  const [records, facets, lineage] = await Promise.all([
    findDatasets(db, ids),
    datasetFacets(db, ids),
    columnLineageInto(db, ids),
  ]);
  return new Map(
    records.map((record) => [
      record.id,
      datasetJson(record, facets.get(record.id) ?? {}, lineage.get(record.id) ?? []),
    ]),
  );
}

/**
 * The lineage-graph data of datasets by id, in one query (for GET /lineage). Hidden datasets are included:
 * the caller decides what the graph shows.
 */
export async function loadDatasetNodeData(
  db: Queryable,
  ids: readonly number[],
): Promise<Map<number, DatasetNodeData>> {
  const records = await findDatasets(db, ids);
  return new Map(records.map((record) => [record.id, datasetNodeData(record)]));
}

/** How many runs a Job shows in latestRuns. */
const LATEST_RUNS = 10;

async function assembleJobs(
  deps: Pick<AppDeps, 'db' | 'state' | 'graph'> & { readonly config?: Pick<ServerConfig, 'staleRunAfterMs'> },
  records: readonly JobRecord[],
  facets: Map<number, Facets>,
  latest: Map<number, RunRecord[]>,
): Promise<JobJson[]> {
  const runs = await runsJson(deps.db, [...latest.values()].flat(), deps.config?.staleRunAfterMs);
  const byUuid = new Map(runs.map((run) => [run.id, run]));
  return records.map((record) =>
    jobJson(
      deps,
      record,
      facets.get(record.id) ?? {},
      (latest.get(record.id) ?? []).map((run) => byUuid.get(run.uuid)!),
    ),
  );
}

/** The Job of each record, with its facets and latest 10 runs, in the records' order. */
export async function jobsJson(
  deps: Pick<AppDeps, 'db' | 'state' | 'graph'>,
  records: readonly JobRecord[],
): Promise<JobJson[]> {
  const ids = records.map((record) => record.id);
  const [facets, latest] = await Promise.all([
    latestFacets(deps.db, 'job', ids),
    latestRunsOfJobs(deps.db, ids, LATEST_RUNS),
  ]);
  return assembleJobs(deps, records, facets, latest);
}

/** Jobs by id with facets and latest runs (three queries run together, then three for the runs). */
export async function loadJobs(
  deps: Pick<AppDeps, 'db' | 'state' | 'graph'>,
  ids: readonly number[],
): Promise<Map<number, JobJson>> {
  const [records, facets, latest] = await Promise.all([
    findJobs(deps.db, ids),
    latestFacets(deps.db, 'job', ids),
    latestRunsOfJobs(deps.db, ids, LATEST_RUNS),
  ]);
  const jobs = await assembleJobs(deps, records, facets, latest);
  return new Map(jobs.map((job, index) => [records[index]!.id, job]));
}

/**
 * The lineage-graph data of jobs by id, with each job's latest run (for GET /lineage): four queries
 * whatever the number of jobs. Hidden jobs are included: the caller decides what the graph shows.
 */
export async function loadJobNodeData(
  deps: Pick<AppDeps, 'db' | 'state' | 'graph'>,
  ids: readonly number[],
): Promise<Map<number, JobNodeData>> {
  const [records, latest] = await Promise.all([findJobs(deps.db, ids), latestRunsOfJobs(deps.db, ids, 1)]);
  const runs = await runsJson(deps.db, [...latest.values()].flat());
  const byUuid = new Map(runs.map((run) => [run.id, run]));
  return new Map(
    records.map((record) => {
      const latestRun = latest.get(record.id)?.[0];
      return [record.id, jobNodeData(deps, record, (latestRun && byUuid.get(latestRun.uuid)) ?? null)];
    }),
  );
}

// ---- HTTP helpers shared by the read route modules ------------------------------------------------------

/**
 * Route option: serialise responses with JSON.stringify. Fastify's compiled serialisers drop properties a
 * schema does not list and nulls a schema does not allow; Marquez clients need both (facets are open-ended,
 * empty Optionals are null), so the response schemas here document, and never filter.
 */
export const plainJson = {
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
} as const;

/** The largest limit or offset: Marquez's (a Java int); beyond it a request is a 400, never a database error. */
export const MAX_PAGE = 2_147_483_647;

/** limit and offset, with Marquez's defaults. */
export function pageParams(defaultLimit = 100) {
  return {
    limit: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_PAGE,
      default: defaultLimit,
      description: 'Most items to return',
    },
    offset: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_PAGE,
      default: 0,
      description: 'Items to skip',
    },
  } as const;
}

/** PostgreSQL text cannot hold U+0000: text the API stores must not contain it (a 400 instead of a 500). */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/** Stored text, in a request body. */
export const storedText = { type: 'string', pattern: NO_NUL_PATTERN } as const;

/** Querystring of a paged list. */
export interface PageQuery {
  limit: number;
  offset: number;
}

/**
 * A preValidation hook that parses a JSON request body, so that the route's body schema validates the
 * object. The app keeps bodies as text (ingest stores events verbatim), so routes that take JSON use this.
 */
export function parseJsonBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const { body } = request;
  // No body at all is an empty object: the body schema then names what is missing.
  if (body === undefined || body === null || (typeof body === 'string' && body.trim() === '')) {
    request.body = {};
    return done();
  }
  if (typeof body !== 'string') return done();
  try {
    request.body = JSON.parse(body) as unknown;
    done();
  } catch (error) {
    done(
      new HeadwaterError(
        'MALFORMED_JSON',
        `The request body is not valid JSON (${(error as Error).message}). Send a JSON object.`,
        { cause: error },
      ),
    );
  }
}

// ---- schemas (OpenAPI documentation) -----------------------------------------------------------------------

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const uuid = { type: 'string', format: 'uuid' } as const;
const facets = {
  type: 'object',
  additionalProperties: true,
  description: 'Facets by name: per name the value with the newest eventTime',
} as const;
const stringList = { type: 'array', items: string } as const;

function object(properties: Record<string, unknown>, optional: readonly string[] = []) {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    additionalProperties: false,
  } as const;
}

const ref = (id: string) => ({ $ref: `${id}#` }) as const;
const nullableRef = (id: string) => ({ anyOf: [ref(id), { type: 'null' }] }) as const;

/** An input field of column lineage, as Marquez shows it. */
/** A transformation of an input column (the spec's transformations, in the column-lineage facet 1-2-0). */
const transformationSchema = object({
  type: string,
  subtype: string,
  description: nullableString,
  masking: { type: 'boolean' },
});

const inputFieldSchema = object(
  {
    namespace: string,
    dataset: string,
    field: string,
    transformationDescription: { ...string, description: "Marquez's: the first transformation's" },
    transformationType: { ...string, description: "Marquez's: the first transformation's" },
    transformations: {
      type: 'array',
      items: transformationSchema,
      description: 'Headwater: every transformation of the input, one per type and subtype (JOIN, FILTER...)',
    },
  },
  ['transformationDescription', 'transformationType', 'transformations'],
);

const datasetNodeDataProperties = {
  id: ref('EntityId'),
  type: { type: 'string', enum: ['DB_TABLE', 'STREAM'] },
  name: string,
  physicalName: string,
  createdAt: time,
  updatedAt: time,
  namespace: string,
  sourceName: string,
  fields: { type: 'array', items: ref('Field') },
  tags: stringList,
  lastModifiedAt: nullableTime,
  description: nullableString,
  lastLifecycleState: nullableString,
};

const jobNodeDataProperties = {
  id: ref('EntityId'),
  type: { type: 'string', enum: ['BATCH', 'STREAM', 'SERVICE'] },
  name: string,
  simpleName: string,
  parentJobName: string,
  parentJobUuid: { ...uuid, description: 'See jobUuid: the name-based uuid of job:<namespace>:<name>' },
  createdAt: time,
  updatedAt: time,
  namespace: string,
  inputs: { type: 'array', items: ref('EntityId') },
  outputs: { type: 'array', items: ref('EntityId') },
  location: nullableString,
  description: nullableString,
  latestRun: nullableRef('Run'),
};

/** A Run's `error` (see runErrorOf). */
export const runErrorSchema = {
  anyOf: [
    object({
      message: string,
      stackTrace: nullableString,
      programmingLanguage: nullableString,
      facet: { type: 'string', enum: [...ERROR_FACETS] },
    }),
    { type: 'null' },
  ],
  description:
    "Beyond Marquez: the error of a failed run, from the errorMessage facet, else the Spark listener's spark.exception",
} as const;

/** A Run's `contradictoryStates`. */
export const contradictoryStatesSchema = {
  type: 'array',
  items: { type: 'string', enum: ['FAILED', 'ABORTED', 'COMPLETED'] },
  description:
    "Headwater: present when the run's events reported contradictory terminal states (the Spark " +
    'listener sends FAIL, then COMPLETE): each of them, most severe first; `state` is the first',
} as const;

/** A Run's `stale` flag. */
/** The `execution` field of a Run. */
export const executionSchema = {
  type: 'string',
  enum: EXECUTION_OUTCOMES.filter((outcome) => outcome !== 'executed'),
  description:
    'Headwater: present when the run did not execute (skipped, reused or no-op, as its producer said): ' +
    'neither a failure nor a completion, and it refreshed no data',
} as const;

export const staleRunSchema = {
  type: 'boolean',
  enum: [true],
  description:
    'Headwater: present on a RUNNING run with no event for longer than --stale-run-after ' +
    '(HEADWATER_STALE_RUN_AFTER, default 24h); the stored events are unchanged',
} as const;

/**
 * The shared schemas of the read API, registered once with `app.addSchema` and referenced as `{$ref:
 * '<$id>#'}`; @fastify/swagger publishes them as OpenAPI components.
 */
export const sharedSchemas = titled([
  { $id: 'EntityId', ...object({ namespace: string, name: string }) },
  { $id: 'VersionId', ...object({ namespace: string, name: string, version: uuid }) },
  {
    $id: 'Error',
    ...object({ code: { type: 'integer' }, error: string, message: string, errors: stringList }, ['errors']),
  },
  {
    $id: 'Namespace',
    ...object({
      name: string,
      createdAt: time,
      updatedAt: time,
      ownerName: string,
      description: nullableString,
      isHidden: { type: 'boolean' },
    }),
  },
  {
    $id: 'Source',
    ...object({
      type: string,
      name: string,
      createdAt: time,
      updatedAt: time,
      connectionUrl: string,
      description: nullableString,
    }),
  },
  { $id: 'Tag', ...object({ name: string, description: nullableString }) },
  {
    $id: 'Field',
    ...object({ name: string, type: string, tags: stringList, description: nullableString }, ['type']),
  },
  {
    $id: 'ColumnLineage',
    ...object(
      {
        name: string,
        inputFields: {
          type: 'array',
          items: inputFieldSchema,
        },
        transformationDescription: string,
        transformationType: string,
      },
      ['transformationDescription', 'transformationType'],
    ),
  },
  {
    $id: 'DatasetVersionRef',
    ...object({ datasetVersionId: ref('VersionId'), facets }),
  },
  {
    $id: 'Run',
    ...object(
      {
        id: uuid,
        createdAt: { ...time, description: 'eventTime of the first event of the run' },
        updatedAt: { ...time, description: 'eventTime of the last event of the run' },
        nominalStartTime: nullableTime,
        nominalEndTime: nullableTime,
        state: { type: 'string', enum: ['NEW', 'RUNNING', 'COMPLETED', 'ABORTED', 'FAILED'] },
        startedAt: { ...nullableTime, description: 'The earliest START, else the earliest RUNNING' },
        endedAt: { ...nullableTime, description: 'The terminal event' },
        durationMs: { type: ['integer', 'null'], description: 'endedAt - startedAt' },
        args: {
          type: 'object',
          additionalProperties: string,
          description: 'From the nominalTime and parent facets',
        },
        jobVersion: ref('VersionId'),
        inputDatasetVersions: { type: 'array', items: ref('DatasetVersionRef') },
        outputDatasetVersions: { type: 'array', items: ref('DatasetVersionRef') },
        facets,
        error: runErrorSchema,
        stale: staleRunSchema,
        contradictoryStates: contradictoryStatesSchema,
        execution: executionSchema,
      },
      ['jobVersion', 'stale', 'contradictoryStates', 'execution'],
    ),
  },
  { $id: 'DatasetData', ...object(datasetNodeDataProperties) },
  {
    $id: 'Dataset',
    ...object(
      {
        ...datasetNodeDataProperties,
        currentVersion: { type: ['string', 'null'], format: 'uuid' },
        columnLineage: { type: 'array', items: ref('ColumnLineage') },
        datasetInputFields: {
          type: 'array',
          description:
            "Headwater: input columns that influence the whole dataset (the columnLineage facet's `dataset` " +
            'list: JOIN, FILTER, GROUP_BY, SORT...); column impact analysis counts them',
          items: inputFieldSchema,
        },
        facets,
        deleted: { type: 'boolean', description: 'The last lifecycle state was DROP' },
        aliasOf: {
          ...ref('EntityId'),
          description:
            'Headwater: the dataset this one was declared an alias of (lineage shows that one instead); ' +
            'left out when it is no alias',
        },
        aliases: {
          type: 'array',
          items: ref('EntityId'),
          description: 'Headwater: the datasets declared aliases of this one; left out when there are none',
        },
      },
      ['columnLineage', 'datasetInputFields', 'aliasOf', 'aliases'],
    ),
  },
  {
    $id: 'Alias',
    ...object({
      alias: ref('EntityId'),
      dataset: { ...ref('EntityId'), description: 'The dataset the alias is' },
      createdAt: time,
    }),
  },
  {
    $id: 'DatasetVersion',
    ...object({
      id: ref('EntityId'),
      type: { type: 'string', enum: ['DB_TABLE', 'STREAM'] },
      name: string,
      physicalName: string,
      createdAt: time,
      version: uuid,
      namespace: string,
      sourceName: string,
      fields: { type: 'array', items: ref('Field') },
      tags: stringList,
      lifecycleState: nullableString,
      description: nullableString,
      currentSchemaVersion: { type: ['string', 'null'], format: 'uuid' },
      createdByRun: nullableRef('Run'),
      facets,
    }),
  },
  {
    $id: 'JobData',
    ...object({ ...jobNodeDataProperties, currentRunUuid: uuid }, [
      'parentJobName',
      'parentJobUuid',
      'currentRunUuid',
    ]),
  },
  {
    $id: 'Job',
    ...object(
      {
        ...jobNodeDataProperties,
        latestRuns: { anyOf: [{ type: 'array', items: ref('Run') }, { type: 'null' }] },
        facets,
        currentVersion: { type: ['string', 'null'], format: 'uuid' },
        labels: stringList,
        tags: stringList,
      },
      ['parentJobName', 'parentJobUuid'],
    ),
  },
  {
    $id: 'JobVersion',
    ...object(
      {
        id: ref('VersionId'),
        name: string,
        createdAt: time,
        version: uuid,
        namespace: string,
        location: nullableString,
        inputs: { type: 'array', items: ref('EntityId') },
        outputs: { type: 'array', items: ref('EntityId') },
        latestRun: ref('Run'),
      },
      ['latestRun'],
    ),
  },
  {
    $id: 'SearchResult',
    ...object({
      type: { type: 'string', enum: ['DATASET', 'JOB'] },
      name: string,
      updatedAt: time,
      namespace: string,
      nodeId: string,
    }),
  },
  {
    $id: 'LineageEventsBucket',
    ...object({
      startInterval: time,
      endInterval: time,
      fail: { type: 'integer' },
      start: { type: 'integer' },
      complete: { type: 'integer' },
      abort: { type: 'integer' },
    }),
  },
  { $id: 'CountBucket', ...object({ startInterval: time, endInterval: time, count: { type: 'integer' } }) },
] as const);

/** Gives each shared schema its $id as title, so that OpenAPI viewers name the components. */
function titled<T extends readonly { $id: string }[]>(
  schemas: T,
): { [K in keyof T]: T[K] & { title: string } } {
  return schemas.map((schema) => ({ ...schema, title: schema.$id })) as {
    [K in keyof T]: T[K] & { title: string };
  };
}

/** A response schema `{<key>: [<$id>], totalCount?}` (Marquez's list wrappers). */
export function listSchema(key: string, id: string, withTotal: boolean) {
  return object({
    [key]: { type: 'array', items: ref(id) },
    ...(withTotal ? { totalCount: { type: 'integer', description: 'Items on all pages' } } : {}),
  });
}

/** Response schemas: `ok` for 200, the error shape for the listed error statuses. */
export function responses(ok: unknown, ...errors: number[]): Record<number, unknown> {
  const result: Record<number, unknown> = { 200: ok };
  for (const status of errors) result[status] = ref('Error');
  return result;
}

export { ref as schemaRef };
