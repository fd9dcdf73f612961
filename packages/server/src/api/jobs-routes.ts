import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import {
  countJobs,
  findJobVersion,
  listJobs,
  listJobVersions,
  type JobFilter,
} from '../store/queries/jobs.js';
import { jobNamed, namespaceNamed } from '../store/queries/lookup.js';
import { countJobRuns, listJobRuns } from '../store/queries/runs.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import type { ServerConfig } from '../config/server-config.js';
import type { AppDeps } from './deps.js';
import { readableNamespaces } from './visibility.js';
import { asOfParam, loadJobAsOf, retainedAsOf } from './as-of.js';
import { Ref } from '../core/json-schema.js';
import { jobsJson, jobVersionJson, loadJobs } from './json/job.js';
import { loadRuns, runsJson } from './json/run.js';
import { pageParams, type PageQuery } from './paging.js';
import { plainJson } from './plain-json.js';
import { listSchema, responses } from './schemas/common.js';
import { type JobJson, JobSchema, JobVersionSchema } from './schemas/job.js';
import { RunSchema } from './schemas/run.js';

interface JobParams {
  namespace: string;
  job: string;
}

interface JobListQuery extends PageQuery {
  lastRunStates?: string[];
}

const text = { type: 'string' } as const;

function params(...extra: string[]) {
  const properties: Record<string, { type: 'string' }> = { namespace: text, job: text };
  for (const name of extra) properties[name] = text;
  return { type: 'object', properties, required: Object.keys(properties) } as const;
}

const jobListQuery = {
  type: 'object',
  properties: {
    lastRunStates: {
      type: 'array',
      // OTHER is in Marquez's enum; no Headwater run is ever in it.
      items: { type: 'string', enum: ['NEW', 'RUNNING', 'COMPLETED', 'ABORTED', 'FAILED', 'OTHER'] },
      description:
        'Only jobs whose latest run is in one of these states (repeatable, case-insensitive); jobs without runs are left out',
    },
    ...pageParams(),
  },
} as const;

const TAGS = ['Jobs'];

/** What the job routes need: the readers, when a run is stale, and the writer that soft-deletes and tags. */
export type JobRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph'> & {
  readonly config: Pick<ServerConfig, 'staleRunAfterMs'>;
  readonly pipeline: Pick<IngestPipeline, 'hide' | 'tag' | 'untag'>;
};

/** /api/v1/jobs and /api/v1/namespaces/{namespace}/jobs: jobs, their versions, runs, tags and soft delete. */
export const jobRoutes = fastifyPlugin<JobRouteDeps>(registerJobRoutes, { name: 'job-routes' });

function registerJobRoutes(app: FastifyInstance, deps: JobRouteDeps, done: (error?: Error) => void): void {
  const { db, state, pipeline } = deps;
  const base = '/api/v1/namespaces/:namespace/jobs';

  async function jobById(id: number): Promise<JobJson> {
    const job = (await loadJobs(deps, [id])).get(id);
    if (!job) throw new HeadwaterError('NOT_FOUND', `Job ${id} vanished while it was read; retry.`);
    return job;
  }

  async function list(filter: JobFilter, { limit, offset }: PageQuery) {
    const [records, totalCount] = await Promise.all([
      listJobs(db, filter, limit, offset),
      countJobs(db, filter),
    ]);
    return { jobs: await jobsJson(deps, records), totalCount };
  }

  app.get<{ Querystring: JobListQuery }>(
    '/api/v1/jobs',
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List the jobs of all namespaces, most recently updated first',
        querystring: jobListQuery,
        response: responses(listSchema('jobs', JobSchema, true), 400),
      },
    },
    (request) =>
      list(
        {
          lastRunStates: request.query.lastRunStates,
          namespaceIds: readableNamespaces(request, state)?.ids,
        },
        request.query,
      ),
  );

  app.get<{ Params: { namespace: string }; Querystring: JobListQuery }>(
    base,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List the jobs of a namespace, most recently updated first',
        params: { type: 'object', properties: { namespace: text }, required: ['namespace'] },
        querystring: jobListQuery,
        response: responses(listSchema('jobs', JobSchema, true), 400, 404),
      },
    },
    (request) =>
      list(
        {
          namespaceId: namespaceNamed(state, request.params.namespace).id,
          lastRunStates: request.query.lastRunStates,
        },
        request.query,
      ),
  );

  app.get<{ Params: JobParams; Querystring: { asOf?: string } }>(
    `${base}/:job`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Get a job: current inputs and outputs, latest runs and latest facets',
        description: 'With `asOf`, the job as it was then: its edges, runs, run states, version and facets.',
        params: params(),
        querystring: { type: 'object', properties: { asOf: asOfParam } },
        response: responses(Ref(JobSchema), 400, 404, 410),
      },
    },
    async (request) => {
      const { namespace, job } = request.params;
      const id = jobNamed(state, namespace, job).id;
      const asOf = await retainedAsOf(db, request.query.asOf);
      if (!asOf) return jobById(id);
      const then = await loadJobAsOf(deps, id, asOf);
      if (!then)
        throw new HeadwaterError(
          'NOT_FOUND',
          `Job ${namespace}:${job} did not exist at ${asOf.toISOString()}.`,
        );
      return then;
    },
  );

  app.delete<{ Params: JobParams }>(
    `${base}/:job`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Soft-delete a job: hidden until the next event that names it',
        params: params(),
        response: responses(Ref(JobSchema), 404),
      },
    },
    async (request) => {
      const { id } = jobNamed(state, request.params.namespace, request.params.job);
      // Marquez answers with the job as it was before the delete.
      const json = await jobById(id);
      await pipeline.hide('job', id);
      return json;
    },
  );

  app.get<{ Params: JobParams; Querystring: PageQuery }>(
    `${base}/:job/versions`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List the versions of a job, newest first',
        params: params(),
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('versions', JobVersionSchema, false), 400, 404),
      },
    },
    async (request) => {
      const { namespace, job } = request.params;
      const { id } = jobNamed(state, namespace, job);
      const versions = await listJobVersions(db, id, request.query.limit, request.query.offset);
      const runs = await loadRuns(
        db,
        versions.flatMap((version) => (version.latestRun ? [version.latestRun] : [])),
      );
      return {
        versions: versions.map((version) =>
          jobVersionJson(
            { namespace, name: job },
            version,
            version.latestRun ? runs.get(version.latestRun) : undefined,
          ),
        ),
      };
    },
  );

  app.get<{ Params: JobParams & { version: string } }>(
    `${base}/:job/versions/:version`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Get a version of a job',
        params: params('version'),
        response: responses(Ref(JobVersionSchema), 404),
      },
    },
    async (request) => {
      const { namespace, job, version } = request.params;
      const { id } = jobNamed(state, namespace, job);
      const found = isUuid(version) ? await findJobVersion(db, id, version) : undefined;
      if (!found) {
        throw new HeadwaterError(
          'NOT_FOUND',
          `Version '${version}' of job '${job}' in namespace '${namespace}' not found. List them with GET .../versions.`,
        );
      }
      const runs = await loadRuns(db, found.latestRun ? [found.latestRun] : []);
      return jobVersionJson(
        { namespace, name: job },
        found,
        found.latestRun ? runs.get(found.latestRun) : undefined,
      );
    },
  );

  app.get<{ Params: JobParams; Querystring: PageQuery }>(
    `${base}/:job/runs`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List the runs of a job, newest first (by startedAt, runs that never started last)',
        params: params(),
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('runs', RunSchema, true), 400, 404),
      },
    },
    async (request) => {
      const { id } = jobNamed(state, request.params.namespace, request.params.job);
      const [records, totalCount] = await Promise.all([
        listJobRuns(db, id, request.query.limit, request.query.offset),
        countJobRuns(db, id),
      ]);
      return { runs: await runsJson(db, records, deps.config.staleRunAfterMs), totalCount };
    },
  );

  app.post<{ Params: JobParams & { tag: string } }>(
    `${base}/:job/tags/:tag`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Tag a job (a tag that does not exist yet is created)',
        params: params('tag'),
        response: responses(Ref(JobSchema), 404),
      },
    },
    async (request) => {
      const { id } = jobNamed(state, request.params.namespace, request.params.job);
      await pipeline.tag([{ kind: 'job', id, tag: request.params.tag }]);
      return jobById(id);
    },
  );

  app.delete<{ Params: JobParams & { tag: string } }>(
    `${base}/:job/tags/:tag`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Remove a tag from a job',
        params: params('tag'),
        response: responses(Ref(JobSchema), 404),
      },
    },
    async (request) => {
      const { id } = jobNamed(state, request.params.namespace, request.params.job);
      await pipeline.untag([{ kind: 'job', id, tag: request.params.tag }]);
      return jobById(id);
    },
  );
  done();
}
