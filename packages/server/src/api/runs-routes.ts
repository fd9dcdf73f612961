import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { ServerConfig } from '../config/server-config.js';
import { HeadwaterError } from '../core/errors.js';
import { runUuidOf } from '../core/ids.js';
import { latestFacets } from '../store/queries/facets.js';
import { facetsAsOf } from '../store/queries/history.js';
import { findRuns } from '../store/queries/runs.js';
import type { AppDeps } from './deps.js';
import { runChildren } from './json/run-children.js';
import { Ref } from '../core/json-schema.js';
import { loadRuns } from './json/run.js';
import { MAX_PAGE, type PageQuery } from './paging.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import { RunChildrenSchema } from './schemas/run-children.js';
import { RunSchema } from './schemas/run.js';

const runParams = {
  type: 'object',
  properties: {
    id: {
      type: 'string',
      description:
        'The run id: a UUID, or the runId a producer sent that is not one (mapped as Marquez maps it)',
    },
  },
  required: ['id'],
} as const;

/** The most children one page holds: a pipeline of a few thousand nodes fits in one or two pages. */
const MAX_CHILDREN_PAGE = 2000;

function notFound(id: string): HeadwaterError {
  return new HeadwaterError(
    'NOT_FOUND',
    `Run '${id}' not found. List a job's runs with GET /api/v1/namespaces/{namespace}/jobs/{job}/runs.`,
  );
}

/** What the run routes need: the store, and when a run is stale. */
export type RunRouteDeps = Pick<AppDeps, 'db'> & { readonly config: Pick<ServerConfig, 'staleRunAfterMs'> };

/** /api/v1/jobs/runs/{id}: a run, and its run or job facets. */
export const runRoutes = fastifyPlugin<RunRouteDeps>(registerRunRoutes, { name: 'run-routes' });

function registerRunRoutes(
  app: FastifyInstance,
  { db, config }: RunRouteDeps,
  done: (error?: Error) => void,
): void {
  app.get<{ Params: { id: string } }>(
    '/api/v1/jobs/runs/:id',
    {
      ...plainJson,
      schema: {
        tags: ['Runs'],
        summary: 'Get a run: state, times, job version, dataset versions read and written, latest facets',
        params: runParams,
        response: responses(Ref(RunSchema), 404),
      },
    },
    async (request) => {
      const uuid = runUuidOf(request.params.id);
      const run = (await loadRuns(db, [uuid], config.staleRunAfterMs)).get(uuid);
      if (!run) throw notFound(request.params.id);
      return run;
    },
  );

  app.get<{ Params: { id: string }; Querystring: PageQuery }>(
    '/api/v1/jobs/runs/:id/children',
    {
      ...plainJson,
      schema: {
        tags: ['Runs'],
        summary: "A run's child runs (a pipeline's nodes, a DAG's tasks): states, times, errors, datasets",
        description:
          'Beyond Marquez: the runs whose parent facet names this run, in the order they ran, each with its ' +
          'state, times, error, and the datasets it read and wrote with the row counts and sizes it reported; ' +
          'the edges between them (a child that wrote a dataset another read); and, over all children, the ' +
          'counts by state and of those that never ran. A run without children answers an empty list.',
        params: runParams,
        querystring: {
          type: 'object',
          properties: {
            limit: {
              type: 'integer',
              minimum: 1,
              maximum: MAX_CHILDREN_PAGE,
              default: 500,
              description: 'Most children to return',
            },
            offset: {
              type: 'integer',
              minimum: 0,
              maximum: MAX_PAGE,
              default: 0,
              description: 'Children to skip',
            },
          },
        },
        response: responses(RunChildrenSchema, 400, 404),
      },
    },
    async (request) => {
      const uuid = runUuidOf(request.params.id);
      if ((await findRuns(db, [uuid])).length === 0) throw notFound(request.params.id);
      return runChildren(db, uuid, request.query, config.staleRunAfterMs);
    },
  );

  app.get<{ Params: { id: string }; Querystring: { type: 'RUN' | 'JOB' } }>(
    '/api/v1/jobs/runs/:id/facets',
    {
      ...plainJson,
      schema: {
        tags: ['Runs'],
        summary:
          "The run's facets (type=run), or its job's facets as they were when the run last reported (type=job)",
        params: runParams,
        querystring: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['RUN', 'JOB'], description: 'run or job (case-insensitive)' },
          },
          required: ['type'],
        },
        response: responses(
          {
            type: 'object',
            properties: {
              runId: { type: 'string', format: 'uuid' },
              facets: { type: 'object', additionalProperties: true },
            },
            required: ['runId', 'facets'],
            additionalProperties: false,
          },
          400,
          404,
        ),
      },
    },
    async (request) => {
      const uuid = runUuidOf(request.params.id);
      const [run] = await findRuns(db, [uuid]);
      if (!run) throw notFound(request.params.id);
      const facets =
        request.query.type === 'RUN'
          ? ((await latestFacets(db, 'run', [uuid])).get(uuid) ?? {})
          : ((await facetsAsOf<number>(db, 'job', [run.jobId], run.updatedAt)).get(run.jobId) ?? {});
      return { runId: uuid, facets };
    },
  );
  done();
}
