import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { IngestPipeline } from '../accept/pipeline.js';
import { HeadwaterError } from '../core/errors.js';
import { Ref } from '../core/json-schema.js';
import type { Db } from '../store/db.js';
import { datasetNamed, jobNamed } from '../store/queries/lookup.js';
import { nodeOwners, type Owner } from '../store/queries/owners.js';
import type { AppDeps } from './deps.js';
import { parseJsonBody } from './json-body.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import {
  NodeOwnersSchema,
  OwnersBodySchema,
  type NodeOwnersJson,
  type OwnersBody,
} from './schemas/owners.js';

/** What the owners routes need: the store and read model to read, the writer to declare. */
export type OwnerRouteDeps = Pick<AppDeps, 'db' | 'state'> & {
  readonly pipeline: Pick<IngestPipeline, 'declareOwners'>;
};

/**
 * .../datasets/{dataset}/owners and .../jobs/{job}/owners: who owns a node, as producers report it (ownership
 * facets) and as people declare it here. Incidents tell, and impact names, both (store/queries/owners.ts).
 */
export const ownerRoutes = fastifyPlugin<OwnerRouteDeps>(registerOwnerRoutes, { name: 'owner-routes' });

type Kind = 'dataset' | 'job';

async function ownersJson(db: Db, kind: Kind, id: number): Promise<NodeOwnersJson> {
  const found = (await nodeOwners(db, kind, [id])).get(id);
  return {
    owners: found?.owners ?? [],
    reported: found?.reported ?? [],
    declared: found?.declared
      ? {
          owners: found.declared.owners,
          declaredAt: found.declared.declaredAt.toISOString(),
          declaredBy: found.declared.declaredBy,
        }
      : null,
  };
}

function registerOwnerRoutes(
  app: FastifyInstance,
  { db, state, pipeline }: OwnerRouteDeps,
  done: (error?: Error) => void,
): void {
  const nodes = [
    { kind: 'dataset', param: 'dataset', plural: 'datasets', tag: 'Datasets' },
    { kind: 'job', param: 'job', plural: 'jobs', tag: 'Jobs' },
  ] as const;
  app.addSchema(NodeOwnersSchema);
  for (const { kind, param, plural, tag } of nodes) {
    const path = `/api/v1/namespaces/:namespace/${plural}/:${param}/owners`;
    const params = {
      type: 'object',
      properties: { namespace: { type: 'string' }, [param]: { type: 'string' } },
      required: ['namespace', param],
    } as const;
    const idOf = (values: Record<string, string>): number =>
      (kind === 'dataset' ? datasetNamed : jobNamed)(state, values.namespace!, values[param]!).id;

    app.get<{ Params: Record<string, string> }>(
      path,
      {
        ...plainJson,
        schema: {
          tags: [tag],
          summary: `Who owns a ${kind}: reported by ownership facets, declared through this API, and both`,
          params,
          response: responses(Ref(NodeOwnersSchema), 404),
        },
      },
      (request) => ownersJson(db, kind, idOf(request.params)),
    );

    app.put<{ Params: Record<string, string>; Body: OwnersBody }>(
      path,
      {
        ...plainJson,
        preValidation: parseJsonBody,
        schema: {
          tags: [tag],
          summary: `Declare who owns a ${kind} (the whole list; an empty one withdraws the declaration); admin`,
          description:
            'Declared owners are told of incidents and named by impact beside those of the latest ownership ' +
            'facet, which a declaration never hides. Each declaration is kept, with who made it and when, and ' +
            'audited. Needs the admin role in the namespace, as tags and aliases do.',
          params,
          body: OwnersBodySchema,
          response: responses(Ref(NodeOwnersSchema), 400, 404),
        },
      },
      async (request) => {
        const id = idOf(request.params);
        const owners = new Map<string, Owner>();
        for (const owner of request.body.owners) {
          const name = owner.name.trim();
          if (name === '')
            throw new HeadwaterError('BAD_REQUEST', 'An owner needs a name that is not blank.');
          if (!owners.has(name)) owners.set(name, { name, type: owner.type ?? null });
        }
        await pipeline.declareOwners({
          kind,
          id,
          owners: [...owners.values()],
          by: request.principal.subject,
        });
        return ownersJson(db, kind, id);
      },
    );
  }
  done();
}
