import type { FastifyInstance } from 'fastify';
import { HeadwaterError } from '../errors.js';
import type { GraphNode, LineageDirection } from '../graph/lineage-graph.js';
import { entityKey, type DatasetRow, type JobRow, type ModelState } from '../store/model-state.js';
import { datasetNodeExtras, latestRunIds } from '../store/lineage-queries.js';
import type { AppDeps } from './app.js';
import { nodeIdOf, parseNodeId } from './node-id.js';
import { loadRuns } from './run-shape.js';

interface LineageQuery {
  nodeId: string;
  depth: number;
  direction: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

interface Edge {
  origin: string;
  destination: string;
}

/** Finds the dataset or job a nodeId names in the writer's mirror. */
function resolveNode(state: ModelState, nodeId: string): GraphNode {
  const parsed = parseNodeId(nodeId);
  if (parsed.type !== 'dataset' && parsed.type !== 'job') {
    throw new HeadwaterError(
      'INVALID_NODE_ID',
      `Lineage starts at a dataset or a job; got a ${parsed.type} nodeId.`,
    );
  }
  const namespace = state.namespaces.get(parsed.namespace);
  const row = namespace
    ? (parsed.type === 'dataset' ? state.datasets : state.jobs).get(entityKey(namespace.id, parsed.name))
    : undefined;
  if (!row || row.isHidden) {
    throw new HeadwaterError(
      'NOT_FOUND',
      `No ${parsed.type} named ${JSON.stringify(parsed.name)} in namespace ${JSON.stringify(parsed.namespace)}.`,
    );
  }
  return { kind: parsed.type, id: row.id };
}

/** GET /api/v1/lineage: Marquez's node/edge graph, computed from the in-memory graph index. */
export function registerLineageRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { state, graph, db } = deps;

  app.get<{ Querystring: LineageQuery }>(
    '/api/v1/lineage',
    {
      schema: {
        tags: ['Lineage'],
        summary: 'The lineage graph around a dataset or job',
        description:
          'Like Marquez, nodes are datasets and jobs with inEdges/outEdges, sorted by id. Beyond Marquez, ' +
          '`direction` walks only upstream or downstream (default both: the union of the two walks).',
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
              description: 'Jobs away from the node',
            },
            direction: {
              type: 'string',
              enum: ['upstream', 'downstream', 'both', 'UPSTREAM', 'DOWNSTREAM', 'BOTH'],
              default: 'both',
            },
          },
        },
      },
    },
    async (request) => {
      const start = resolveNode(state, request.query.nodeId);
      const direction = request.query.direction.toLowerCase() as LineageDirection;
      const subgraph = graph.traverse(start, request.query.depth, direction);
      const datasets = [...subgraph.datasets].flatMap((id) => {
        const row = state.datasetsById.get(id);
        return row ? [row] : [];
      });
      const jobs = [...subgraph.jobs].flatMap((id) => {
        const row = state.jobsById.get(id);
        return row ? [row] : [];
      });
      const [extras, latest] = await Promise.all([
        datasetNodeExtras(db, datasets),
        latestRunIds(
          db,
          jobs.map((job) => job.id),
        ),
      ]);
      const runs = await loadRuns(db, state, [...latest.values()]);

      const idOf = (node: GraphNode) => {
        const row = node.kind === 'dataset' ? state.datasetsById.get(node.id) : state.jobsById.get(node.id);
        return nodeIdOf(node.kind, namespaceName(state, row!.namespaceId), row!.name);
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
      const nodes = [
        ...datasets.map((row) => {
          const id = nodeIdOf('dataset', namespaceName(state, row.namespaceId), row.name);
          return { id, type: 'DATASET', data: datasetData(state, row, extras.get(row.id)) };
        }),
        ...jobs.map((row) => {
          const id = nodeIdOf('job', namespaceName(state, row.namespaceId), row.name);
          const runUuid = latest.get(row.id);
          return {
            id,
            type: 'JOB',
            data: jobData(state, graph, row, runUuid ? (runs.get(runUuid) ?? null) : null),
          };
        }),
      ]
        .sort((a, b) => compare(a.id, b.id))
        .map((node) => ({
          ...node,
          inEdges: (inEdges.get(node.id) ?? []).sort(byEdge),
          outEdges: (outEdges.get(node.id) ?? []).sort(byEdge),
        }));
      return { graph: nodes };
    },
  );
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function namespaceName(state: ModelState, id: number): string {
  return state.namespacesById.get(id)?.name ?? '';
}

function datasetData(
  state: ModelState,
  row: DatasetRow,
  extras: { fields: unknown[]; tags: string[]; fieldTags: Map<string, string[]> } | undefined,
) {
  const namespace = namespaceName(state, row.namespaceId);
  const source = [...state.sources.values()].find((candidate) => candidate.id === row.sourceId);
  return {
    id: { namespace, name: row.name },
    type: 'DB_TABLE',
    name: row.name,
    physicalName: row.name,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    namespace,
    sourceName: source?.name ?? 'default',
    fields: (extras?.fields ?? []).map((field) => fieldShape(field, extras?.fieldTags)),
    tags: extras?.tags ?? [],
    lastModifiedAt: iso(row.lastModifiedAt),
    description: row.description,
    lastLifecycleState: row.lifecycleState,
  };
}

function fieldShape(field: unknown, tags: Map<string, string[]> | undefined) {
  const record = (typeof field === 'object' && field !== null ? field : {}) as Record<string, unknown>;
  const name = typeof record.name === 'string' ? record.name : '';
  return {
    name,
    type: typeof record.type === 'string' ? record.type : null,
    tags: tags?.get(name) ?? [],
    description: typeof record.description === 'string' ? record.description : null,
  };
}

function jobData(state: ModelState, graph: AppDeps['graph'], row: JobRow, latestRun: unknown) {
  const namespace = namespaceName(state, row.namespaceId);
  const parent = row.parentJobId === null ? undefined : state.jobsById.get(row.parentJobId);
  const refs = (direction: 0 | 1) =>
    graph
      .datasetsOf(row.id, direction)
      .flatMap((id) => {
        const dataset = state.datasetsById.get(id);
        return dataset ? [{ namespace: namespaceName(state, dataset.namespaceId), name: dataset.name }] : [];
      })
      .sort((a, b) => compare(`${a.namespace}:${a.name}`, `${b.namespace}:${b.name}`));
  return {
    id: { namespace, name: row.name },
    type: row.type,
    name: row.name,
    simpleName: row.simpleName,
    parentJobName: parent?.name ?? null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    namespace,
    inputs: refs(0),
    outputs: refs(1),
    location: row.location,
    description: row.description,
    latestRun,
  };
}
