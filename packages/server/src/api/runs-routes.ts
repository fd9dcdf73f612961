import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { ServerConfig } from '../config/server-config.js';
import { HeadwaterError } from '../core/errors.js';
import { runUuidOf } from '../core/ids.js';
import { latestFacets } from '../store/queries/facets.js';
import { facetsAsOf } from '../store/queries/history.js';
import { findRuns } from '../store/queries/runs.js';
import type { AppDeps } from './deps.js';
import { runChildren } from './run-children.js';
import { arrayOf, boolean, integer, nullableNumber, nullableTime, object, string } from './schema-parts.js';
import {
  MAX_PAGE,
  loadRuns,
  plainJson,
  responses,
  runErrorSchema,
  schemaRef,
  staleRunSchema,
  contradictoryStatesSchema,
  type PageQuery,
} from './shapes.js';

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

const childDataset = object({
  namespace: string,
  name: string,
  version: { ...string, description: 'The dataset version the child read or wrote' },
  rowCount: {
    ...nullableNumber,
    description: 'From the inputStatistics (inputs) or outputStatistics (outputs) facet',
  },
  bytes: { ...nullableNumber, description: 'size from the same facet' },
  fileCount: nullableNumber,
});
const childProperties = {
  runId: { ...string, format: 'uuid' },
  job: schemaRef('EntityId'),
  state: { type: 'string', enum: ['NEW', 'RUNNING', 'COMPLETED', 'ABORTED', 'FAILED'] },
  startedAt: { ...nullableTime, description: 'The earliest START, else the earliest RUNNING' },
  endedAt: { ...nullableTime, description: 'The terminal event' },
  durationMs: { type: ['integer', 'null'], description: 'endedAt - startedAt' },
  ran: {
    ...boolean,
    description:
      'false for a child that never started: ABORTED without START or RUNNING (a failure elsewhere stopped it), or NEW',
  },
  error: runErrorSchema,
  inputs: arrayOf(childDataset),
  outputs: arrayOf(childDataset),
  stale: staleRunSchema,
  contradictoryStates: contradictoryStatesSchema,
};
// Every property is always there but `stale` and `contradictoryStates`, as on a Run.
const childRun = {
  ...object(childProperties),
  required: Object.keys(childProperties).filter((key) => key !== 'stale' && key !== 'contradictoryStates'),
};
const runChildrenSchema = object({
  runId: { ...string, format: 'uuid' },
  totalCount: { ...integer, description: 'Children on all pages' },
  states: {
    type: 'object',
    additionalProperties: integer,
    description: 'Children on all pages by state (only states that occur)',
  },
  neverRanCount: { ...integer, description: 'Children on all pages that never ran (ran: false)' },
  children: {
    ...arrayOf(childRun),
    description: 'In the order they ran: by start, else end; children with neither last',
  },
  edges: {
    ...arrayOf(
      object({
        from: { ...string, format: 'uuid', description: 'The child that wrote the datasets' },
        to: { ...string, format: 'uuid', description: 'The child that read them' },
        datasets: arrayOf(schemaRef('EntityId')),
      }),
    ),
    description: 'Between the children of this page: one per writer and reader pair',
  },
});

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
        response: responses(schemaRef('Run'), 404),
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
        response: responses(runChildrenSchema, 400, 404),
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
