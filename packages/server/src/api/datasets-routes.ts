import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import {
  countDatasets,
  countDatasetVersions,
  datasetVersionFacets,
  findDatasets,
  findDatasetVersion,
  listDatasets,
  listDatasetVersions,
  type DatasetRecord,
  type DatasetVersionRecord,
} from '../store/queries/datasets.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import type { Db } from '../store/db.js';
import { datasetNamed, datasetNamedOrLinked, namespaceNamed } from '../store/queries/lookup.js';
import { aliasFieldsOf } from './aliases-routes.js';
import type { AppDeps } from './deps.js';
import { asOfParam, loadDatasetAsOf, retainedAsOf } from './as-of.js';
import { Ref } from '../core/json-schema.js';
import { datasetsJson, datasetVersionJson, loadDatasets } from './json/dataset.js';
import { loadRuns } from './json/run.js';
import { pageParams, type PageQuery } from './paging.js';
import { plainJson } from './plain-json.js';
import { listSchema, responses } from './schemas/common.js';
import {
  type DatasetJson,
  DatasetSchema,
  type DatasetVersionJson,
  DatasetVersionSchema,
} from './schemas/dataset.js';

interface DatasetParams {
  namespace: string;
  dataset: string;
}

const text = { type: 'string' } as const;

function params(...extra: string[]) {
  const properties: Record<string, { type: 'string' }> = { namespace: text, dataset: text };
  for (const name of extra) properties[name] = text;
  return { type: 'object', properties, required: Object.keys(properties) } as const;
}

const TAGS = ['Datasets'];

/** The dataset with this id as the API shows it. */
async function datasetById(db: Db, id: number): Promise<DatasetJson> {
  const dataset = (await loadDatasets(db, [id])).get(id);
  if (!dataset) throw new HeadwaterError('NOT_FOUND', `Dataset ${id} vanished while it was read; retry.`);
  return dataset;
}

/** Versions of one dataset with their facets and creating runs: three queries for the whole page. */
async function versionsJson(
  db: Db,
  dataset: DatasetRecord,
  versions: readonly DatasetVersionRecord[],
): Promise<DatasetVersionJson[]> {
  const creators = versions.flatMap((version) => (version.createdByRun ? [version.createdByRun] : []));
  const [facets, runs] = await Promise.all([
    datasetVersionFacets(db, dataset.id, versions),
    loadRuns(db, creators),
  ]);
  return versions.map((version) =>
    datasetVersionJson(
      dataset,
      version,
      facets.get(version.id) ?? {},
      (version.createdByRun && runs.get(version.createdByRun)) || null,
    ),
  );
}

/** What the dataset routes need: the readers, and the writer that soft-deletes and tags. */
export type DatasetRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph'> & {
  readonly pipeline: Pick<IngestPipeline, 'hide' | 'tag' | 'untag'>;
};

/** /api/v1/namespaces/{namespace}/datasets: datasets, their versions, tags and soft delete. */
export const datasetRoutes = fastifyPlugin<DatasetRouteDeps>(registerDatasetRoutes, {
  name: 'dataset-routes',
});

function registerDatasetRoutes(
  app: FastifyInstance,
  deps: DatasetRouteDeps,
  done: (error?: Error) => void,
): void {
  const { db, state, pipeline, graph } = deps;
  const base = '/api/v1/namespaces/:namespace/datasets';

  app.get<{ Params: { namespace: string }; Querystring: PageQuery }>(
    base,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List the datasets of a namespace, ordered by name (soft-deleted ones left out)',
        params: { type: 'object', properties: { namespace: text }, required: ['namespace'] },
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('datasets', DatasetSchema, true), 400, 404),
      },
    },
    async (request) => {
      const namespace = namespaceNamed(state, request.params.namespace);
      const { limit, offset } = request.query;
      const [records, totalCount] = await Promise.all([
        listDatasets(db, namespace.id, limit, offset),
        countDatasets(db, namespace.id),
      ]);
      return { datasets: await datasetsJson(db, records), totalCount };
    },
  );

  app.get<{ Params: DatasetParams; Querystring: { asOf?: string } }>(
    `${base}/:dataset`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Get a dataset: current schema, tags, latest facets and one level of column lineage',
        description:
          'With `asOf`, the dataset as it was then: its version, schema, facets and column lineage.',
        params: params(),
        querystring: { type: 'object', properties: { asOf: asOfParam } },
        response: responses(Ref(DatasetSchema), 400, 404, 410),
      },
    },
    async (request) => {
      const { namespace, dataset } = request.params;
      const { id } = await datasetNamedOrLinked(db, state, namespace, dataset);
      const asOf = await retainedAsOf(db, request.query.asOf);
      // Aliases apply to every time (they repair naming), so the past answer names them too.
      const aliases = aliasFieldsOf(request, state, graph.aliases, id);
      if (!asOf) return { ...(await datasetById(db, id)), ...aliases };
      const then = await loadDatasetAsOf(deps, id, asOf);
      if (!then) {
        throw new HeadwaterError(
          'NOT_FOUND',
          `Dataset ${namespace}:${dataset} did not exist at ${asOf.toISOString()}.`,
        );
      }
      return { ...then, ...aliases };
    },
  );

  app.delete<{ Params: DatasetParams }>(
    `${base}/:dataset`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Soft-delete a dataset: hidden until the next event that names it',
        params: params(),
        response: responses(Ref(DatasetSchema), 404),
      },
    },
    async (request) => {
      const { namespace, dataset } = request.params;
      const { id } = datasetNamed(state, namespace, dataset);
      // Marquez answers with the dataset as it was before the delete.
      const json = await datasetById(db, id);
      await pipeline.hide('dataset', id);
      return json;
    },
  );

  app.get<{ Params: DatasetParams; Querystring: PageQuery }>(
    `${base}/:dataset/versions`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List the versions of a dataset, newest first',
        params: params(),
        querystring: { type: 'object', properties: pageParams() },
        response: responses(listSchema('versions', DatasetVersionSchema, true), 400, 404),
      },
    },
    async (request) => {
      const { namespace, dataset } = request.params;
      const { id } = datasetNamed(state, namespace, dataset);
      const { limit, offset } = request.query;
      const [[record], versions, totalCount] = await Promise.all([
        findDatasets(db, [id]),
        listDatasetVersions(db, id, limit, offset),
        countDatasetVersions(db, id),
      ]);
      return { versions: await versionsJson(db, record!, versions), totalCount };
    },
  );

  app.get<{ Params: DatasetParams & { version: string } }>(
    `${base}/:dataset/versions/:version`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Get a version of a dataset, with the run that created it',
        params: params('version'),
        response: responses(Ref(DatasetVersionSchema), 404),
      },
    },
    async (request) => {
      const { namespace, dataset, version } = request.params;
      const { id } = datasetNamed(state, namespace, dataset);
      const [[record], found] = await Promise.all([
        findDatasets(db, [id]),
        isUuid(version) ? findDatasetVersion(db, id, version) : undefined,
      ]);
      if (!found) {
        throw new HeadwaterError(
          'NOT_FOUND',
          `Version '${version}' of dataset '${dataset}' in namespace '${namespace}' not found. List them with GET .../versions.`,
        );
      }
      const [json] = await versionsJson(db, record!, [found]);
      return json!;
    },
  );

  app.post<{ Params: DatasetParams & { tag: string } }>(
    `${base}/:dataset/tags/:tag`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Tag a dataset (a tag that does not exist yet is created)',
        params: params('tag'),
        response: responses(Ref(DatasetSchema), 404),
      },
    },
    async (request) => {
      const { namespace, dataset, tag } = request.params;
      const { id } = datasetNamed(state, namespace, dataset);
      await pipeline.tag([{ kind: 'dataset', id, tag }]);
      return datasetById(db, id);
    },
  );

  app.delete<{ Params: DatasetParams & { tag: string } }>(
    `${base}/:dataset/tags/:tag`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Remove a tag from a dataset',
        params: params('tag'),
        response: responses(Ref(DatasetSchema), 404),
      },
    },
    async (request) => {
      const { namespace, dataset, tag } = request.params;
      const { id } = datasetNamed(state, namespace, dataset);
      await pipeline.untag([{ kind: 'dataset', id, tag }]);
      return datasetById(db, id);
    },
  );

  /** The dataset's id, after checking that `field` is a field of its current schema. */
  async function fieldOf(params: DatasetParams & { field: string }): Promise<number> {
    const { namespace, dataset, field } = params;
    const { id } = datasetNamed(state, namespace, dataset);
    const [record] = await findDatasets(db, [id]);
    const known = (record?.fields ?? []).some(
      (candidate) =>
        typeof candidate === 'object' &&
        candidate !== null &&
        (candidate as { name?: unknown }).name === field,
    );
    if (!known) {
      throw new HeadwaterError(
        'NOT_FOUND',
        `Field '${field}' not found in the current schema of dataset '${dataset}' in namespace '${namespace}'.`,
      );
    }
    return id;
  }

  app.post<{ Params: DatasetParams & { field: string; tag: string } }>(
    `${base}/:dataset/fields/:field/tags/:tag`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Tag a field of a dataset (the tag name is upper-cased, as in Marquez)',
        params: params('field', 'tag'),
        response: responses(Ref(DatasetSchema), 404),
      },
    },
    async (request) => {
      const id = await fieldOf(request.params);
      await pipeline.tag([
        { kind: 'field', id, field: request.params.field, tag: request.params.tag.toUpperCase() },
      ]);
      return datasetById(db, id);
    },
  );

  app.delete<{ Params: DatasetParams & { field: string; tag: string } }>(
    `${base}/:dataset/fields/:field/tags/:tag`,
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'Remove a tag from a field of a dataset (the tag name is upper-cased, as in Marquez)',
        params: params('field', 'tag'),
        response: responses(Ref(DatasetSchema), 404),
      },
    },
    async (request) => {
      const id = await fieldOf(request.params);
      await pipeline.untag([
        { kind: 'field', id, field: request.params.field, tag: request.params.tag.toUpperCase() },
      ]);
      return datasetById(db, id);
    },
  );
  done();
}
