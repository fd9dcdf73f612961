import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import { findSource, listSources } from '../store/queries/sources.js';
import type { AppDeps } from './deps.js';
import { Ref } from '../core/json-schema.js';
import { sourceJson } from './json/namespace.js';
import { pageParams, type PageQuery } from './paging.js';
import { plainJson } from './plain-json.js';
import { listSchema, responses } from './schemas/common.js';
import { SourceSchema } from './schemas/namespace.js';

/** What the source routes read: the store. */
export type SourceRouteDeps = Pick<AppDeps, 'db'>;

/** /api/v1/sources: the sources datasets live in (from the dataSource facet). */
export const sourceRoutes = fastifyPlugin<SourceRouteDeps>(registerSourceRoutes, { name: 'source-routes' });

function registerSourceRoutes(
  app: FastifyInstance,
  { db }: SourceRouteDeps,
  done: (error?: Error) => void,
): void {
  app.get<{ Querystring: PageQuery }>(
    '/api/v1/sources',
    {
      ...plainJson,
      schema: {
        tags: ['Sources'],
        summary: 'List sources, ordered by name',
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('sources', SourceSchema, false), 400),
      },
    },
    async (request) => {
      const records = await listSources(db, request.query.limit, request.query.offset);
      return { sources: records.map(sourceJson) };
    },
  );

  app.get<{ Params: { source: string } }>(
    '/api/v1/sources/:source',
    {
      ...plainJson,
      schema: {
        tags: ['Sources'],
        summary: 'Get a source',
        params: { type: 'object', properties: { source: { type: 'string' } }, required: ['source'] },
        response: responses(Ref(SourceSchema), 404),
      },
    },
    async (request) => {
      const record = await findSource(db, request.params.source);
      if (!record) {
        throw new HeadwaterError(
          'NOT_FOUND',
          `Source '${request.params.source}' not found. List the sources with GET /api/v1/sources.`,
        );
      }
      return sourceJson(record);
    },
  );
  done();
}
