import { HeadwaterError } from '../core/errors.js';
import {
  codeLocationOf,
  DEFAULT_SOURCE_NAME,
  descriptionOf,
  jobTypeOf,
  sourceNameOf,
} from '../model/describing-facets.js';
import { datasetVersionUuid, jobVersionUuid, simpleJobName } from '../model/identity.js';
import type { Queryable } from '../store/db.js';
import { DESCRIBING_FACETS } from '../store/model-state.js';
import { historyFrom } from '../store/retention.js';
import { columnLineageInto, datasetTags, type DatasetRecord } from '../store/queries/datasets.js';
import {
  datasetsAsOf,
  facetsAsOf,
  jobsAsOf,
  runLocationsAsOf,
  runRecordAsOf,
  runsOfJobsAsOf,
  type DatasetAsOf,
  type JobAsOf,
  type RunAsOf,
} from '../store/queries/history.js';
import { withInputFacets, type Facets } from '../store/queries/facets.js';
import { jobTags, type JobRecord } from '../store/queries/jobs.js';
import { runExecutions, runIo, type RunRecord } from '../store/queries/runs.js';
import type { ServerConfig } from '../config/server-config.js';
import type { AppDeps } from './deps.js';
import { datasetJson, datasetNodeData } from './json/dataset.js';
import { jobJson, jobNodeData } from './json/job.js';
import { runJson } from './json/run.js';
import type { DatasetJson, DatasetNodeData } from './schemas/dataset.js';
import type { JobJson, JobNodeData } from './schemas/job.js';
import type { RunJson } from './schemas/run.js';

/**
 * Time travel: the read API's shapes as they were at an event time. Each loader takes what the history tables
 * say of that time (store/queries/history.ts) and lays it over today's records. Descriptions, source names, job
 * types and code locations come from the facets of then; tags, set through the API, are today's.
 */

/** The `asOf` query parameter, shared by every route that can answer for the past. */
export const asOfParam = {
  type: 'string',
  format: 'date-time',
  description:
    'Answer as of this event time (ISO 8601, inclusive): what a store holding only the events with ' +
    'eventTime <= asOf would answer.',
} as const;

/** Parses a time parameter (`asOf` unless named); undefined when absent. */
export function parseAsOf(value: string | undefined, name = 'asOf'): Date | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (!Number.isFinite(time)) {
    throw new HeadwaterError(
      'BAD_REQUEST',
      `${name} must be an ISO 8601 date-time; got ${JSON.stringify(value)}.`,
    );
  }
  return new Date(time);
}

/**
 * {@link parseAsOf}, refused with HISTORY_EXPIRED (410) when the time is before the retention window's horizon
 * (store/retention.ts): the history before it is partly deleted, and a truncated past would look like a real one.
 */
export async function retainedAsOf(
  db: Queryable,
  value: string | undefined,
  name = 'asOf',
): Promise<Date | undefined> {
  const at = parseAsOf(value, name);
  if (at !== undefined) await assertRetained(db, at, name);
  return at;
}

/** Throws HISTORY_EXPIRED when `at` is before the retention horizon. */
export async function assertRetained(db: Queryable, at: Date, name = 'asOf'): Promise<void> {
  const from = await historyFrom(db);
  if (from !== undefined && at.getTime() < from.getTime()) {
    throw new HeadwaterError(
      'HISTORY_EXPIRED',
      `${name} ${at.toISOString()} is before ${from.toISOString()}: the retention window (serve --retention-days) ` +
        'has deleted part of the history before then, so the store cannot say what it was. Ask for a time at or ' +
        `after ${from.toISOString()}.`,
    );
  }
}

/** A dataset record as it was, or undefined when nothing had named the dataset by then. */
function datasetRecordAsOf(
  record: DatasetRecord,
  past: DatasetAsOf | undefined,
  facets: Facets | undefined,
): DatasetRecord | undefined {
  if (!past) return undefined;
  // Named by a run or job but never described by then: the empty version it had (only named as a column-lineage
  // input: no version at all).
  const described = past.version !== null || !past.named;
  return {
    ...record,
    createdAt: past.createdAt,
    updatedAt: past.updatedAt,
    lastModifiedAt: past.lastModifiedAt,
    currentVersion: described ? past.version : datasetVersionUuid(record.namespace, record.name),
    fields: described ? past.fields : [],
    lifecycleState: past.lifecycleState,
    description: descriptionOf(facets?.documentation),
    sourceName: sourceNameOf(facets?.dataSource),
  };
}

type StoreDeps = Pick<AppDeps, 'db' | 'state'>;

/**
 * Datasets by id as they were at `at`; those unnamed by then are absent. What has no history (names, tags)
 * comes from the read model and the tag tables, not from the dataset rows, whose other columns are of now.
 */
export async function loadDatasetRecordsAsOf(
  { db, state }: StoreDeps,
  ids: readonly number[],
  at: Date,
): Promise<Map<number, DatasetRecord>> {
  const [tags, past, facets] = await Promise.all([
    datasetTags(db, ids),
    datasetsAsOf(db, ids, at),
    facetsAsOf<number>(db, 'dataset', ids, at, DESCRIBING_FACETS.dataset),
  ]);
  const result = new Map<number, DatasetRecord>();
  for (const id of ids) {
    const row = state.datasetsById.get(id);
    const namespace = row && state.namespacesById.get(row.namespaceId);
    if (!row || !namespace) continue;
    const base: DatasetRecord = {
      id,
      namespace: namespace.name,
      name: row.name,
      type: 'DB_TABLE',
      sourceName: DEFAULT_SOURCE_NAME,
      description: null,
      lifecycleState: null,
      lastModifiedAt: null,
      // Replaced by the times of then (datasetRecordAsOf).
      createdAt: new Date(0),
      updatedAt: new Date(0),
      isHidden: row.isHidden,
      currentVersion: null,
      fields: null,
      tags: tags.get(id)?.tags ?? [],
      fieldTags: tags.get(id)?.fieldTags ?? null,
    };
    const then = datasetRecordAsOf(base, past.get(id), facets.get(id));
    if (then) result.set(id, then);
  }
  return result;
}

/** The lineage-graph data of datasets as they were at `at`. */
export async function loadDatasetNodeDataAsOf(
  deps: StoreDeps,
  ids: readonly number[],
  at: Date,
): Promise<Map<number, DatasetNodeData>> {
  const records = await loadDatasetRecordsAsOf(deps, ids, at);
  return new Map([...records].map(([id, record]) => [id, datasetNodeData(record)]));
}

/** A Dataset as it was at `at` (facets and column lineage of then), or undefined if it did not exist. */
export async function loadDatasetAsOf(
  deps: StoreDeps,
  id: number,
  at: Date,
): Promise<DatasetJson | undefined> {
  const { db } = deps;
  const [records, facets, lineage] = await Promise.all([
    loadDatasetRecordsAsOf(deps, [id], at),
    facetsAsOf<number>(db, 'dataset', [id], at).then((own) => withInputFacets(db, own, [id], at)),
    columnLineageInto(db, [id], at),
  ]);
  const record = records.get(id);
  return record && datasetJson(record, facets.get(id) ?? {}, lineage.get(id) ?? []);
}

type GraphDeps = Pick<AppDeps, 'db' | 'state' | 'graph'>;

/** A job's record as it was: times, parent and what its facets of then describe. */
function jobRecordAsOf(
  deps: GraphDeps,
  record: JobRecord,
  past: JobAsOf,
  facets: Facets | undefined,
): JobRecord {
  const parent = past.parentJobId === null ? undefined : deps.state.jobsById.get(past.parentJobId);
  const parentNamespace = parent && deps.state.namespacesById.get(parent.namespaceId)?.name;
  return {
    ...record,
    createdAt: past.createdAt,
    updatedAt: past.updatedAt,
    parentNamespace: parentNamespace ?? null,
    parentName: parent && parentNamespace !== undefined ? parent.name : null,
    simpleName: parent ? simpleJobName(record.name, parent.name) : record.name,
    type: jobTypeOf(facets?.jobType),
    description: descriptionOf(facets?.documentation),
    location: codeLocationOf(facets?.sourceCodeLocation),
    currentVersion: null,
  };
}

/** Jobs by id as they were at `at`, with their newest `perJob` runs of then; those unnamed by then are absent. */
async function jobsAsOfWithRuns(
  deps: GraphDeps,
  ids: readonly number[],
  at: Date,
  perJob: number,
): Promise<{ record: JobRecord; runs: RunJson[] }[]> {
  const [tags, past, runsByJob, facets] = await Promise.all([
    jobTags(deps.db, ids),
    jobsAsOf(deps.db, ids, at),
    runsOfJobsAsOf(deps.db, ids, at, perJob),
    facetsAsOf<number>(deps.db, 'job', ids, at, DESCRIBING_FACETS.job),
  ]);
  const jobs = new Map<number, JobRecord>();
  for (const id of ids) {
    const row = deps.state.jobsById.get(id);
    const namespace = row && deps.state.namespacesById.get(row.namespaceId);
    const then = past.get(id);
    if (!row || !namespace || !then) continue;
    // Everything but the name, visibility and tags is of `at` (jobRecordAsOf).
    const base: JobRecord = {
      id,
      namespace: namespace.name,
      name: row.name,
      simpleName: row.name,
      type: 'BATCH',
      description: null,
      location: null,
      createdAt: then.createdAt,
      updatedAt: then.updatedAt,
      isHidden: row.isHidden,
      parentNamespace: null,
      parentName: null,
      currentVersion: null,
      tags: tags.get(id) ?? [],
    };
    jobs.set(id, jobRecordAsOf(deps, base, then, facets.get(id)));
  }
  const wanted: RunAsOf[] = [];
  for (const { runs, current } of runsByJob.values()) {
    wanted.push(...runs);
    if (current && 'run' in current) wanted.push(current.run);
  }
  const runs = await runsJsonAsOf(deps, wanted, at);
  return [...jobs.values()].map((record) => {
    const job = runsByJob.get(record.id);
    const current = job?.current;
    const currentVersion = !current
      ? null
      : 'run' in current
        ? (runs.get(current.run.uuid)?.jobVersion?.version ?? null)
        : current.version;
    return {
      record: { ...record, currentVersion },
      runs: (job?.runs ?? []).flatMap((run) => runs.get(run.uuid) ?? []),
    };
  });
}

/**
 * The Runs, as they were at `at`, of these runs-as-of. A run's job version is what it ran by then: its code
 * location and the datasets it had read and written.
 */
async function runsJsonAsOf(
  { db, state, config }: StoreDeps & { readonly config?: Pick<ServerConfig, 'staleRunAfterMs'> },
  runs: readonly RunAsOf[],
  at: Date,
): Promise<Map<string, RunJson>> {
  const byUuid = new Map(runs.map((run) => [run.uuid, run]));
  const uuids = [...byUuid.keys()];
  const [facets, io, locations, executions] = await Promise.all([
    facetsAsOf<string>(db, 'run', uuids, at),
    runIo(db, uuids, at),
    runLocationsAsOf(db, [...byUuid.values()], at),
    runExecutions(db, uuids),
  ]);
  const result = new Map<string, RunJson>();
  [...byUuid.values()].forEach((run, index) => {
    const job = state.jobsById.get(run.jobId);
    const namespace = job && state.namespacesById.get(job.namespaceId);
    if (!job || !namespace) return;
    const runFacets = facets.get(run.uuid) ?? {};
    const runIoThen = io.get(run.uuid) ?? [];
    const refs = (direction: number) =>
      runIoThen
        .filter((entry) => entry.direction === direction)
        .map(({ namespace, name }) => ({ namespace, name }));
    const version = jobVersionUuid(namespace.name, job.name, locations[index] ?? null, refs(0), refs(1));
    // Everything but the run's and its job's names is of `at` (runRecordAsOf).
    const base: RunRecord = {
      uuid: run.uuid,
      jobId: run.jobId,
      namespace: namespace.name,
      jobName: job.name,
      jobVersion: null,
      state: 'NEW',
      createdAt: new Date(run.aggregate.firstEventAt),
      updatedAt: new Date(run.aggregate.lastEventAt),
      nominalStartTime: null,
      nominalEndTime: null,
      startedAt: null,
      endedAt: null,
      terminalsSeen: 0,
      // Whether it executed is its present value: the rules that set it read assertions as well as facets, and
      // are not replayed by time.
      execution: executions.get(run.uuid) ?? 'executed',
    };
    result.set(
      run.uuid,
      runJson(runRecordAsOf(base, run, runFacets, version), runFacets, runIoThen, config?.staleRunAfterMs),
    );
  });
  return result;
}

/** The lineage-graph data of jobs as they were at `at`. */
export async function loadJobNodeDataAsOf(
  deps: GraphDeps,
  ids: readonly number[],
  at: Date,
): Promise<Map<number, JobNodeData>> {
  const [jobs, edges] = await Promise.all([
    // Without the config: lineage node data never flags stale runs (the present one is cached), like now.
    jobsAsOfWithRuns({ db: deps.db, state: deps.state, graph: deps.graph }, ids, at, 1),
    deps.graph.edgesAsOf(deps.db, ids, at.getTime()),
  ]);
  return new Map(
    jobs.map(({ record, runs }) => [
      record.id,
      jobNodeData(deps, record, runs[0] ?? null, edges.get(record.id)),
    ]),
  );
}

/** How many runs a Job shows in latestRuns (as for the present). */
const LATEST_RUNS = 10;

/** A Job as it was at `at` (facets, runs, inputs and outputs of then), or undefined if it did not exist. */
export async function loadJobAsOf(deps: GraphDeps, id: number, at: Date): Promise<JobJson | undefined> {
  const [jobs, facets, edges] = await Promise.all([
    jobsAsOfWithRuns(deps, [id], at, LATEST_RUNS),
    facetsAsOf<number>(deps.db, 'job', [id], at),
    deps.graph.edgesAsOf(deps.db, [id], at.getTime()),
  ]);
  const job = jobs[0];
  return job && jobJson(deps, job.record, facets.get(id) ?? {}, job.runs, edges.get(id));
}
