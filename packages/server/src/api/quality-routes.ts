/**
 * Data quality beyond Marquez: a dataset's assertions (latest result of each, with history) and the statistics
 * and quality metrics its runs reported over time, and the same for one run. Answered in src/analysis/quality.ts.
 */
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { DatasetQualitySchema, RunQualitySchema, datasetQuality, runQuality } from '../analysis/quality.js';
import { HeadwaterError } from '../core/errors.js';
import { runUuidOf } from '../core/ids.js';
import { findRuns } from '../store/queries/runs.js';
import { datasetNamedOrLinked } from '../store/queries/lookup.js';
import type { AppDeps } from './deps.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';

const limit = (description: string, fallback: number) => ({
  type: 'integer',
  minimum: 1,
  maximum: 1000,
  default: fallback,
  description,
});

/** What the quality routes read: the store, the read model and both graphs. */
export type QualityRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph' | 'columnGraph'>;

/** GET .../datasets/{dataset}/quality and GET /api/v1/jobs/runs/{id}/quality. */
export const qualityRoutes = fastifyPlugin<QualityRouteDeps>(registerQualityRoutes, {
  name: 'quality-routes',
});

function registerQualityRoutes(
  app: FastifyInstance,
  deps: QualityRouteDeps,
  done: (error?: Error) => void,
): void {
  const { db, state } = deps;
  const source = { db, state, graph: deps.graph, columnGraph: deps.columnGraph.analysisView };

  app.get<{
    Params: { namespace: string; dataset: string };
    Querystring: { history: number; runs: number };
  }>(
    '/api/v1/namespaces/:namespace/datasets/:dataset/quality',
    {
      ...plainJson,
      schema: {
        tags: ['Quality'],
        summary:
          "A dataset's data quality: each assertion's latest result and history, and its runs' statistics",
        description:
          'The latest result of each distinct assertion (by name; by type and column when unnamed) from any run ' +
          'that reported on the dataset, as an input or a dataset facet, failing ones first, with its results ' +
          'newest first; and, newest run first, what each run reported: outputStatistics, inputStatistics, ' +
          'dataQualityMetrics (row, null and distinct counts per column) and its assertions. Root cause and the ' +
          "dataset's dataQualityAssertions facet use the same latest results.",
        params: {
          type: 'object',
          properties: { namespace: { type: 'string' }, dataset: { type: 'string' } },
          required: ['namespace', 'dataset'],
        },
        querystring: {
          type: 'object',
          properties: {
            history: limit('Results per assertion, newest first', 50),
            runs: limit('Runs with statistics, metrics or assertions, newest first', 100),
          },
        },
        response: responses(DatasetQualitySchema, 400, 404),
      },
    },
    async (request) => {
      const { id } = await datasetNamedOrLinked(db, state, request.params.namespace, request.params.dataset);
      return datasetQuality(source, id, request.query);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/jobs/runs/:id/quality',
    {
      ...plainJson,
      schema: {
        tags: ['Quality'],
        summary: 'What a run reported about its datasets: statistics, quality metrics and assertions',
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        response: responses(RunQualitySchema, 404),
      },
    },
    async (request) => {
      const uuid = runUuidOf(request.params.id);
      if ((await findRuns(db, [uuid])).length === 0) {
        throw new HeadwaterError('NOT_FOUND', `Run '${request.params.id}' not found.`);
      }
      return runQuality(source, uuid);
    },
  );
  done();
}
