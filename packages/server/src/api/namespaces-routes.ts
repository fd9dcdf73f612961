import type { FastifyInstance } from 'fastify';
import { HeadwaterError } from '../core/errors.js';
import {
  findNamespace,
  hideNamespace,
  listNamespaces,
  upsertNamespace,
} from '../store/queries/namespaces.js';
import { namespaceNamed, namespaceNotFound } from '../store/queries/lookup.js';
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

/** /api/v1/namespaces: list, get, create or update (PUT), soft delete. */
export function registerNamespaceRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, pipeline, graph } = deps;

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
      // Namespace ids are assigned by the writer: create the row between two ingest commits and tell the mirror.
      const record = await pipeline.exclusive(async (store, mirror) => {
        const known = mirror.namespaces.get(name);
        const id = known?.id ?? mirror.next.namespace;
        const row = await upsertNamespace(store, {
          id,
          name,
          ownerName,
          description: description ?? undefined,
          now: new Date(),
        });
        if (!known) mirror.next.namespace++;
        mirror.addNamespace({
          id: row.id,
          name: row.name,
          createdAt: row.createdAt.getTime(),
          updatedAt: row.updatedAt.getTime(),
          isHidden: false,
        });
        deps.state.setNamespace({ id: row.id, name: row.name, isHidden: false });
        return row;
      });
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
      const record = await pipeline.exclusive(async (store, mirror) => {
        const namespace = namespaceNamed(mirror, name);
        const before = await findNamespace(store, name);
        if (!before) throw namespaceNotFound(name);
        const hidden = await hideNamespace(store, namespace.id);
        mirror.addNamespace({ ...namespace, isHidden: true });
        deps.state.setHidden('namespace', namespace.id, true);
        for (const id of hidden.datasetIds) {
          const row = mirror.datasetsById.get(id);
          if (row) mirror.addDataset({ ...row, isHidden: true });
          deps.state.setHidden('dataset', id, true);
          graph.setHidden('dataset', id, true);
        }
        for (const id of hidden.jobIds) {
          const row = mirror.jobsById.get(id);
          if (row) mirror.addJob({ ...row, isHidden: true });
          deps.state.setHidden('job', id, true);
          graph.setHidden('job', id, true);
        }
        return before;
      });
      // Marquez answers with the namespace as it was before the delete.
      return namespaceJson(record);
    },
  );
}
