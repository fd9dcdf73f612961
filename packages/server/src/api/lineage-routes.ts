import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { ReadSide } from '../replica/read-side.js';
import { HeadwaterError } from '../core/errors.js';
import type { DatasetAliases } from '../read-model/aliases.js';
import type { GraphNode, LineageDirection } from '../read-model/lineage-graph.js';
import type { Db } from '../store/db.js';
import type { ReadModel } from '../store/read-model.js';
import { compareText as compare, datasetNamedOrLinked, jobNamed } from '../store/queries/lookup.js';
import type { AppDeps } from './deps.js';
import { nodeIdOf, parseNodeId } from '../core/node-id.js';
import { NodeDataCache } from './node-data-cache.js';
import { asOfParam, loadDatasetNodeDataAsOf, loadJobNodeDataAsOf, retainedAsOf } from './as-of.js';
import { loadDatasetNodeData } from './json/dataset.js';
import { loadJobNodeData } from './json/job.js';
import { Ref } from '../core/json-schema.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import { LineageGraphSchema, type LineageEdgeJson as Edge } from './schemas/lineage.js';

interface LineageQuery {
  nodeId: string;
  depth: number;
  direction?: string;
  asOf?: string;
}

/** Node data as JSON text, as the cache holds it. */
const texts = <T>(data: Map<number, T>) =>
  new Map([...data].map(([id, value]) => [id, JSON.stringify(value)] as const));

/** Finds the dataset (by its name, a symlink or an alias) or job a nodeId names in the read model. */
async function resolveNode(
  db: Db,
  state: ReadModel,
  aliases: DatasetAliases,
  nodeId: string,
): Promise<GraphNode> {
  const parsed = parseNodeId(nodeId);
  if (parsed.type === 'dataset') {
    // An alias stands for the dataset it is, which is the node the answer has.
    const { id } = await datasetNamedOrLinked(db, state, parsed.namespace, parsed.name);
    return { kind: 'dataset', id: aliases.canonicalOf(id) };
  }
  if (parsed.type === 'job') return { kind: 'job', id: jobNamed(state, parsed.namespace, parsed.name).id };
  throw new HeadwaterError(
    'INVALID_NODE_ID',
    `Lineage starts at a dataset or a job; got a ${parsed.type} nodeId.`,
  );
}

/** What the lineage route reads, and the read side whose commits drop its cached node data. */
export type LineageRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph'> & {
  readonly replication: { readonly readSide: Pick<ReadSide, 'onBatch' | 'onExclusive'> };
};

/** GET /api/v1/lineage: Marquez's node/edge graph, computed from the in-memory graph index. */
export const lineageRoutes = fastifyPlugin<LineageRouteDeps>(registerLineageRoutes, {
  name: 'lineage-routes',
});

function registerLineageRoutes(
  app: FastifyInstance,
  deps: LineageRouteDeps,
  done: (error?: Error) => void,
): void {
  const { state, graph, db } = deps;
  const cache = new NodeDataCache();
  deps.replication.readSide.onBatch((delta) => cache.invalidate(delta));
  deps.replication.readSide.onExclusive(() => cache.clear());

  app.get<{ Querystring: LineageQuery }>(
    '/api/v1/lineage',
    {
      ...plainJson,
      schema: {
        tags: ['Lineage'],
        summary: 'The lineage graph around a dataset or job',
        description:
          'Like Marquez, nodes are datasets and jobs with inEdges/outEdges, sorted by id, and without ' +
          "`direction` the answer is Marquez's: the connected component within `depth` job hops (the other " +
          'inputs of each job reached, the jobs sharing a dataset), counted as Marquez counts them: from one ' +
          'start job (a dataset: the job that wrote it last, else read it last), which is hop 0 and brings ' +
          'its datasets; a job is one hop further when it shares a dataset with a job of the hop before. ' +
          'Beyond Marquez, `direction` walks only upstream, only downstream, or both (the union of the two ' +
          'walks, without siblings), where `depth` counts the jobs on a path from the node instead (a job ' +
          'node is the first; depth 0 is the node alone), and `asOf` answers for the past: the edges, ' +
          'versions and run states as they were then.',
        querystring: {
          type: 'object',
          required: ['nodeId'],
          properties: {
            nodeId: { type: 'string', description: 'dataset:<namespace>:<name> or job:<namespace>:<name>' },
            depth: {
              type: 'integer',
              minimum: 0,
              maximum: 1000,
              default: 20,
              description:
                'Without direction: job hops from the start job (Marquez). With direction: jobs on a path from the node',
            },
            direction: {
              type: 'string',
              enum: ['upstream', 'downstream', 'both', 'UPSTREAM', 'DOWNSTREAM', 'BOTH'],
              description: "Omitted: Marquez's connected component",
            },
            asOf: asOfParam,
          },
        },
        response: responses(Ref(LineageGraphSchema), 400, 404, 410),
      },
    },
    async (request, reply) => {
      const start = await resolveNode(db, state, graph.aliases, request.query.nodeId);
      const direction = request.query.direction?.toLowerCase() as LineageDirection | undefined;
      const asOf = await retainedAsOf(db, request.query.asOf);
      const { depth } = request.query;
      const at = asOf?.getTime();
      const subgraph =
        direction === undefined
          ? at === undefined
            ? graph.component(start, depth)
            : await graph.componentAsOf(db, start, depth, at)
          : at === undefined
            ? graph.traverse(start, depth, direction)
            : await graph.traverseAsOf(db, start, depth, direction, at);
      const [datasetData, jobData] = asOf
        ? await Promise.all([
            loadDatasetNodeDataAsOf(deps, [...subgraph.datasets], asOf).then(texts),
            loadJobNodeDataAsOf(deps, [...subgraph.jobs], asOf).then(texts),
          ])
        : await Promise.all([
            cache.datasets([...subgraph.datasets], (ids) => loadDatasetNodeData(db, ids)),
            cache.jobs([...subgraph.jobs], (ids) => loadJobNodeData(deps, ids)),
          ]);
      if (asOf && !(start.kind === 'dataset' ? datasetData : jobData).has(start.id)) {
        throw new HeadwaterError(
          'NOT_FOUND',
          `${request.query.nodeId} did not exist at ${asOf.toISOString()}.`,
        );
      }
      const idOf = (node: GraphNode) => {
        const row = node.kind === 'dataset' ? state.datasetsById.get(node.id) : state.jobsById.get(node.id);
        return nodeIdOf(node.kind, state.namespacesById.get(row!.namespaceId)?.name ?? '', row!.name);
      };
      const inEdges = new Map<string, Edge[]>();
      const outEdges = new Map<string, Edge[]>();
      for (const edge of subgraph.edges) {
        const e = { origin: idOf(edge.origin), destination: idOf(edge.destination) };
        (outEdges.get(e.origin) ?? outEdges.set(e.origin, []).get(e.origin)!).push(e);
        (inEdges.get(e.destination) ?? inEdges.set(e.destination, []).get(e.destination)!).push(e);
      }
      const byEdge = (a: Edge, b: Edge) =>
        a.origin === b.origin ? compare(a.destination, b.destination) : compare(a.origin, b.origin);
      const nodes: { id: string; type: string; data: string }[] = [];
      for (const [id, data] of datasetData)
        nodes.push({ id: idOf({ kind: 'dataset', id }), type: 'DATASET', data });
      for (const [id, data] of jobData) nodes.push({ id: idOf({ kind: 'job', id }), type: 'JOB', data });
      nodes.sort((a, b) => compare(a.id, b.id));
      // Node data arrives as cached JSON text: splice it in instead of parsing and serialising it again.
      const parts = nodes.map(
        (node) =>
          `{"id":${JSON.stringify(node.id)},"type":"${node.type}","data":${node.data},` +
          `"inEdges":${JSON.stringify((inEdges.get(node.id) ?? []).sort(byEdge))},` +
          `"outEdges":${JSON.stringify((outEdges.get(node.id) ?? []).sort(byEdge))}}`,
      );
      return reply.type('application/json; charset=utf-8').send(`{"graph":[${parts.join(',')}]}`);
    },
  );
  done();
}
