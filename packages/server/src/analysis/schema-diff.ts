/**
 * Schema diff: what changed between two versions of a dataset, and for a breaking change, the downstream
 * columns it reaches and who owns them.
 */
import { HeadwaterError } from '../core/errors.js';
import { Closed, Time, Type, type Static } from '../core/json-schema.js';
import { newestVersions, versionsByUuid } from '../store/queries/analysis.js';
import { latestOwners } from '../store/queries/owners.js';
import { analysisNodeId, compareText, datasetNodeId, fieldNodeId, type AnalysisSource } from './context.js';
import { brokenColumns, diffSchemas, schemaChangeProperties } from './schema.js';
import { OwnerRollupSchema, OwnerSchema } from './owners.js';
import { columnPath, nodesOfColumnWalk, walkColumns } from './walk.js';

/** A downstream column a breaking change reaches. */
export const ReachedByChangeSchema = Closed({
  nodeId: Type.String({ description: 'datasetField id' }),
  dataset: Type.String(),
  distance: Type.Integer({ description: 'Column hops from the broken column' }),
  path: Type.Array(Type.String(), { description: 'Columns from the broken one to this one' }),
  owners: Type.Array(OwnerSchema, { description: "Owners of the column's dataset" }),
});
export type ReachedByChange = Static<typeof ReachedByChangeSchema>;

const versionRef = () => Closed({ version: Type.String(), createdAt: Time() });

/** The answer of a schema diff. */
export const SchemaDiffResultSchema = Closed({
  dataset: Type.String(),
  from: versionRef(),
  to: versionRef(),
  ...schemaChangeProperties,
  reach: Type.Array(ReachedByChangeSchema, {
    description: 'Downstream columns of removed and type-changed columns, by distance then nodeId',
  }),
  jobs: Type.Array(
    Closed({ nodeId: Type.String(), distance: Type.Integer(), owners: Type.Array(OwnerSchema) }),
    { description: 'Jobs that read a broken column into a reached one, with their owners' },
  ),
  owners: Type.Array(OwnerRollupSchema, {
    description: "Everyone owning a reached column's dataset or such a job",
  }),
});
export type SchemaDiffResult = Static<typeof SchemaDiffResultSchema>;

/**
 * Compares two versions of a dataset (by default the two newest: `from` the older). Throws NOT_FOUND when a
 * version is not one of the dataset's, or when it has fewer than two versions and none are named.
 */
export async function schemaDiff(
  source: AnalysisSource,
  datasetId: number,
  versions: { readonly from?: string | undefined; readonly to?: string | undefined } = {},
): Promise<SchemaDiffResult> {
  const { db, state, graph, columnGraph } = source;
  const name = datasetNodeId(state, datasetId);
  if (versions.from === undefined && versions.to !== undefined) {
    throw new HeadwaterError(
      'BAD_REQUEST',
      'Give `from` with `to` (or neither, for the two newest versions).',
    );
  }
  const named = [versions.from, versions.to].filter((v): v is string => v !== undefined);
  const [byUuid, newest] = await Promise.all([
    versionsByUuid(db, datasetId, named),
    newestVersions(db, named.length < 2 ? [datasetId] : [], 2),
  ]);
  const find = (version: string) => {
    const record = byUuid.get(version.toLowerCase());
    if (!record) {
      throw new HeadwaterError(
        'NOT_FOUND',
        `Version ${version} is not a version of ${name}; list its versions with ` +
          'GET /api/v1/namespaces/{namespace}/datasets/{dataset}/versions.',
      );
    }
    return record;
  };
  const [latest, previous] = newest.get(datasetId) ?? [];
  const from = versions.from !== undefined ? find(versions.from) : previous;
  const to = versions.to !== undefined ? find(versions.to) : latest;
  if (!from || !to) {
    throw new HeadwaterError(
      'NOT_FOUND',
      `${name} has fewer than two versions, so there is no schema change to show; name two with from and to.`,
    );
  }
  const change = diffSchemas(from.fields, to.fields);
  const broken = brokenColumns(change).map((field) => ({ datasetId, field }));
  const walk = walkColumns(state, columnGraph, broken, 'downstream');
  const reachedColumns = walk.filter((column) => column.distance > 0);
  const jobs = nodesOfColumnWalk(state, graph, walk, 'downstream').filter((r) => r.node.kind === 'job');
  const datasetIds = [...new Set(reachedColumns.map((c) => c.ref.datasetId))];
  const [datasetOwners, jobOwners] = await Promise.all([
    latestOwners(db, 'dataset', datasetIds),
    latestOwners(
      db,
      'job',
      jobs.map((r) => r.node.id),
    ),
  ]);
  const reach = reachedColumns.map((column) => ({
    nodeId: fieldNodeId(state, column.ref),
    dataset: datasetNodeId(state, column.ref.datasetId),
    distance: column.distance,
    path: columnPath(column).map((step) => fieldNodeId(state, step.ref)),
    owners: datasetOwners.get(column.ref.datasetId) ?? [],
  }));
  const jobList = jobs.map((r) => ({
    nodeId: analysisNodeId(state, r.node),
    distance: r.distance,
    owners: jobOwners.get(r.node.id) ?? [],
  }));
  const owners = new Map<string, { name: string; type: string | null; nodes: Set<string> }>();
  for (const node of [...reach.map((c) => ({ ...c, nodeId: c.dataset })), ...jobList]) {
    for (const owner of node.owners) {
      const entry = owners.get(owner.name) ?? {
        name: owner.name,
        type: owner.type,
        nodes: new Set<string>(),
      };
      owners.set(owner.name, entry);
      entry.nodes.add(node.nodeId);
    }
  }
  return {
    dataset: name,
    from: { version: from.version, createdAt: from.createdAt.toISOString() },
    to: { version: to.version, createdAt: to.createdAt.toISOString() },
    ...change,
    reach,
    jobs: jobList,
    owners: [...owners.values()]
      .sort((a, b) => compareText(a.name, b.name))
      .map((owner) => ({ ...owner, nodes: [...owner.nodes].sort(compareText) })),
  };
}
