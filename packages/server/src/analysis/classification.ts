/**
 * Classification that follows lineage, computed rather than stored: everything a tag (`pii`) reaches from where
 * it was put, now.
 *
 * - Seeds: datasets and fields carrying the tag (store/queries/classification.ts: the tag routes and `tags`
 *   facets). A dataset's tag classifies each of its columns.
 * - Column hops: a classified column classifies each column it feeds through column lineage (DIRECT and
 *   INDIRECT alike, the read model's column graph), unless every transformation of that edge is masking (a hash,
 *   a redaction): the walk stops there and the answer says where and why.
 * - Coarse hops: a job that reads a dataset holding classified columns and writes an output with no column
 *   lineage from that dataset may copy anything into it, so every column of the output is classified, flagged
 *   `coarse` (the tag may or may not be there), as is everything downstream of a coarse column. An output
 *   whose column lineage names the dataset is left to the column hops: lineage says which columns feed it.
 *
 * Each column is reached once, by its shortest precise path if it has one (all precise hops are walked before
 * any coarse one). Walks the in-memory graphs; queries the seeds, and the schema of each dataset seeded whole or
 * reached coarsely.
 */
import { Closed, Nullable, StringEnum, Time, Type, type Static } from '../core/json-schema.js';
import { compareText } from '../store/queries/lookup.js';
import { taggedSeeds } from '../store/queries/classification.js';
import { findDatasets } from '../store/queries/datasets.js';
import {
  ColumnTransformationSchema,
  type ColumnTransformation,
  type FieldRef,
} from '../read-model/column-graph.js';
import { datasetNodeId, fieldNodeId, jobNodeId, type AnalysisSource } from './context.js';
import { connectingJobsMemo } from './walk.js';

export const ClassifiedColumnSchema = Closed({
  nodeId: Type.String({ description: 'datasetField:<namespace>:<dataset>:<field>' }),
  dataset: Type.String({ description: "The column's dataset nodeId" }),
  distance: Type.Integer({ description: 'Hops (jobs) from the nearest seed; 0 for a seed' }),
  coarse: Type.Boolean({ description: 'Reached through a job with no column lineage: the tag may be there' }),
  seed: Type.String({ description: 'The seed the path starts at (a datasetField or dataset nodeId)' }),
  via: Nullable(Type.String({ description: 'The column (or, for a coarse hop, dataset) one hop back' })),
  jobs: Type.Array(Type.String(), { description: 'The jobs of the last hop, by nodeId' }),
  transformations: Type.Array(ColumnTransformationSchema, {
    description: 'Of the last hop (none if coarse)',
  }),
});
export type ClassifiedColumnJson = Static<typeof ClassifiedColumnSchema>;

export const ClassificationSchema = Closed({
  tag: Type.String(),
  seeds: Type.Array(
    Closed({
      nodeId: Type.String(),
      source: StringEnum(['api', 'facet'] as const, {
        description: 'api: put on through the tag routes; facet: a tags facet (TagsDatasetFacet)',
      }),
      since: Time(),
    }),
  ),
  columns: Type.Array(ClassifiedColumnSchema, {
    description: 'Every column reached, by distance then nodeId',
  }),
  datasets: Type.Array(
    Closed({
      nodeId: Type.String(),
      distance: Type.Integer(),
      coarse: Type.Boolean({ description: 'Every classified column of it is coarse' }),
      columns: Type.Integer({ description: 'How many of its columns are classified' }),
    }),
  ),
  stopped: Type.Array(
    Closed({
      from: Type.String({ description: 'The classified column' }),
      to: Type.String({ description: 'The column it feeds, which the tag does not reach this way' }),
      jobs: Type.Array(Type.String()),
      reason: StringEnum(['masked'] as const),
      transformations: Type.Array(ColumnTransformationSchema),
    }),
    { description: 'Edges the tag does not cross, and why' },
  ),
});
export type ClassificationJson = Static<typeof ClassificationSchema>;

interface Reach {
  readonly ref: FieldRef;
  readonly distance: number;
  readonly coarse: boolean;
  readonly seed: string;
  readonly via: string | null;
  readonly jobs: readonly number[];
  readonly transformations: readonly ColumnTransformation[];
}

const keyOf = (ref: FieldRef) => `${ref.datasetId}\u0000${ref.field}`;

/** An edge the tag does not cross: every transformation of it masks. */
const masks = (transformations: readonly ColumnTransformation[]) =>
  transformations.length > 0 && transformations.every((t) => t.masking);

/** Everything `tag` reaches downstream of where it was put; see the module comment. */
export async function classification(source: AnalysisSource, tag: string): Promise<ClassificationJson> {
  const { db, state, graph, columnGraph } = source;
  const seeds = (await taggedSeeds(db, tag)).filter((seed) => state.datasetsById.has(seed.datasetId));
  const jobsBetween = connectingJobsMemo(state, graph);
  const reached = new Map<string, Reach>();
  /** Per dataset, its nearest classified column (what coarse hops start from). */
  const nearestIn = new Map<number, Reach>();
  const record = (reach: Reach) => {
    reached.set(keyOf(reach.ref), reach);
    const nearest = nearestIn.get(reach.ref.datasetId);
    if (!nearest || reach.distance < nearest.distance) nearestIn.set(reach.ref.datasetId, reach);
  };
  const stopped = new Map<string, ClassificationJson['stopped'][number]>();
  /** Datasets already looked at for coarse hops. */
  const examined = new Set<number>();

  const fieldId = (ref: FieldRef) => fieldNodeId(state, ref);
  /** A dataset's columns: those its current schema names, and those column lineage knows. */
  const known = new Map<number, FieldRef[]>();
  const columnsOf = async (datasetId: number): Promise<FieldRef[]> => {
    let refs = known.get(datasetId);
    if (refs === undefined) {
      const [record] = await findDatasets(db, [datasetId]);
      const names = new Set(columnGraph.fieldsOf(datasetId).map((ref) => ref.field));
      for (const field of record?.fields ?? []) {
        const name = (field as { name?: unknown } | null)?.name;
        if (typeof name === 'string') names.add(name);
      }
      known.set(datasetId, (refs = [...names].map((field) => ({ datasetId, field }))));
    }
    return refs;
  };
  const byNodeId = (refs: readonly FieldRef[]) =>
    [...refs].sort((a, b) => compareText(fieldId(a), fieldId(b)));

  /** Breadth-first from these columns (already in `reached`), precise hops only. */
  const walk = (starts: readonly Reach[]) => {
    let frontier = [...starts];
    while (frontier.length > 0) {
      const next: Reach[] = [];
      for (const from of frontier) {
        for (const to of byNodeId(columnGraph.outputsOf(from.ref))) {
          if (reached.has(keyOf(to))) continue;
          const transformations =
            columnGraph.inputsOf(to).find((input) => keyOf(input) === keyOf(from.ref))?.transformations ?? [];
          const jobs = jobsBetween(from.ref, to, false);
          if (masks(transformations)) {
            const key = `${keyOf(from.ref)}\u0001${keyOf(to)}`;
            stopped.set(key, {
              from: fieldId(from.ref),
              to: fieldId(to),
              jobs: jobs.map((id) => jobNodeId(state, id)),
              reason: 'masked',
              transformations: [...transformations],
            });
            continue;
          }
          const reach: Reach = {
            ref: { datasetId: to.datasetId, field: to.field },
            distance: from.distance + 1,
            coarse: from.coarse,
            seed: from.seed,
            via: fieldId(from.ref),
            jobs,
            transformations,
          };
          record(reach);
          next.push(reach);
        }
      }
      frontier = next;
    }
  };

  // Precise: from the seeds' columns.
  const starts: Reach[] = [];
  const datasetSeeds: { datasetId: number; seed: string }[] = [];
  for (const seed of seeds) {
    const seedId =
      seed.field === null
        ? datasetNodeId(state, seed.datasetId)
        : fieldId({ datasetId: seed.datasetId, field: seed.field });
    const refs =
      seed.field === null
        ? await columnsOf(seed.datasetId)
        : [{ datasetId: seed.datasetId, field: seed.field }];
    if (seed.field === null) datasetSeeds.push({ datasetId: seed.datasetId, seed: seedId });
    for (const ref of refs) {
      if (reached.has(keyOf(ref))) continue;
      const reach: Reach = {
        ref,
        distance: 0,
        coarse: false,
        seed: seedId,
        via: null,
        jobs: [],
        transformations: [],
      };
      record(reach);
      starts.push(reach);
    }
  }
  walk(starts);

  // Coarse: outputs of jobs that read a classified dataset without column lineage from it.
  const queue: { datasetId: number; distance: number; seed: string }[] = [];
  const offerDataset = (datasetId: number) => {
    if (examined.has(datasetId)) return;
    const nearest = nearestIn.get(datasetId);
    const seeded = datasetSeeds.find((seed) => seed.datasetId === datasetId);
    if (!nearest && !seeded) return;
    examined.add(datasetId);
    queue.push({ datasetId, distance: nearest?.distance ?? 0, seed: nearest?.seed ?? seeded!.seed });
  };
  for (const id of [...nearestIn.keys(), ...datasetSeeds.map((seed) => seed.datasetId)]) offerDataset(id);
  /** Datasets reached only coarsely and with no columns known: dataset -> distance. */
  const coarseOnly = new Map<number, number>();
  while (queue.length > 0) {
    queue.sort((a, b) => a.distance - b.distance);
    const from = queue.shift()!;
    for (const job of graph.jobsOf(from.datasetId, 0)) {
      for (const output of graph.datasetsOf(job, 1)) {
        if (output === from.datasetId) continue;
        const fields = await columnsOf(output);
        const described = fields.some((field) =>
          columnGraph.inputsOf(field).some((input) => input.datasetId === from.datasetId),
        );
        if (described) continue;
        const via = datasetNodeId(state, from.datasetId);
        if (fields.length === 0) {
          if (!coarseOnly.has(output) && !nearestIn.has(output)) {
            coarseOnly.set(output, from.distance + 1);
            if (!examined.has(output)) {
              examined.add(output);
              queue.push({ datasetId: output, distance: from.distance + 1, seed: from.seed });
            }
          }
          continue;
        }
        const added: Reach[] = [];
        for (const ref of byNodeId(fields)) {
          if (reached.has(keyOf(ref))) continue;
          const reach: Reach = {
            ref,
            distance: from.distance + 1,
            coarse: true,
            seed: from.seed,
            via,
            jobs: [job],
            transformations: [],
          };
          record(reach);
          added.push(reach);
        }
        walk(added);
        // The walk may have reached datasets further on: each is looked at once.
        for (const id of nearestIn.keys()) offerDataset(id);
      }
    }
  }

  const columns = [...reached.values()]
    .map((reach) => ({ reach, nodeId: fieldId(reach.ref) }))
    .sort((a, b) => a.reach.distance - b.reach.distance || compareText(a.nodeId, b.nodeId));
  const datasets = new Map<number, ClassificationJson['datasets'][number]>();
  for (const { reach } of columns) {
    const known = datasets.get(reach.ref.datasetId);
    if (!known)
      datasets.set(reach.ref.datasetId, {
        nodeId: datasetNodeId(state, reach.ref.datasetId),
        distance: reach.distance,
        coarse: reach.coarse,
        columns: 1,
      });
    else
      datasets.set(reach.ref.datasetId, {
        ...known,
        coarse: known.coarse && reach.coarse,
        columns: known.columns + 1,
      });
  }
  for (const { datasetId } of datasetSeeds)
    if (!datasets.has(datasetId))
      datasets.set(datasetId, {
        nodeId: datasetNodeId(state, datasetId),
        distance: 0,
        coarse: false,
        columns: 0,
      });
  for (const [datasetId, distance] of coarseOnly)
    if (!datasets.has(datasetId))
      datasets.set(datasetId, {
        nodeId: datasetNodeId(state, datasetId),
        distance,
        coarse: true,
        columns: 0,
      });

  return {
    tag,
    seeds: seeds.map((seed) => ({
      nodeId:
        seed.field === null
          ? datasetNodeId(state, seed.datasetId)
          : fieldId({ datasetId: seed.datasetId, field: seed.field }),
      source: seed.source,
      since: seed.since.toISOString(),
    })),
    columns: columns.map(({ reach, nodeId }) => ({
      nodeId,
      dataset: datasetNodeId(state, reach.ref.datasetId),
      distance: reach.distance,
      coarse: reach.coarse,
      seed: reach.seed,
      via: reach.via,
      jobs: reach.jobs.map((id) => jobNodeId(state, id)),
      transformations: [...reach.transformations],
    })),
    datasets: [...datasets.values()].sort(
      (a, b) => a.distance - b.distance || compareText(a.nodeId, b.nodeId),
    ),
    stopped: [...stopped.entries()]
      // A column reached another way is classified: the stop did not keep the tag out of it.
      .filter(([key]) => !reached.has(key.split('\u0001')[1]!))
      .map(([, stop]) => stop)
      .sort((a, b) => compareText(a.from, b.from) || compareText(a.to, b.to)),
  };
}
