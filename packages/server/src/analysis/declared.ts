/**
 * Declared against observed lineage: the inputs and outputs a job's latest JobEvent declares (a pipeline's
 * structure pushed without a run, such as `kedro openlineage push`) compared with those its latest completed run
 * read and wrote. For a parent job (a pipeline), the jobs below it are compared too, each against its own latest
 * completed run: its child jobs (see childJobsOf: the jobs whose runs name its runs as parent, or whose JobEvent names
 * it in `headwater_parentJob`), their child jobs (a Kedro modular pipeline inside a pipeline, namespaces nesting), and
 * so on at any depth. A job that sits under two of them (a node reused by two pipelines) is compared once and names
 * both as its parents.
 */
import { Closed, Nullable, StringEnum, Time, Type, type Static } from '../core/json-schema.js';
import {
  childJobsOf,
  latestDeclarations,
  latestRunOfJobs,
  type RunOutcome,
} from '../store/queries/analysis.js';
import { runIo } from '../store/queries/runs.js';
import { compareText, datasetNodeId, jobNodeId, type AnalysisSource, type AnalysisTime } from './context.js';

/** One edge of a job: it reads (input) or writes (output) the dataset. */
export const JobEdgeSchema = Closed({
  job: Type.String(),
  direction: StringEnum(['input', 'output']),
  dataset: Type.String(),
});
export type JobEdge = Static<typeof JobEdgeSchema>;

/** How one job's declaration and latest completed run compare. */
export const JobComparisonSchema = Closed({
  job: Type.String(),
  parents: Type.Array(Type.String(), {
    description:
      'The jobs of this answer it is a child job of, by nodeId (a node reused by two pipelines names both); ' +
      'empty for the job asked about',
  }),
  declaredAt: Nullable(Time(), { description: "The eventTime of the job's latest JobEvent; null: none" }),
  run: Nullable(Closed({ id: Type.String(), startedAt: Nullable(Time()), endedAt: Nullable(Time()) }), {
    description:
      "The job's latest completed run (by start, as run lists order runs); null when it never completed",
  }),
  declared: Type.Integer(),
  observed: Type.Integer(),
  notObserved: Type.Integer({
    description:
      'Declared edges its latest completed run did not touch (all of them when it never completed)',
  }),
  undeclared: Type.Integer({
    description:
      'Edges its latest completed run touched that the declaration lacks (all of them when it has none)',
  }),
});
export type JobComparison = Static<typeof JobComparisonSchema>;

/** The answer of GET /api/v1/analysis/declared-lineage. */
export const DeclaredLineageResultSchema = Closed({
  job: Type.String(),
  at: Time({ description: 'The moment looked at: declarations and runs later than it are ignored' }),
  jobs: Type.Array(JobComparisonSchema, {
    description: 'The job first, then every job below it (child jobs, their child jobs...) by nodeId',
  }),
  declaredNotObserved: Type.Array(JobEdgeSchema),
  observedNotDeclared: Type.Array(JobEdgeSchema),
});
export type DeclaredLineageResult = Static<typeof DeclaredLineageResultSchema>;

const DIRECTIONS = ['input', 'output'] as const;

type Edge = { readonly direction: number; readonly datasetId: number };

const runSummary = (run: RunOutcome | undefined): JobComparison['run'] =>
  run
    ? {
        id: run.uuid,
        startedAt: run.startedAt?.toISOString() ?? null,
        endedAt: run.endedAt?.toISOString() ?? null,
      }
    : null;

const compareEdges = (a: JobEdge, b: JobEdge) =>
  compareText(a.job, b.job) || compareText(a.direction, b.direction) || compareText(a.dataset, b.dataset);

/**
 * `jobId` and every job below it at `at`, level by level (one query a level): job id -> the ids of its parents among
 * them. A job met again (a cycle of parent facets, or two parents) is not descended into twice, so this ends.
 */
async function jobsBelow(db: AnalysisSource['db'], jobId: number, at: Date): Promise<Map<number, number[]>> {
  const parents = new Map<number, number[]>([[jobId, []]]);
  let level = [jobId];
  while (level.length > 0) {
    const children = await childJobsOf(db, level, at);
    const next: number[] = [];
    for (const parentId of level) {
      for (const childId of children.get(parentId) ?? []) {
        if (childId === jobId) continue;
        const known = parents.get(childId);
        if (known) known.push(parentId);
        else {
          parents.set(childId, [parentId]);
          next.push(childId);
        }
      }
    }
    level = next;
  }
  return parents;
}

/** Compares the declared and observed edges of `jobId` and every job below it (three queries, and one a level). */
export async function declaredLineage(
  source: AnalysisSource,
  jobId: number,
  time: AnalysisTime,
): Promise<DeclaredLineageResult> {
  const { db, state } = source;
  const below = await jobsBelow(db, jobId, time.at);
  const jobIds = [...below.keys()];
  const [declarations, runs] = await Promise.all([
    latestDeclarations(db, jobIds, time.at),
    latestRunOfJobs(db, jobIds, time.at, { completed: true }),
  ]);
  const io = await runIo(
    db,
    [...runs.values()].map((run) => run.uuid),
    time.at,
  );
  const edgeKey = (direction: number, datasetId: number) => `${direction}:${datasetId}`;
  const declaredNotObserved: JobEdge[] = [];
  const observedNotDeclared: JobEdge[] = [];
  const jobs = jobIds.map((id): JobComparison => {
    const job = jobNodeId(state, id);
    const declaration = declarations.get(id);
    const run = runs.get(id);
    const declared = new Map(
      (declaration?.edges ?? []).map((e) => [edgeKey(e.direction, e.datasetId), e] as const),
    );
    const observed = new Map(
      (run ? (io.get(run.uuid) ?? []) : []).map((e) => [edgeKey(e.direction, e.datasetId), e] as const),
    );
    const missing = (from: ReadonlyMap<string, Edge>, other: ReadonlyMap<string, Edge>, into: JobEdge[]) => {
      let count = 0;
      for (const [key, edge] of from) {
        if (other.has(key)) continue;
        into.push({
          job,
          direction: DIRECTIONS[edge.direction]!,
          dataset: datasetNodeId(state, edge.datasetId),
        });
        count++;
      }
      return count;
    };
    return {
      job,
      parents: (below.get(id) ?? []).map((parentId) => jobNodeId(state, parentId)).sort(compareText),
      declaredAt: declaration?.at.toISOString() ?? null,
      run: runSummary(run),
      declared: declared.size,
      observed: observed.size,
      notObserved: missing(declared, observed, declaredNotObserved),
      undeclared: missing(observed, declared, observedNotDeclared),
    };
  });
  const [self, ...children] = jobs;
  return {
    job: self!.job,
    at: time.at.toISOString(),
    jobs: [self!, ...children.sort((a, b) => compareText(a.job, b.job))],
    declaredNotObserved: declaredNotObserved.sort(compareEdges),
    observedNotDeclared: observedNotDeclared.sort(compareEdges),
  };
}
