import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import { findNamespace, listNamespaces } from '../store/queries/namespaces.js';
import { namespaceNotFound } from '../store/queries/lookup.js';
import type { AppDeps } from './deps.js';
import { Ref } from '../core/json-schema.js';
import { NO_NUL_PATTERN, parseJsonBody, storedText } from './json-body.js';
import { namespaceJson } from './json/namespace.js';
import { pageParams, type PageQuery } from './paging.js';
import { plainJson } from './plain-json.js';
import { listSchema, responses } from './schemas/common.js';
import { NamespaceSchema } from './schemas/namespace.js';

/** Marquez's rule for namespace names (NamespaceName.java), enforced where a client creates one. */
const NAMESPACE_NAME = /^[a-zA-Z:;=/0-9_\-.@+]{1,1024}$/;

const namespaceParams = {
  type: 'object',
  properties: { namespace: { type: 'string', description: 'Namespace name' } },
  required: ['namespace'],
} as const;

/** What the namespace routes need: the store they read, and the writer that declares and soft-deletes. */
export type NamespaceRouteDeps = Pick<AppDeps, 'db'> & {
  readonly pipeline: Pick<IngestPipeline, 'putNamespace' | 'hide'>;
};

/** /api/v1/namespaces: list, get, create or update (PUT), soft delete. */
export const namespaceRoutes = fastifyPlugin<NamespaceRouteDeps>(registerNamespaceRoutes, {
  name: 'namespace-routes',
});

function registerNamespaceRoutes(
  app: FastifyInstance,
  deps: NamespaceRouteDeps,
  done: (error?: Error) => void,
): void {
  const { db, pipeline } = deps;

  app.get<{ Querystring: PageQuery }>(
    '/api/v1/namespaces',
    {
      ...plainJson,
      schema: {
        tags: ['Namespaces'],
        summary: 'List namespaces, ordered by name (soft-deleted ones included, with isHidden true)',
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('namespaces', NamespaceSchema, false), 400),
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const principal = request.principal;
      if (principal.readsAll)
        return { namespaces: (await listNamespaces(db, limit, offset)).map(namespaceJson) };
      // Namespaces are few: page what the caller may read.
      const all = await listNamespaces(db, Number.MAX_SAFE_INTEGER, 0);
      const readable = all.filter((record) => principal.canRead(record.name));
      return { namespaces: readable.slice(offset, offset + limit).map(namespaceJson) };
    },
  );

  app.get<{ Params: { namespace: string } }>(
    '/api/v1/namespaces/:namespace',
    {
      ...plainJson,
      schema: {
        tags: ['Namespaces'],
        summary: 'Get a namespace',
        params: namespaceParams,
        response: responses(Ref(NamespaceSchema), 404),
      },
    },
    async (request) => {
      const record = await findNamespace(db, request.params.namespace);
      if (!record) throw namespaceNotFound(request.params.namespace);
      return namespaceJson(record);
    },
  );

  app.put<{ Params: { namespace: string }; Body: { ownerName: string; description?: string | null } }>(
    '/api/v1/namespaces/:namespace',
    {
      ...plainJson,
      schema: {
        tags: ['Namespaces'],
        summary: 'Create a namespace or update its owner and description (un-hides a soft-deleted one)',
        params: namespaceParams,
        body: {
          type: 'object',
          properties: {
            ownerName: { ...storedText, minLength: 1 },
            description: { type: ['string', 'null'], pattern: NO_NUL_PATTERN },
          },
          required: ['ownerName'],
        },
        response: responses(Ref(NamespaceSchema), 400),
      },
      preValidation: parseJsonBody,
    },
    async (request) => {
      const name = request.params.namespace;
      if (!NAMESPACE_NAME.test(name)) {
        throw new HeadwaterError(
          'BAD_REQUEST',
          `Namespace name '${name}' is invalid: use 1 to 1024 of the characters a-z A-Z 0-9 : ; = / _ - . @ +.`,
        );
      }
      const { ownerName, description } = request.body;
      // The writer gives a new namespace its id.
      const record = await pipeline.putNamespace({ name, ownerName, description: description ?? undefined });
      return namespaceJson(record);
    },
  );

  app.delete<{ Params: { namespace: string } }>(
    '/api/v1/namespaces/:namespace',
    {
      ...plainJson,
      schema: {
        tags: ['Namespaces'],
        summary:
          'Soft-delete a namespace with its datasets and jobs (the next event naming them brings them back)',
        params: namespaceParams,
        response: responses(Ref(NamespaceSchema), 404),
      },
    },
    async (request) => {
      const name = request.params.namespace;
      const record = await findNamespace(db, name);
      if (!record) throw namespaceNotFound(name);
      await pipeline.hide('namespace', record.id);
      // Marquez answers with the namespace as it was before the delete.
      return namespaceJson(record);
    },
  );
  done();
}
