import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import type { FieldRef } from '../read-model/column-graph.js';
import { findDatasets } from '../store/queries/datasets.js';
import { compareText as compare, datasetNamedOrLinked, jobNamed } from '../store/queries/lookup.js';
import type { AppDeps } from './deps.js';
import { parseNodeId } from '../core/node-id.js';
import { asOfParam, loadDatasetRecordsAsOf, retainedAsOf } from './as-of.js';
import { Ref } from '../core/json-schema.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import { ColumnLineageGraphSchema } from './schemas/lineage.js';

interface ColumnLineageQuery {
  nodeId: string;
  depth: number;
  withDownstream: boolean;
  edges: 'MARQUEZ' | 'LINEAGE';
  asOf?: string;
}

/** What column lineage reads: the store, the read model and both graphs. */
export type ColumnLineageRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph' | 'columnGraph'>;

/** GET /api/v1/column-lineage: Marquez's column-level lineage graph of DATASET_FIELD nodes. */
export const columnLineageRoutes = fastifyPlugin<ColumnLineageRouteDeps>(registerColumnLineageRoutes, {
  name: 'column-lineage-routes',
});

function registerColumnLineageRoutes(
  app: FastifyInstance,
  deps: ColumnLineageRouteDeps,
  done: (error?: Error) => void,
): void {
  const { state, graph, columnGraph, db } = deps;

  app.get<{ Querystring: ColumnLineageQuery }>(
    '/api/v1/column-lineage',
    {
      ...plainJson,
      schema: {
        tags: ['Lineage'],
        summary: 'Column-level lineage around a dataset, a column or a job',
        description:
          'Upstream columns of every column of the node (a job: of its outputs), `depth` hops away; with ' +
          '`withDownstream=true` also the columns they feed. The columns that influence a whole dataset (the ' +
          "facet's dataset-level inputs: JOIN, FILTER, GROUP_BY...) are inputs of every column of it. Each " +
          "input field is listed once, with Marquez's transformationType and transformationDescription (its " +
          'first transformation) and, beyond Marquez, `transformations`: each type and subtype. ' +
          'outEdges go from the node to the columns it ' +
          "feeds. inEdges are Marquez's by default: each names the node itself as `origin` and an input column " +
          'as `destination` (the Marquez UI reverses them); with `edges=lineage` they go from the input ' +
          'column to the node, like every edge Headwater serves elsewhere. ' +
          'With `asOf`, the column lineage and dataset versions as they were then.',
        querystring: {
          type: 'object',
          required: ['nodeId'],
          properties: {
            nodeId: { type: 'string', description: 'dataset:, datasetField: or job: nodeId' },
            depth: {
              type: 'integer',
              minimum: 0,
              maximum: 1000,
              default: 20,
              description:
                "Column edges away from the node, as Marquez counts them: 0 answers as 1 (the node's own edges)",
            },
            withDownstream: { type: 'boolean', default: false },
            edges: {
              type: 'string',
              enum: ['MARQUEZ', 'LINEAGE'],
              default: 'MARQUEZ',
              description:
                "marquez: inEdges oriented as Marquez's (origin: the node); lineage: from input to output. Case-insensitive",
            },
            asOf: asOfParam,
          },
        },
        response: responses(Ref(ColumnLineageGraphSchema), 400, 404, 410),
      },
    },
    async (request) => {
      const { depth, withDownstream } = request.query;
      // Marquez's quirk (ColumnLineageService): inEdges carry the node as origin. Its UI compensates, so the
      // Marquez-compatible default keeps it; Headwater's explorer asks for edges=lineage.
      const marquezEdges = request.query.edges === 'MARQUEZ';
      const asOf = await retainedAsOf(db, request.query.asOf);
      const at = asOf?.getTime();
      const node = parseNodeId(request.query.nodeId);
      if ('version' in node && node.version !== undefined && withDownstream) {
        throw new HeadwaterError(
          'BAD_REQUEST',
          'A versioned nodeId cannot be combined with withDownstream=true.',
        );
      }
      let starts: FieldRef[];
      if (node.type === 'run') {
        throw new HeadwaterError('INVALID_NODE_ID', 'Column lineage starts at a dataset, a column or a job.');
      } else if (node.type === 'datasetField') {
        const { id } = await datasetNamedOrLinked(deps.db, state, node.namespace, node.name);
        starts = [{ datasetId: id, field: node.field }];
      } else if (node.type === 'dataset') {
        const { id } = await datasetNamedOrLinked(deps.db, state, node.namespace, node.name);
        starts = columnGraph.fieldsOf(id, at);
      } else {
        const job = jobNamed(state, node.namespace, node.name);
        const outputs =
          at === undefined
            ? graph.datasetsOf(job.id, 1)
            : (await graph.edgesAsOf(db, [job.id], at)).get(job.id)!.outputs;
        starts = outputs.flatMap((id) => columnGraph.fieldsOf(id, at));
      }
      // Marquez's depth (ColumnLineageDao): edges away from the node, and at least the node's own edges,
      // which its recursive query fetches whatever the depth (0 answers as 1).
      const reached = columnGraph.traverse(starts, Math.max(depth, 1), withDownstream, at);
      const datasetIds = [...new Set([...reached.values()].map((ref) => ref.datasetId))];
      const records = asOf
        ? await loadDatasetRecordsAsOf(deps, datasetIds, asOf)
        : new Map((await findDatasets(db, datasetIds)).map((record) => [record.id, record]));
      const describe = (ref: FieldRef) => {
        const record = records.get(ref.datasetId);
        const dataset = state.datasetsById.get(ref.datasetId)!;
        const namespace = state.namespacesById.get(dataset.namespaceId)?.name ?? '';
        const field = (record?.fields ?? []).find(
          (candidate) => (candidate as { name?: unknown }).name === ref.field,
        ) as { type?: unknown } | undefined;
        return {
          namespace,
          dataset: dataset.name,
          datasetVersion: record?.currentVersion ?? null,
          field: ref.field,
          fieldType: typeof field?.type === 'string' ? field.type : null,
          id: `datasetField:${namespace}:${dataset.name}:${ref.field}`,
        };
      };
      const nodes = [...reached.values()].map((ref) => {
        const self = describe(ref);
        // Dataset-level inputs (JOIN, FILTER, GROUP_BY... of the whole output) are inputs of every column of it.
        const inputs = columnGraph.lineageInputsOf(ref, at).map((input) => {
          const other = describe(input);
          const first = input.transformations[0];
          return {
            namespace: other.namespace,
            dataset: other.dataset,
            datasetVersion: other.datasetVersion,
            field: other.field,
            transformationDescription: first?.description ?? null,
            transformationType: first ? first.type : null,
            transformations: input.transformations,
            id: other.id,
          };
        });
        const first = inputs[0];
        return {
          id: self.id,
          type: 'DATASET_FIELD',
          data: {
            namespace: self.namespace,
            dataset: self.dataset,
            datasetVersion: self.datasetVersion,
            field: self.field,
            fieldType: self.fieldType,
            transformationDescription: first?.transformationDescription ?? null,
            transformationType: first?.transformationType ?? null,
            inputFields: inputs.map(({ id: _id, ...input }) => input),
          },
          inputIds: inputs.map((input) => input.id),
          outputIds: columnGraph.lineageOutputsOf(ref, at).map((output) => describe(output).id),
        };
      });
      const present = new Set(nodes.map((node) => node.id));
      return {
        graph: nodes
          .sort((a, b) => compare(a.id, b.id))
          .map(({ inputIds, outputIds, ...node }) => ({
            ...node,
            inEdges: inputIds
              .filter((id) => present.has(id))
              .sort(compare)
              .map((input) =>
                marquezEdges
                  ? { origin: node.id, destination: input }
                  : { origin: input, destination: node.id },
              ),
            outEdges: outputIds
              .filter((id) => present.has(id))
              .sort(compare)
              .map((destination) => ({ origin: node.id, destination })),
          })),
      };
    },
  );
  done();
}
