/**
 * ML lineage: a model is a dataset whose `datasetType` facet says MODEL, its versions are dataset versions, a
 * training run is a run that wrote it (reading features), and serving is a job that reads it. The question the
 * seeds name, "which served models were trained on data that was bad or has been erased?", is answered through
 * the data journey: each model's upstream journey over the window, and among the datasets on it, those with an
 * assertion that failed within the window (bad) or a lifecycleStateChange DROP or TRUNCATE by `to` (erased).
 */
import { Closed, Nullable, StringEnum, Type, type Static } from '../core/json-schema.js';
import { erasuresBetween, failedAssertionsBetween, modelDatasets } from '../store/queries/journey.js';
import { compareText, datasetNodeId, jobNodeId, type JobGraphView } from './context.js';
import { journey, type JourneySource } from './journey.js';

export const ModelSchema = Closed({
  nodeId: Type.String(),
  trainedBy: Type.Array(Type.String(), { description: 'Jobs whose runs in the window wrote it' }),
  lastTrained: Nullable(Type.String({ format: 'date-time' })),
  servedBy: Type.Array(Type.String(), { description: 'Jobs that read it' }),
  upstream: Type.Integer({ description: 'Datasets on its upstream journey in the window' }),
  tainted: Type.Array(
    Closed({
      nodeId: Type.String(),
      distance: Type.Integer(),
      reason: StringEnum(['failed-assertion', 'erased']),
      at: Type.String({ format: 'date-time' }),
      detail: Type.String(),
    }),
    { description: 'Datasets it was trained on (directly or further up) that were bad or have been erased' },
  ),
});
export type ModelJson = Static<typeof ModelSchema>;

export const ModelsSchema = Closed({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  models: Type.Array(ModelSchema),
});
export type ModelsJson = Static<typeof ModelsSchema>;

/** Every model, with its training, serving and tainted upstream datasets over [`from`, `to`]. */
export async function models(
  source: JourneySource & { readonly graph: Pick<JobGraphView, 'jobsOf'> },
  window: { readonly from: Date; readonly to: Date },
): Promise<ModelsJson> {
  const { db, state } = source;
  const ids = (await modelDatasets(db)).filter((id) => state.datasetsById.get(id)?.isHidden === false);
  // The journey names datasets by nodeId: back to ids, once.
  const idOf = new Map<string, number>();
  if (ids.length > 0) for (const id of state.datasetsById.keys()) idOf.set(datasetNodeId(state, id), id);
  const result: ModelJson[] = [];
  for (const id of ids) {
    const upstream = await journey(source, {
      start: { kind: 'dataset', id },
      ...window,
      direction: 'upstream',
      depth: 20,
      tags: [],
      jurisdictions: [],
    });
    const training = upstream.hops.filter((hop) => hop.distance === 1);
    const reached = new Map<number, number>();
    for (const node of upstream.nodes.slice(1)) {
      const datasetId = idOf.get(node.nodeId);
      if (datasetId !== undefined) reached.set(datasetId, node.distance);
    }
    const [failures, lifecycle] = await Promise.all([
      failedAssertionsBetween(db, [...reached.keys()], window.from, window.to),
      erasuresBetween(db, [...reached.keys()], window.from, window.to),
    ]);
    const tainted: ModelJson['tainted'] = [
      ...failures.map((failure) => ({
        nodeId: datasetNodeId(state, failure.datasetId),
        distance: reached.get(failure.datasetId)!,
        reason: 'failed-assertion' as const,
        at: failure.firstAt.toISOString(),
        detail:
          `${failure.assertion}${failure.column ? ` on ${failure.column}` : ''} failed in ${failure.runs} ` +
          `run${failure.runs === 1 ? '' : 's'}`,
      })),
      ...lifecycle.map((row) => ({
        nodeId: datasetNodeId(state, row.datasetId),
        distance: reached.get(row.datasetId)!,
        reason: 'erased' as const,
        at: row.at.toISOString(),
        detail: `lifecycleStateChange ${row.state}`,
      })),
    ].sort((a, b) => a.distance - b.distance || compareText(a.nodeId, b.nodeId) || compareText(a.at, b.at));
    result.push({
      nodeId: upstream.start,
      trainedBy: [...new Set(training.map((hop) => hop.job))].sort(compareText),
      lastTrained:
        training.length === 0
          ? null
          : training
              .map((hop) => hop.runs.last)
              .sort(compareText)
              .at(-1)!,
      servedBy: source.graph
        .jobsOf(id, 0)
        .map((job) => jobNodeId(state, job))
        .sort(compareText),
      upstream: reached.size,
      tainted,
    });
  }
  return { from: window.from.toISOString(), to: window.to.toISOString(), models: result };
}
