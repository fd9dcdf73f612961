/**
 * Impact: what is downstream of a dataset, column or job, who owns it, which of its columns are affected,
 * and whether a schema change breaks it.
 */
import { Closed, Nullable, StringEnum, Type, type Static } from '../core/json-schema.js';
import type { FieldRef } from '../read-model/column-graph.js';
import { newestVersions } from '../store/queries/analysis.js';
import { latestOwners } from '../store/queries/owners.js';
import {
  analysisNodeId,
  compareText,
  datasetNodeId,
  fieldNodeId,
  type AnalysisNode,
  type AnalysisSource,
  type AnalysisTime,
} from './context.js';
import { brokenColumns, diffSchemas, schemaChangeProperties } from './schema.js';
import { OwnerRollupSchema, OwnerSchema } from './owners.js';
import {
  connectingJobsMemo,
  nodesOfColumnWalk,
  walkColumns,
  walkJobGraph,
  type Reached,
  type ReachedColumn,
} from './walk.js';

/**
 * The change an impact analysis considers:
 * - `latest`: the schema change between the two newest versions of the start dataset (a job: of each of its
 *   outputs; a column: of its dataset, that column only);
 * - `removed` / `typeChanged`: the start column (a dataset's or job's outputs': every column) is removed or
 *   changes type, a breaking change;
 * - `none`: no change, only what is downstream.
 */
export const IMPACT_CHANGES = ['latest', 'removed', 'typeChanged', 'none'] as const;
export type ImpactChange = (typeof IMPACT_CHANGES)[number];

/**
 * `breaking`: a broken column reaches the node through column lineage (a dataset holding it, a job reading it);
 * `direct`: at most two edges away (the jobs reading the start and what they write); `indirect`: further.
 */
export const IMPACT_LEVELS = ['breaking', 'direct', 'indirect'] as const;
export type ImpactLevel = (typeof IMPACT_LEVELS)[number];

/** A downstream dataset or job. */
export const ImpactedNodeSchema = Closed({
  nodeId: Type.String(),
  kind: StringEnum(['dataset', 'job']),
  distance: Type.Integer({ description: 'Edges from the start' }),
  level: StringEnum(IMPACT_LEVELS),
  via: Type.String({
    description:
      'The node before this one on a shortest path from the start (a column, where the path follows column ' +
      'lineage): follow `via` back to the start for the whole path',
  }),
  owners: Type.Array(OwnerSchema, { description: 'From the latest ownership facet' }),
  columns: Type.Array(Type.String(), {
    description:
      "Columns reached through column lineage: a dataset's own, the columns a job reads (datasetField ids)",
  }),
  breakingColumns: Type.Array(Type.String(), {
    description: 'The columns among `columns` a breaking change reaches',
  }),
});
export type ImpactedNode = Static<typeof ImpactedNodeSchema>;

/** A schema change considered, on one dataset. */
export const ConsideredChangeSchema = Closed({
  dataset: Type.String(),
  fromVersion: Nullable(Type.String()),
  toVersion: Nullable(Type.String()),
  ...schemaChangeProperties,
  brokenColumns: Type.Array(Type.String(), { description: 'The columns taken as broken (datasetField ids)' }),
});
export type ConsideredChange = Static<typeof ConsideredChangeSchema>;

/** The answer of an impact analysis. */
export const ImpactResultSchema = Closed({
  start: Type.String(),
  change: StringEnum(IMPACT_CHANGES),
  changes: Type.Array(ConsideredChangeSchema),
  breaking: Type.Boolean({ description: 'Some downstream node is at level breaking' }),
  nodes: Type.Array(ImpactedNodeSchema, { description: 'Downstream nodes by distance, then nodeId' }),
  owners: Type.Array(OwnerRollupSchema, {
    description: 'Everyone who owns an impacted node, by name, with the nodes they own',
  }),
});
export type ImpactResult = Static<typeof ImpactResultSchema>;

const refKey = (ref: FieldRef) => `${ref.datasetId}\u0000${ref.field}`;

/**
 * Everything downstream of `start`, each node with its distance, shortest path, owners, affected columns and
 * impact level. Walks the in-memory graphs; two queries (owners of datasets and of jobs), plus one for the
 * versions when `change` is `latest`.
 */
export async function impact(
  source: AnalysisSource,
  start: AnalysisNode,
  change: ImpactChange,
  _time: AnalysisTime,
): Promise<ImpactResult> {
  const { db, state, graph, columnGraph } = source;
  const startDatasets =
    start.kind === 'dataset'
      ? [start.id]
      : start.kind === 'job'
        ? graph.datasetsOf(start.id, 1)
        : [start.datasetId];
  const startColumns: FieldRef[] =
    start.kind === 'datasetField'
      ? [{ datasetId: start.datasetId, field: start.field }]
      : startDatasets.flatMap((id) => columnGraph.fieldsOf(id));
  const columns = walkColumns(state, columnGraph, startColumns, 'downstream');
  let reached: Reached[];
  if (start.kind === 'datasetField') {
    reached = nodesOfColumnWalk(state, graph, columns, 'downstream').filter((r) => r.distance > 0);
  } else {
    reached = walkJobGraph(state, graph, start, 'downstream').slice(1);
  }

  // The broken columns and the changes they come from.
  const changes: ConsideredChange[] = [];
  const broken: FieldRef[] = [];
  const versions = change === 'latest' ? await newestVersions(db, startDatasets, 2) : new Map();
  for (const datasetId of startDatasets) {
    let columnsBroken: FieldRef[];
    if (change === 'none') continue;
    if (change === 'latest') {
      const [to, from] = (versions.get(datasetId) ?? []) as { version: string; fields: unknown[] }[];
      if (!to || !from) continue;
      const diff = diffSchemas(from.fields, to.fields);
      columnsBroken = brokenColumns(diff)
        .filter((field) => start.kind !== 'datasetField' || field === start.field)
        .map((field) => ({ datasetId, field }));
      changes.push({
        dataset: datasetNodeId(state, datasetId),
        fromVersion: from.version,
        toVersion: to.version,
        ...diff,
        brokenColumns: columnsBroken.map((ref) => fieldNodeId(state, ref)),
      });
    } else {
      columnsBroken = startColumns.filter((ref) => ref.datasetId === datasetId);
      changes.push({
        dataset: datasetNodeId(state, datasetId),
        fromVersion: null,
        toVersion: null,
        added: [],
        removed: change === 'removed' ? columnsBroken.map((ref) => ({ name: ref.field, type: null })) : [],
        typeChanged:
          change === 'typeChanged'
            ? columnsBroken.map((ref) => ({ name: ref.field, fromType: null, toType: null }))
            : [],
        breaking: columnsBroken.length > 0,
        brokenColumns: columnsBroken.map((ref) => fieldNodeId(state, ref)),
      });
    }
    broken.push(...columnsBroken);
  }
  const brokenWalk = walkColumns(state, columnGraph, broken, 'downstream');
  const breakingJobs = new Set(
    nodesOfColumnWalk(state, graph, brokenWalk, 'downstream')
      .filter((r) => r.node.kind === 'job')
      .map((r) => r.node.id),
  );

  // Columns per node: a dataset's reached columns; for a job, the reached columns it reads into a reached one.
  const reachedKeys = new Set(columns.map((column) => refKey(column.ref)));
  const brokenKeys = new Set(brokenWalk.map((column) => refKey(column.ref)));
  const startKeys = new Set(broken.map(refKey));
  const columnsOfDataset = new Map<number, ReachedColumn[]>();
  const columnsOfJob = new Map<number, Set<string>>();
  const jobsBetween = connectingJobsMemo(state, graph);
  for (const column of columns) {
    let list = columnsOfDataset.get(column.ref.datasetId);
    if (!list) columnsOfDataset.set(column.ref.datasetId, (list = []));
    list.push(column);
    for (const output of columnGraph.outputsOf(column.ref)) {
      if (!reachedKeys.has(refKey(output))) continue;
      for (const job of jobsBetween(column.ref, output, false)) {
        let set = columnsOfJob.get(job);
        if (!set) columnsOfJob.set(job, (set = new Set()));
        set.add(refKey(column.ref));
      }
    }
  }
  const refOf = (key: string): FieldRef => {
    const [datasetId, field] = key.split('\u0000') as [string, string];
    return { datasetId: Number(datasetId), field };
  };

  const datasetIds = reached.filter((r) => r.node.kind === 'dataset').map((r) => r.node.id);
  const jobIds = reached.filter((r) => r.node.kind === 'job').map((r) => r.node.id);
  const [datasetOwners, jobOwners] = await Promise.all([
    latestOwners(db, 'dataset', datasetIds),
    latestOwners(db, 'job', jobIds),
  ]);

  const sortIds = (refs: FieldRef[]) => refs.map((ref) => fieldNodeId(state, ref)).sort(compareText);
  const nodes: ImpactedNode[] = reached.map((r) => {
    let affected: FieldRef[];
    let breakingColumns: FieldRef[];
    if (r.node.kind === 'dataset') {
      affected = (columnsOfDataset.get(r.node.id) ?? []).map((column) => column.ref);
      // The start's own broken columns break the outputs of a job start, not a dataset start's readers.
      breakingColumns = affected.filter((ref) => brokenKeys.has(refKey(ref)));
      if (start.kind !== 'job')
        breakingColumns = breakingColumns.filter((ref) => !startKeys.has(refKey(ref)));
    } else {
      affected = [...(columnsOfJob.get(r.node.id) ?? [])].map(refOf);
      breakingColumns = breakingJobs.has(r.node.id)
        ? affected.filter((ref) => brokenKeys.has(refKey(ref)))
        : [];
    }
    const level: ImpactLevel =
      breakingColumns.length > 0 ? 'breaking' : r.distance <= 2 ? 'direct' : 'indirect';
    return {
      nodeId: analysisNodeId(state, r.node),
      kind: r.node.kind,
      distance: r.distance,
      level,
      via: analysisNodeId(state, r.trail.previous?.node ?? start),
      owners: (r.node.kind === 'dataset' ? datasetOwners : jobOwners).get(r.node.id) ?? [],
      columns: sortIds(affected),
      breakingColumns: sortIds(breakingColumns),
    };
  });
  nodes.sort((a, b) => a.distance - b.distance || compareText(a.nodeId, b.nodeId));

  const owners = new Map<string, { name: string; type: string | null; nodes: string[] }>();
  for (const node of nodes) {
    for (const owner of node.owners) {
      const entry = owners.get(owner.name) ?? { name: owner.name, type: owner.type, nodes: [] };
      owners.set(owner.name, entry);
      entry.nodes.push(node.nodeId);
    }
  }
  return {
    start: analysisNodeId(state, start),
    change,
    changes,
    breaking: nodes.some((node) => node.level === 'breaking'),
    nodes,
    owners: [...owners.values()].sort((a, b) => compareText(a.name, b.name)),
  };
}
