import type { FastifyInstance } from 'fastify';
import { HeadwaterError } from '../errors.js';
import { runUuidOf } from '../ingest/ids.js';
import { latestFacets } from '../store/queries/facets.js';
import { facetsAsOf } from '../store/queries/history.js';
import { findRuns } from '../store/queries/runs.js';
import type { AppDeps } from './app.js';
import { loadRuns, plainJson, responses, schemaRef, upperCaseQuery } from './shapes.js';

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

function notFound(id: string): HeadwaterError {
  return new HeadwaterError(
    'NOT_FOUND',
    `Run '${id}' not found. List a job's runs with GET /api/v1/namespaces/{namespace}/jobs/{job}/runs.`,
  );
}

/** /api/v1/jobs/runs/{id}: a run, and its run or job facets. */
export function registerRunRoutes(app: FastifyInstance, { db, config }: AppDeps): void {
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

  app.get<{ Params: { id: string }; Querystring: { type: 'RUN' | 'JOB' } }>(
    '/api/v1/jobs/runs/:id/facets',
    {
      ...plainJson,
      preValidation: upperCaseQuery('type'),
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
}
