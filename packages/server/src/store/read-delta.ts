import type { Changeset } from './changeset.js';
import type { RunRow } from './model-state.js';
import type { Catalog, EntityRef, JobRef, NamespaceRef } from './read-model.js';

type Ms = number;

/**
 * What the read side (the read model, the lineage and column graphs, the answer caches) learns from one
 * committed batch: the part of its changeset that readers hold in memory, as plain JSON. The writer applies it
 * to its own read side and stores it in the commit feed in the same statement as the batch, so that every
 * replica's read side takes exactly the same thing in the same order (see replica/read-side.ts).
 *
 * Rows are tuples to keep the feed small.
 */
export interface ReadDelta {
  /** [id, name, isHidden] of namespaces new or changed. */
  readonly namespaces: [number, string, boolean][];
  /** [id, namespaceId, name, isHidden] of datasets new or changed. */
  readonly datasets: [number, number, string, boolean][];
  /** [id, namespaceId, name, isHidden, type] of jobs new or changed. */
  readonly jobs: [number, number, string, boolean, string][];
  /** Ids of every dataset and job the batch touched (their answers may have changed). */
  readonly touchedDatasets: number[];
  readonly touchedJobs: number[];
  /** [jobId, key, first event time] of completed runs (the key is the run's uuid, or `job@<hash>` for a JobEvent). */
  readonly completions: [number, string, Ms][];
  /**
   * [jobId, runUuid, first event time] of each stored run whose first event time the batch moved back (it learnt
   * of an earlier event, such as a START after its COMPLETE): only such a run can lower its job's cutoff (see
   * read-model/lineage-graph.ts and store/job-cutoffs.ts). Usually empty.
   */
  readonly runs: [number, string, Ms][];
  /** [jobId, direction (0 read, 1 written), datasetId, latest event time] of each edge the batch named. */
  readonly edges: [number, number, number, Ms][];
  /** [outputDatasetId, outputField, inputDatasetId, inputField, type, subtype, description, masking, seen]. */
  readonly columnEdges: [number, string, number, string, string, string, string | null, boolean, Ms][];
}

/**
 * An entry of the commit feed: a committed batch, a write that did not come from events (tags, deletes), or a
 * chunk of retention (history deleted: no name, flag or edge of the present changes, only cached answers).
 */
export type FeedEntry =
  | { readonly kind: 'batch'; readonly delta: ReadDelta }
  | { readonly kind: 'exclusive' }
  | { readonly kind: 'retention' };

/** What readDelta reads of the writer's mirror before a batch: its catalog, and the runs the batch touches. */
export interface DeltaBase extends Catalog<NamespaceRef, EntityRef, JobRef> {
  /** The mirror holds every stored run the batch names (the writer reads those it lacks before deriving). */
  readonly runs: { get(uuid: string): Pick<RunRow, 'aggregate'> | undefined };
}

/**
 * The read delta of a changeset. `before` is the writer's mirror as it was before the changeset was applied:
 * namespaces, datasets and jobs it already holds with the same name and flags are left out (most events name
 * entities that exist; their ids are in `touched*` all the same), and so are runs whose start did not move back.
 */
export function readDelta(changes: Changeset, before: DeltaBase): ReadDelta {
  const namespaces: ReadDelta['namespaces'] = [];
  for (const row of changes.namespaces.values()) {
    const known = before.namespacesById.get(row.id);
    if (!known || known.name !== row.name || known.isHidden !== row.isHidden)
      namespaces.push([row.id, row.name, row.isHidden]);
  }
  const datasets: ReadDelta['datasets'] = [];
  const touchedDatasets: number[] = [];
  for (const row of changes.datasets.values()) {
    touchedDatasets.push(row.id);
    if (!sameEntity(before.datasetsById.get(row.id), row))
      datasets.push([row.id, row.namespaceId, row.name, row.isHidden]);
  }
  const jobs: ReadDelta['jobs'] = [];
  const touchedJobs = new Set<number>();
  for (const row of changes.jobs.values()) {
    touchedJobs.add(row.id);
    const known = before.jobsById.get(row.id);
    if (!sameEntity(known, row) || known?.type !== row.type)
      jobs.push([row.id, row.namespaceId, row.name, row.isHidden, row.type]);
  }
  const runs: ReadDelta['runs'] = [];
  for (const run of changes.runs.values()) {
    touchedJobs.add(run.jobId);
    // A run new to the store cannot be a stored cutoff's; this batch's completions are in `completions`.
    const stored = before.runs.get(run.uuid);
    if (stored !== undefined && run.aggregate.firstEventAt < stored.aggregate.firstEventAt)
      runs.push([run.jobId, run.uuid, run.aggregate.firstEventAt]);
  }
  // A completed run cuts off the edges its job named before the run began (see read-model/lineage-graph.ts).
  const completions: ReadDelta['completions'] = [];
  for (const sighting of changes.jobSightings.values()) {
    if (sighting.kind !== 0) continue;
    if (sighting.runUuid === null) {
      completions.push([sighting.jobId, `job@${sighting.eventHash}`, sighting.eventTime]);
    } else if (sighting.eventType === 'COMPLETE') {
      const run = changes.runs.get(sighting.runUuid);
      completions.push([sighting.jobId, sighting.runUuid, run?.aggregate.firstEventAt ?? sighting.eventTime]);
    }
  }
  const edges = new Map<string, [number, number, number, Ms]>();
  for (const sighting of changes.datasetSightings.values()) {
    if (sighting.jobId === null || (sighting.kind !== 0 && sighting.kind !== 1)) continue;
    const key = `${sighting.jobId}:${sighting.kind}:${sighting.datasetId}`;
    const known = edges.get(key);
    if (!known) edges.set(key, [sighting.jobId, sighting.kind, sighting.datasetId, sighting.eventTime]);
    else if (sighting.eventTime > known[3]) known[3] = sighting.eventTime;
  }
  const columnEdges: ReadDelta['columnEdges'] = [];
  for (const edge of changes.columnEdges.values()) {
    columnEdges.push([
      edge.outputDatasetId,
      edge.outputField,
      edge.inputDatasetId,
      edge.inputField,
      edge.type,
      edge.subtype,
      edge.description,
      edge.masking,
      edge.seen,
    ]);
  }
  return {
    namespaces,
    datasets,
    jobs,
    touchedDatasets,
    touchedJobs: [...touchedJobs],
    completions,
    runs,
    edges: [...edges.values()],
    columnEdges,
  };
}

function sameEntity(known: EntityRef | undefined, row: EntityRef): boolean {
  return (
    known !== undefined &&
    known.namespaceId === row.namespaceId &&
    known.name === row.name &&
    known.isHidden === row.isHidden
  );
}
