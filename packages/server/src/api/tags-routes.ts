import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { listTags, upsertTag } from '../store/queries/tags.js';
import type { AppDeps } from './deps.js';
import { Ref } from '../core/json-schema.js';
import { NO_NUL_PATTERN, parseJsonBody } from './json-body.js';
import { pageParams, type PageQuery } from './paging.js';
import { plainJson } from './plain-json.js';
import { listSchema, responses } from './schemas/common.js';
import { TagSchema } from './schemas/namespace.js';

/** What the tag routes read: the store. */
export type TagRouteDeps = Pick<AppDeps, 'db'>;

/** /api/v1/tags: the tags datasets, fields and jobs can carry. */
export const tagRoutes = fastifyPlugin<TagRouteDeps>(registerTagRoutes, { name: 'tag-routes' });

function registerTagRoutes(app: FastifyInstance, { db }: TagRouteDeps, done: (error?: Error) => void): void {
  app.get<{ Querystring: PageQuery }>(
    '/api/v1/tags',
    {
      ...plainJson,
      schema: {
        tags: ['Tags'],
        summary: 'List tags, ordered by name',
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('tags', TagSchema, false), 400),
      },
    },
    async (request) => ({ tags: await listTags(db, request.query.limit, request.query.offset) }),
  );

  app.put<{ Params: { tag: string }; Body: { description?: string | null } | undefined }>(
    '/api/v1/tags/:tag',
    {
      ...plainJson,
      preValidation: parseJsonBody,
      schema: {
        tags: ['Tags'],
        summary: 'Create a tag or replace its description',
        params: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
        body: {
          type: 'object',
          properties: { description: { type: ['string', 'null'], pattern: NO_NUL_PATTERN } },
        },
        response: responses(Ref(TagSchema), 400),
      },
    },
    (request) => upsertTag(db, request.params.tag, request.body?.description ?? null),
  );
  done();
}
