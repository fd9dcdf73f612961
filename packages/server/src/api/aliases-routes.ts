import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import type { DatasetAliases } from '../read-model/aliases.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import { aliasesTouching, readAliases, type AliasRecord } from '../store/queries/aliases.js';
import { compareText, datasetNamed } from '../store/queries/lookup.js';
import type { Catalog } from '../store/read-model.js';
import type { AppDeps } from './deps.js';
import { Ref } from '../core/json-schema.js';
import type { EntityId } from './schemas/common.js';
import { AliasSchema } from './schemas/dataset.js';
import { parseJsonBody, storedText } from './json-body.js';
import { pageParams } from './paging.js';
import { plainJson } from './plain-json.js';
import { listSchema, responses } from './schemas/common.js';

interface DatasetParams {
  namespace: string;
  dataset: string;
}

/** An alias as the API shows it. */
interface AliasJson {
  alias: EntityId;
  dataset: EntityId;
  createdAt: string;
}

const TAGS = ['Aliases'];

const params = {
  type: 'object',
  properties: { namespace: { type: 'string' }, dataset: { type: 'string' } },
  required: ['namespace', 'dataset'],
} as const;

/** `{namespace, name}` of a dataset the catalog knows. */
function entityOf(catalog: Catalog, id: number): EntityId | undefined {
  const dataset = catalog.datasetsById.get(id);
  const namespace = dataset && catalog.namespacesById.get(dataset.namespaceId);
  return dataset && namespace ? { namespace: namespace.name, name: dataset.name } : undefined;
}

function aliasJson(catalog: Catalog, record: AliasRecord): AliasJson | undefined {
  const alias = entityOf(catalog, record.datasetId);
  const dataset = entityOf(catalog, record.targetId);
  if (!alias || !dataset) return undefined;
  return { alias, dataset, createdAt: record.createdAt.toISOString() };
}

const nameOf = (entity: EntityId) => `${entity.namespace}:${entity.name}`;

/**
 * Refuses a caller who may not administer the namespace of the dataset at the other end of an alias (the
 * security layer has checked the one in the path): as not found if they may not even read it, so that the
 * answer does not tell them it exists.
 */
function assertMayAdmin(request: FastifyRequest, namespace: string): void {
  const principal = request.principal;
  if (!principal.canRead(namespace)) {
    throw new HeadwaterError(
      'NOT_FOUND',
      `Namespace '${namespace}' not found (or not visible to this caller).`,
    );
  }
  if (!principal.canAdmin(namespace)) {
    throw new HeadwaterError(
      'FORBIDDEN',
      `The caller (${principal.name}) may read ${namespace} but lacks the admin role there, which an alias ` +
        'needs over the namespaces of both its datasets.',
    );
  }
}

/**
 * What a dataset's own answer says of aliases: the dataset it is an alias of, and its aliases that the caller
 * may read (an alias in a namespace they may not read is not named, not even counted).
 */
export function aliasFieldsOf(
  request: FastifyRequest,
  catalog: Catalog,
  aliases: DatasetAliases,
  id: number,
): { aliasOf?: EntityId; aliases?: EntityId[] } {
  const target = aliases.targetOf(id);
  // The security layer turns a target the caller may not read into a placeholder (the shape stays true).
  const aliasOf = target === undefined ? undefined : entityOf(catalog, target);
  const visible = aliases
    .aliasesOf(id)
    .map((alias) => entityOf(catalog, alias))
    .filter((entity): entity is EntityId => !!entity && request.principal.canRead(entity.namespace))
    .sort((a, b) => compareText(a.namespace, b.namespace) || compareText(a.name, b.name));
  return {
    ...(aliasOf ? { aliasOf } : {}),
    ...(visible.length > 0 ? { aliases: visible } : {}),
  };
}

/** What the alias routes need: the readers, and the writer that declares and removes aliases. */
export type AliasRouteDeps = Pick<AppDeps, 'db' | 'state'> & {
  readonly pipeline: Pick<IngestPipeline, 'declareAlias' | 'removeAlias'>;
};

/**
 * Dataset aliases: PUT and DELETE /api/v1/namespaces/{namespace}/datasets/{dataset}/alias declare and remove that
 * a dataset is another, GET /api/v1/aliases lists them. The graphs join an alias with its dataset where they read
 * edges (src/read-model/aliases.ts); nothing stored from events changes, so removing one restores the graph exactly.
 */
export const aliasRoutes = fastifyPlugin<AliasRouteDeps>(registerAliasRoutes, { name: 'alias-routes' });

function registerAliasRoutes(
  app: FastifyInstance,
  deps: AliasRouteDeps,
  done: (error?: Error) => void,
): void {
  const { db, state, pipeline } = deps;
  const path = '/api/v1/namespaces/:namespace/datasets/:dataset/alias';

  app.get<{ Querystring: { limit: number; offset: number } }>(
    '/api/v1/aliases',
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List dataset aliases, by alias namespace and name',
        description: 'Only aliases whose two datasets are both in namespaces the caller may read.',
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('aliases', AliasSchema, true), 400),
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const canRead = (entity: EntityId) => request.principal.canRead(entity.namespace);
      const all = (await readAliases(db))
        .map((record) => aliasJson(state, record))
        .filter((json): json is AliasJson => !!json && canRead(json.alias) && canRead(json.dataset))
        .sort(
          (a, b) =>
            compareText(a.alias.namespace, b.alias.namespace) || compareText(a.alias.name, b.alias.name),
        );
      return { aliases: all.slice(offset, offset + limit), totalCount: all.length };
    },
  );

  app.put<{ Params: DatasetParams; Body: { namespace: string; name: string } }>(
    path,
    {
      ...plainJson,
      preValidation: parseJsonBody,
      schema: {
        tags: TAGS,
        summary: 'Declare that this dataset is another one: lineage joins them',
        description:
          'The body names the dataset this one is. Lineage (job and column level, the analyses, at every ' +
          'time) then goes through that dataset wherever an event named this one, and search finds it by this ' +
          "one's name. Reversible (DELETE), audited, and for admins of both namespaces. An alias of an alias, " +
          'or of a dataset that has aliases, is refused (409): declare it of the dataset at the end instead.',
        params,
        body: {
          type: 'object',
          properties: { namespace: storedText, name: storedText },
          required: ['namespace', 'name'],
          additionalProperties: false,
        },
        response: responses(Ref(AliasSchema), 400, 404, 409),
      },
    },
    async (request) => {
      const { namespace, dataset } = request.params;
      const target = request.body;
      assertMayAdmin(request, target.namespace);
      const aliasName = nameOf({ namespace, name: dataset });
      const targetName = nameOf(target);
      request.auditDetail = `${aliasName} is ${targetName}`;
      const alias = datasetNamed(state, namespace, dataset);
      const canonical = datasetNamed(state, target.namespace, target.name);
      if (alias.id === canonical.id) {
        throw new HeadwaterError('BAD_REQUEST', `${aliasName} cannot be an alias of itself.`);
      }
      const declaration = await pipeline.declareAlias(alias.id, canonical.id, request.principal.subject);
      if ('record' in declaration) return aliasJson(state, declaration.record)!;
      const row = declaration.blockedBy;
      const name = (id: number) => {
        const entity = entityOf(state, id);
        return entity ? nameOf(entity) : `dataset ${id}`;
      };
      if (row.datasetId === alias.id) {
        throw new HeadwaterError(
          'CONFLICT',
          `${aliasName} is already an alias of ${name(row.targetId)}; remove that alias first (DELETE ${request.url}).`,
        );
      }
      if (row.datasetId === canonical.id) {
        throw new HeadwaterError(
          'CONFLICT',
          `${targetName} is itself an alias of ${name(row.targetId)}: declare ${aliasName} an alias of ` +
            `${name(row.targetId)} instead (aliases name the dataset they are, not another alias).`,
        );
      }
      throw new HeadwaterError(
        'CONFLICT',
        `${aliasName} has aliases of its own (${name(row.datasetId)}), which would then be aliases of an ` +
          `alias: remove them, or declare them aliases of ${targetName}, first.`,
      );
    },
  );

  app.delete<{ Params: DatasetParams }>(
    path,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Remove the alias of this dataset: lineage is again as the events named it',
        params,
        response: responses(Ref(AliasSchema), 404),
      },
    },
    async (request) => {
      const { namespace, dataset } = request.params;
      const aliasName = nameOf({ namespace, name: dataset });
      const notAlias = () =>
        new HeadwaterError(
          'NOT_FOUND',
          `${aliasName} is no alias. List the aliases with GET /api/v1/aliases.`,
        );
      const alias = datasetNamed(state, namespace, dataset);
      const row = (await aliasesTouching(db, [alias.id])).find((found) => found.datasetId === alias.id);
      const target = row && entityOf(state, row.targetId);
      if (!row || !target) throw notAlias();
      assertMayAdmin(request, target.namespace);
      request.auditDetail = `${aliasName} is no longer ${nameOf(target)}`;
      // Removed only if it is still the alias the caller was found allowed to remove.
      const removed = await pipeline.removeAlias(alias.id, row.targetId);
      if (!removed) throw notAlias();
      return aliasJson(state, removed)!;
    },
  );
  done();
}
