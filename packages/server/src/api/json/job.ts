/**
 * Marquez's Job, JobData and JobVersion, built from the store's records and the lineage graph (a job's inputs
 * and outputs are its edges there), and the loaders that read them for a page in a fixed number of queries.
 */
import type { ServerConfig } from '../../config/server-config.js';
import { jobUuid } from '../../model/identity.js';
import type { JobEdges } from '../../read-model/lineage-graph.js';
import { latestFacets, type Facets } from '../../store/queries/facets.js';
import { findJobs, type JobRecord, type JobVersionRecord } from '../../store/queries/jobs.js';
import { datasetRefs } from '../../store/queries/lookup.js';
import { latestRunsOfJobs, type RunRecord } from '../../store/queries/runs.js';
import type { AppDeps } from '../deps.js';
import type { JobJson, JobNodeData, JobVersionJson } from '../schemas/job.js';
import type { RunJson } from '../schemas/run.js';
import { runsJson } from './run.js';
import { iso } from './values.js';

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
