/**
 * A preview's lineage diffed against production's: what a pull request changes (datasets, jobs, columns,
 * column lineage, the rows a query keeps, its SQL, its row counts, its runs), and, for each change, the
 * production consumers it reaches (any producer's: a dashboard's job is one as much as a dbt model), with their
 * distance, owners and the columns it breaks.
 *
 * Each preview node stands for the production node the preview's name mapping gives (model/previews.ts), or
 * the one of the same name: its jobs, in the preview's job namespace, for the base namespace's. The categories:
 * - `breaking`: a production consumer reads what the change takes away or redefines as a whole (a column
 *   removed, renamed or retyped that a consumer's column lineage reads; a dataset removed that a job reads;
 *   rows kept differently, failed runs: everything downstream);
 * - `partial`: some of what consumers read changes (a column computed another way, SQL changed in its
 *   expressions only, a removed column that consumers without column lineage may read);
 * - `non-breaking`: nothing a consumer reads changes (additions, what nobody reads, row counts).
 */
import { Closed, Nullable, StringEnum, Type, type Static } from '../core/json-schema.js';
import { mapPreviewName, type PreviewMapping } from '../model/previews.js';
import type { ColumnGraph, ColumnInput } from '../read-model/column-graph.js';
import { entityKey } from '../store/model-state.js';
import { latestFacets } from '../store/queries/facets.js';
import { findDatasets } from '../store/queries/datasets.js';
import { latestRowCounts } from '../store/queries/history.js';
import { latestRunsOfJobs } from '../store/queries/runs.js';
import type { ReadModel } from '../store/read-model.js';
import { compareText, datasetNodeId, jobNodeId, type AnalysisSource } from './context.js';
import { impact, type ImpactedNode } from './impact.js';
import { OwnerSchema } from './owners.js';
import { schemaColumns } from './schema.js';
import { compareSql } from './sql-clauses.js';

export const PREVIEW_CATEGORIES = ['breaking', 'partial', 'non-breaking'] as const;
export type PreviewCategory = (typeof PREVIEW_CATEGORIES)[number];

/** Why a change is in the diff (machine-readable). */
export const PREVIEW_REASONS = [
  'dataset-added',
  'dataset-removed',
  'job-added',
  'job-removed',
  'column-added',
  'column-removed',
  'column-renamed',
  'column-retyped',
  'column-redefined',
  'rows-changed',
  'sql-changed',
  'run-failed',
  'row-count-drift',
  'code-changed',
] as const;
export type PreviewReason = (typeof PREVIEW_REASONS)[number];

/** A production node a change reaches. */
export const PreviewConsumerSchema = Closed({
  nodeId: Type.String(),
  kind: StringEnum(['dataset', 'job']),
  distance: Type.Integer({ description: 'Edges from the changed node' }),
  owners: Type.Array(OwnerSchema),
  breakingColumns: Type.Array(Type.String(), { description: 'The columns the change breaks that reach it' }),
  coarse: Type.Boolean({
    description: 'A job that reads the dataset without column lineage: it may read what changed',
  }),
});
export type PreviewConsumer = Static<typeof PreviewConsumerSchema>;

export const PreviewChangeSchema = Closed({
  category: StringEnum(PREVIEW_CATEGORIES),
  reason: StringEnum(PREVIEW_REASONS),
  node: Type.String({ description: 'The production node changed (the preview node for what is added)' }),
  previewNode: Nullable(Type.String(), { description: "The preview's node (null for what is removed)" }),
  column: Nullable(Type.String()),
  from: Nullable(
    Type.String({ description: 'Before: a column name or type, SQL, a row count, a run state' }),
  ),
  to: Nullable(Type.String({ description: 'After, in the preview' })),
  detail: Type.String({ description: 'The change in words' }),
  consumers: Type.Array(PreviewConsumerSchema, { description: 'Production nodes it reaches, by distance' }),
});
export type PreviewChange = Static<typeof PreviewChangeSchema>;

export const PreviewDiffSchema = Closed({
  preview: Type.String(),
  jobNamespace: Type.String(),
  baseNamespace: Type.String(),
  summary: Closed({
    breaking: Type.Integer(),
    partial: Type.Integer(),
    nonBreaking: Type.Integer(),
    consumers: Type.Integer({
      description: 'Distinct production nodes the breaking and partial changes reach',
    }),
  }),
  datasets: Closed({ added: Type.Array(Type.String()), removed: Type.Array(Type.String()) }),
  jobs: Closed({ added: Type.Array(Type.String()), removed: Type.Array(Type.String()) }),
  changes: Type.Array(PreviewChangeSchema, {
    description: 'Breaking first, then partial, then non-breaking',
  }),
  mappingCoverage: Closed({
    mapped: Type.Array(Closed({ preview: Type.String(), production: Type.String() })),
    unmapped: Type.Array(Type.String(), {
      description: "Preview datasets with no production counterpart (new, or a gap in the preview's mapping)",
    }),
  }),
});
export type PreviewDiff = Static<typeof PreviewDiffSchema>;

/** A side of the diff: what analyses read, and the column graph's detail. */
export interface DiffSide extends AnalysisSource {
  readonly columns: Pick<ColumnGraph, 'fieldsOf' | 'inputsOf' | 'datasetInputsOf'>;
}

/** The preview as the diff needs it. */
export interface DiffPreview {
  readonly name: string;
  readonly jobNamespace: string;
  readonly baseNamespace: string;
  readonly mappings: readonly PreviewMapping[];
}

/** Row counts further apart than this share of production's are drift. */
const DRIFT = 0.1;

const RANK: Record<PreviewCategory, number> = { breaking: 0, partial: 1, 'non-breaking': 2 };

/** A column's inputs as text, in a form both sides share (production's names), sorted. */
function inputKeys(state: ReadModel, inputs: readonly ColumnInput[], toProduction: NameMap): string[] {
  const keys = inputs.map((input) => {
    const dataset = state.datasetsById.get(input.datasetId);
    const namespace = dataset ? (state.namespacesById.get(dataset.namespaceId)?.name ?? '') : '';
    const name = toProduction(namespace, dataset?.name ?? '');
    const kinds = input.transformations
      .map((t) => `${t.type}/${t.subtype}${t.masking ? '/masked' : ''}`)
      .sort()
      .join(',');
    return `${name.namespace}\u0000${name.name}\u0000${input.field}\u0000${kinds}`;
  });
  return [...new Set(keys)].sort();
}

type NameMap = (namespace: string, name: string) => { namespace: string; name: string };

/** The id of the dataset or job of `namespace` and `name` in `state`. */
function idOf(
  state: ReadModel,
  kind: 'dataset' | 'job',
  namespace: string,
  name: string,
): number | undefined {
  const ns = state.namespaces.get(namespace);
  if (!ns) return undefined;
  const entity = (kind === 'dataset' ? state.datasets : state.jobs).get(entityKey(ns.id, name));
  return entity && !entity.isHidden ? entity.id : undefined;
}

const nameOf = (state: ReadModel, kind: 'dataset' | 'job', id: number) => {
  const entity = (kind === 'dataset' ? state.datasetsById : state.jobsById).get(id)!;
  return { namespace: state.namespacesById.get(entity.namespaceId)?.name ?? '', name: entity.name };
};

/**
 * A dataset's columns: its schema's, and those its column lineage derives (not those only read from it: a
 * reader's lineage may name a column the dataset no longer has), with the schema's types.
 */
function columnsOf(
  fields: readonly unknown[] | null,
  side: DiffSide,
  datasetId: number,
): Map<string, { type: string | null }> {
  const columns = new Map<string, { type: string | null }>();
  for (const column of schemaColumns(fields)) columns.set(column.name, { type: column.type });
  for (const ref of side.columns.fieldsOf(datasetId))
    if (ref.field !== '' && !columns.has(ref.field) && side.columns.inputsOf(ref).length > 0)
      columns.set(ref.field, { type: null });
  return columns;
}

/** Computes the diff of a preview against production. */
export async function previewDiff(
  preview: DiffPreview,
  side: DiffSide,
  production: DiffSide,
): Promise<PreviewDiff> {
  const P = side.state;
  const Q = production.state;
  // A preview name -> the production name it stands for (the mapping's, else itself).
  const toProduction: NameMap = (namespace, name) =>
    mapPreviewName(preview.mappings, namespace, name) ?? { namespace, name };
  // A preview's job stands for the one of the base namespace (its own namespace's when it came to the preview
  // by its sourceCodeLocation) of the mapped name.
  const jobCounterpart = (namespace: string, name: string) => {
    const mapped = mapPreviewName(preview.mappings, namespace, name);
    const base = namespace === preview.jobNamespace ? preview.baseNamespace : namespace;
    return idOf(Q, 'job', base, mapped?.name ?? name);
  };
  const renameInSql = (name: string) => {
    for (const mapping of preview.mappings) {
      const mapped = mapPreviewName([{ ...mapping, from: { ...mapping.from, namespace: null } }], '', name);
      if (mapped) return mapped.name;
    }
    return name;
  };

  const changes: PreviewChange[] = [];
  const at = { at: new Date() };
  const consumersMemo = new Map<string, Promise<ImpactedNode[]>>();
  const downstream = (
    node: { kind: 'dataset'; id: number } | { kind: 'datasetField'; datasetId: number; field: string },
    change: 'removed' | 'typeChanged' | 'none',
  ) => {
    const key = JSON.stringify([node, change]);
    let found = consumersMemo.get(key);
    if (!found) {
      found = impact(production, node, change, at).then((result) => result.nodes);
      consumersMemo.set(key, found);
    }
    return found;
  };
  const consumerOf = (node: ImpactedNode, coarse = false): PreviewConsumer => ({
    nodeId: node.nodeId,
    kind: node.kind,
    distance: node.distance,
    owners: node.owners,
    breakingColumns: node.breakingColumns,
    coarse,
  });

  // The preview's jobs, each with its production counterpart.
  const previewJobs = [...P.jobsById.values()].filter((job) => !job.isHidden);
  const jobPairs = new Map<number, number | undefined>();
  for (const job of previewJobs) {
    const { namespace, name } = nameOf(P, 'job', job.id);
    jobPairs.set(job.id, jobCounterpart(namespace, name));
  }
  const coveredProductionJobs = new Set([...jobPairs.values()].filter((id) => id !== undefined));

  // The preview's datasets: those its jobs write, and those they read.
  const written = new Set<number>();
  const read = new Set<number>();
  for (const job of previewJobs) {
    for (const id of side.graph.datasetsOf(job.id, 1)) written.add(id);
    for (const id of side.graph.datasetsOf(job.id, 0)) read.add(id);
  }
  const datasetPairs = new Map<number, number | undefined>();
  for (const id of new Set([...written, ...read])) {
    const { namespace, name } = nameOf(P, 'dataset', id);
    const target = toProduction(namespace, name);
    datasetPairs.set(id, idOf(Q, 'dataset', target.namespace, target.name));
  }
  const mappedProduction = new Set([...datasetPairs.values()].filter((id) => id !== undefined));

  const added = { datasets: [] as string[], jobs: [] as string[] };
  const removed = { datasets: [] as string[], jobs: [] as string[] };
  const unmapped: string[] = [];
  const mapped: { preview: string; production: string }[] = [];
  for (const [id, counterpart] of datasetPairs) {
    const nodeId = datasetNodeId(P, id);
    if (counterpart !== undefined) {
      mapped.push({ preview: nodeId, production: datasetNodeId(Q, counterpart) });
      continue;
    }
    unmapped.push(nodeId);
    if (!written.has(id)) continue;
    added.datasets.push(nodeId);
    changes.push({
      category: 'non-breaking',
      reason: 'dataset-added',
      node: nodeId,
      previewNode: nodeId,
      column: null,
      from: null,
      to: null,
      detail: `${nodeId} is new: production has no dataset it stands for`,
      consumers: [],
    });
  }
  for (const [id, counterpart] of jobPairs) {
    if (counterpart !== undefined) continue;
    const nodeId = jobNodeId(P, id);
    added.jobs.push(nodeId);
    changes.push({
      category: 'non-breaking',
      reason: 'job-added',
      node: nodeId,
      previewNode: nodeId,
      column: null,
      from: null,
      to: null,
      detail: `${nodeId} is new: production's ${preview.baseNamespace} has no job it stands for`,
      consumers: [],
    });
  }

  // Production's jobs of the base namespace that the preview has no counterpart of, and what they alone wrote.
  const baseNamespace = Q.namespaces.get(preview.baseNamespace);
  const removedJobs = [...Q.jobsById.values()].filter(
    (job) => job.namespaceId === baseNamespace?.id && !job.isHidden && !coveredProductionJobs.has(job.id),
  );
  const removedJobIds = new Set(removedJobs.map((job) => job.id));
  const removedJobNodes = new Set(removedJobs.map((job) => jobNodeId(Q, job.id)));
  for (const job of removedJobs) {
    const nodeId = jobNodeId(Q, job.id);
    removed.jobs.push(nodeId);
    changes.push({
      category: 'non-breaking',
      reason: 'job-removed',
      node: nodeId,
      previewNode: null,
      column: null,
      from: null,
      to: null,
      detail: `the preview has no job standing for ${nodeId}`,
      consumers: [],
    });
    for (const datasetId of production.graph.datasetsOf(job.id, 1)) {
      if (mappedProduction.has(datasetId)) continue;
      // Written by another production job that stays: not removed.
      if (production.graph.jobsOf(datasetId, 1).some((writer) => !removedJobIds.has(writer))) continue;
      const datasetId_ = datasetNodeId(Q, datasetId);
      if (removed.datasets.includes(datasetId_)) continue;
      removed.datasets.push(datasetId_);
      const consumers = (await downstream({ kind: 'dataset', id: datasetId }, 'removed'))
        .filter((node) => !removedJobNodes.has(node.nodeId))
        .map((node) => consumerOf(node));
      changes.push({
        category: consumers.length > 0 ? 'breaking' : 'non-breaking',
        reason: 'dataset-removed',
        node: datasetId_,
        previewNode: null,
        column: null,
        from: null,
        to: null,
        detail:
          `${datasetId_} is no longer written by the preview` +
          (consumers.length > 0 ? `; ${consumers.length} production node(s) downstream read it` : ''),
        consumers,
      });
    }
  }

  // Each dataset both sides have that the preview writes: its columns, their lineage, its rows.
  // Each job both sides have: its SQL and its last run (read before the datasets: a dataset that only a failed
  // preview run wrote is told by that failure, not compared column by column).
  const pairedJobs = [...jobPairs].filter((pair): pair is [number, number] => pair[1] !== undefined);
  const [previewJobFacets, productionJobFacets, previewRuns, productionRuns] = await Promise.all([
    latestFacets<number>(
      side.db,
      'job',
      pairedJobs.map(([id]) => id),
      ['sql', 'sourceCode'],
    ),
    latestFacets<number>(
      production.db,
      'job',
      pairedJobs.map(([, id]) => id),
      ['sql', 'sourceCode'],
    ),
    latestRunsOfJobs(
      side.db,
      pairedJobs.map(([id]) => id),
      1,
    ),
    latestRunsOfJobs(
      production.db,
      pairedJobs.map(([, id]) => id),
      1,
    ),
  ]);
  const failedInPreview = new Set(
    pairedJobs.filter(([p]) => previewRuns.get(p)?.[0]?.state === 'FAILED').map(([p]) => p),
  );
  const writtenOnlyByFailed = (datasetId: number) => {
    const writers = side.graph.jobsOf(datasetId, 1);
    return writers.length > 0 && writers.every((job) => failedInPreview.has(job));
  };

  const pairs = [...datasetPairs].filter(
    (pair): pair is [number, number] =>
      pair[1] !== undefined && written.has(pair[0]) && !writtenOnlyByFailed(pair[0]),
  );
  const [previewRecords, productionRecords, previewCounts, productionCounts] = await Promise.all([
    findDatasets(
      side.db,
      pairs.map(([id]) => id),
    ),
    findDatasets(
      production.db,
      pairs.map(([, id]) => id),
    ),
    latestRowCounts(
      side.db,
      pairs.map(([id]) => id),
      at.at,
    ),
    latestRowCounts(
      production.db,
      pairs.map(([, id]) => id),
      at.at,
    ),
  ]);
  // Production datasets whose columns change: an SQL change of their writer is told by those changes.
  const withColumnChanges = new Set<number>();
  const previewFields = new Map(previewRecords.map((record) => [record.id, record.fields]));
  const productionFields = new Map(productionRecords.map((record) => [record.id, record.fields]));
  for (const [p, q] of pairs) {
    const previewNode = datasetNodeId(P, p);
    const node = datasetNodeId(Q, q);
    const before = columnsOf(productionFields.get(q) ?? null, production, q);
    const after = columnsOf(previewFields.get(p) ?? null, side, p);
    const inputsAfter = (field: string) =>
      inputKeys(P, side.columns.inputsOf({ datasetId: p, field }), toProduction);
    const inputsBefore = (field: string) =>
      inputKeys(Q, production.columns.inputsOf({ datasetId: q, field }), (namespace, name) => ({
        namespace,
        name,
      }));
    const gone = [...before.keys()].filter((name) => !after.has(name)).sort(compareText);
    const fresh = [...after.keys()].filter((name) => !before.has(name)).sort(compareText);
    // A column gone and one new with the same (non-empty) inputs: renamed.
    const renamed = new Map<string, string>();
    for (const old of gone) {
      const inputs = inputsBefore(old).join('\n');
      if (inputs === '') continue;
      const match = fresh.find((name) => !renamed.has(name) && inputsAfter(name).join('\n') === inputs);
      if (match !== undefined) renamed.set(match, old);
    }
    const renamedFrom = new Set(renamed.values());
    // Coarse readers: production jobs reading the dataset without column lineage from it, outside the
    // preview's own pipeline (whose jobs the preview ran again: their runs speak for them).
    const coarseReaders = production.graph
      .jobsOf(q, 0)
      .filter(
        (job) =>
          !coveredProductionJobs.has(job) && !removedJobIds.has(job) && !columnReadBy(production, q, job),
      );
    const columnChange = async (
      reason: 'column-removed' | 'column-renamed' | 'column-retyped' | 'column-redefined',
      column: string,
      from: string | null,
      to: string | null,
      detail: string,
    ) => {
      const change =
        reason === 'column-retyped' ? 'typeChanged' : reason === 'column-redefined' ? 'none' : 'removed';
      const reached = (await downstream({ kind: 'datasetField', datasetId: q, field: column }, change)).map(
        (consumer) => consumerOf(consumer),
      );
      const coarse = coarseReaders.map((job) => ({
        nodeId: jobNodeId(Q, job),
        kind: 'job' as const,
        distance: 1,
        owners: [],
        breakingColumns: [],
        coarse: true,
      }));
      const consumers = [...reached, ...coarse.filter((c) => !reached.some((r) => r.nodeId === c.nodeId))];
      const category: PreviewCategory =
        reached.length > 0
          ? reason === 'column-redefined'
            ? 'partial'
            : 'breaking'
          : coarse.length > 0
            ? 'partial'
            : 'non-breaking';
      changes.push({ category, reason, node, previewNode, column, from, to, detail, consumers });
      withColumnChanges.add(q);
    };
    for (const column of gone) {
      if (renamedFrom.has(column)) continue;
      await columnChange('column-removed', column, column, null, `${node} loses column ${column}`);
    }
    for (const [name, old] of renamed)
      await columnChange(
        'column-renamed',
        old,
        old,
        name,
        `${node}: column ${old} is now ${name} (same lineage)`,
      );
    for (const column of fresh) {
      if (renamed.has(column)) continue;
      withColumnChanges.add(q);
      changes.push({
        category: 'non-breaking',
        reason: 'column-added',
        node,
        previewNode,
        column,
        from: null,
        to: column,
        detail: `${node} gains column ${column}`,
        consumers: [],
      });
    }
    for (const [column, { type }] of after) {
      const old = before.get(column);
      if (!old) continue;
      if (old.type !== null && type !== null && old.type.toLowerCase() !== type.toLowerCase()) {
        await columnChange(
          'column-retyped',
          column,
          old.type,
          type,
          `${node}: column ${column} changes type from ${old.type} to ${type}`,
        );
        continue;
      }
      const was = inputsBefore(column);
      const now = inputsAfter(column);
      if ((was.length > 0 || now.length > 0) && was.join('\n') !== now.join('\n'))
        await columnChange(
          'column-redefined',
          column,
          null,
          null,
          `${node}: column ${column} is derived from other inputs than in production`,
        );
    }
    const countBefore = productionCounts.get(q);
    const countAfter = previewCounts.get(p);
    if (
      countBefore !== undefined &&
      countAfter !== undefined &&
      Math.abs(countAfter - countBefore) > DRIFT * Math.max(countBefore, 1)
    )
      changes.push({
        category: 'non-breaking',
        reason: 'row-count-drift',
        node,
        previewNode,
        column: null,
        from: String(countBefore),
        to: String(countAfter),
        detail: `${node}: the preview wrote ${countAfter} rows, production ${countBefore}`,
        consumers: [],
      });
  }

  // Each paired job: the rows it keeps (dataset-level lineage, SQL) and its last run.
  for (const [p, q] of pairedJobs) {
    const node = jobNodeId(Q, q);
    const previewNode = jobNodeId(P, p);
    const outputs = production.graph.datasetsOf(q, 1);
    const everythingDownstream = async () => {
      const seen = new Map<string, PreviewConsumer>();
      for (const output of outputs) {
        seen.set(datasetNodeId(Q, output), {
          nodeId: datasetNodeId(Q, output),
          kind: 'dataset',
          distance: 1,
          owners: [],
          breakingColumns: [],
          coarse: false,
        });
        for (const consumer of await downstream({ kind: 'dataset', id: output }, 'none')) {
          const known = seen.get(consumer.nodeId);
          if (!known || known.distance > consumer.distance + 1)
            seen.set(consumer.nodeId, { ...consumerOf(consumer), distance: consumer.distance + 1 });
        }
      }
      return [...seen.values()].sort((a, b) => a.distance - b.distance || compareText(a.nodeId, b.nodeId));
    };
    const runAfter = previewRuns.get(p)?.[0];
    const runBefore = productionRuns.get(q)?.[0];
    if (runAfter?.state === 'FAILED' && runBefore?.state !== 'FAILED') {
      changes.push({
        category: 'breaking',
        reason: 'run-failed',
        node,
        previewNode,
        column: null,
        from: runBefore?.state ?? null,
        to: runAfter.state,
        detail: `the preview's run of ${previewNode} failed (production's last run: ${runBefore?.state ?? 'none'})`,
        consumers: await everythingDownstream(),
      });
      continue;
    }
    const sqlAfter = (previewJobFacets.get(p)?.sql as { query?: unknown } | undefined)?.query;
    const sqlBefore = (productionJobFacets.get(q)?.sql as { query?: unknown } | undefined)?.query;
    // Dataset-level lineage (filters, joins, group-bys as the producer reports them), in production's names.
    const indirect = (ds: DiffSide, state: ReadModel, ids: readonly number[], map: NameMap) =>
      ids
        .flatMap((id) => inputKeys(state, ds.columns.datasetInputsOf(id), map))
        .sort()
        .join('\n');
    const indirectChanged =
      indirect(side, P, side.graph.datasetsOf(p, 1), toProduction) !==
      indirect(production, Q, outputs, (namespace, name) => ({ namespace, name }));
    const sqlChange =
      typeof sqlAfter === 'string' && typeof sqlBefore === 'string'
        ? compareSql(sqlBefore, sqlAfter, renameInSql)
        : 'same';
    // A job's code without SQL (Spark, Python): told when its sourceCode facet's text changed.
    const codeOf = (facets: Record<string, unknown> | undefined) => {
      const code = (facets?.sourceCode as { sourceCode?: unknown } | undefined)?.sourceCode;
      return typeof code === 'string' ? code.trim() : undefined;
    };
    const codeAfter = codeOf(previewJobFacets.get(p));
    const codeBefore = codeOf(productionJobFacets.get(q));
    if (codeAfter !== undefined && codeBefore !== undefined && codeAfter !== codeBefore)
      changes.push({
        category: 'non-breaking',
        reason: 'code-changed',
        node,
        previewNode,
        column: null,
        from: codeBefore,
        to: codeAfter,
        detail: `${node}'s source code changed (its lineage changes, if any, are told beside)`,
        consumers: [],
      });
    if (indirectChanged || sqlChange === 'rows') {
      const consumers = await everythingDownstream();
      changes.push({
        category: 'breaking',
        reason: 'rows-changed',
        node,
        previewNode,
        column: null,
        from: typeof sqlBefore === 'string' ? sqlBefore : null,
        to: typeof sqlAfter === 'string' ? sqlAfter : null,
        detail: indirectChanged
          ? `${node} filters, joins or groups its inputs otherwise (dataset-level lineage): the rows of everything downstream may change`
          : `${node} keeps other rows (its WHERE, JOIN, GROUP BY, HAVING, LIMIT or DISTINCT changed): everything downstream may change`,
        consumers,
      });
    } else if (sqlChange === 'expressions') {
      // Explained by the column changes of its outputs (each with its consumers), or a change of its own.
      const explained = outputs.some((output) => withColumnChanges.has(output));
      const consumers = explained ? [] : await everythingDownstream();
      changes.push({
        category: explained ? 'non-breaking' : 'partial',
        reason: 'sql-changed',
        node,
        previewNode,
        column: null,
        from: sqlBefore as string,
        to: sqlAfter as string,
        detail: explained
          ? `${node}'s SQL changed as the column changes of its output say (the rows it keeps are the same)`
          : `${node}'s SQL computes its columns otherwise (the rows it keeps are the same)`,
        consumers,
      });
    }
  }

  changes.sort(
    (a, b) =>
      RANK[a.category] - RANK[b.category] ||
      compareText(a.node, b.node) ||
      compareText(a.column ?? '', b.column ?? '') ||
      compareText(a.reason, b.reason),
  );
  const reached = new Set<string>();
  for (const change of changes)
    if (change.category !== 'non-breaking')
      for (const consumer of change.consumers) reached.add(consumer.nodeId);
  const count = (category: PreviewCategory) =>
    changes.filter((change) => change.category === category).length;
  return {
    preview: preview.name,
    jobNamespace: preview.jobNamespace,
    baseNamespace: preview.baseNamespace,
    summary: {
      breaking: count('breaking'),
      partial: count('partial'),
      nonBreaking: count('non-breaking'),
      consumers: reached.size,
    },
    datasets: { added: added.datasets.sort(compareText), removed: removed.datasets.sort(compareText) },
    jobs: { added: added.jobs.sort(compareText), removed: removed.jobs.sort(compareText) },
    changes,
    mappingCoverage: {
      mapped: mapped.sort((a, b) => compareText(a.preview, b.preview)),
      unmapped: unmapped.sort(compareText),
    },
  };
}

/** Whether column lineage says `job` reads some column of dataset `datasetId`. */
function columnReadBy(side: DiffSide, datasetId: number, job: number): boolean {
  for (const output of side.graph.datasetsOf(job, 1))
    for (const ref of side.columns.fieldsOf(output))
      if (side.columns.inputsOf(ref).some((input) => input.datasetId === datasetId)) return true;
  return false;
}
