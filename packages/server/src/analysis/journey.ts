/**
 * The data journey of a dataset or column over a window of time, for an auditor: every dataset (or column) its
 * data reached (or came from), each hop with the job between and the evidence that it happened — the runs that
 * moved the data in the window and the raw events that say so — and what was true then: the job's versions, SQL
 * and code locations, the transformations (masking included), the owners over the window, the jurisdiction of
 * each storage namespace (a user's map: transfers between jurisdictions show), retention evidence and tags.
 *
 * A hop is there only if a run within the window read its source and wrote its target (history tables, not the
 * present graph): the journey is what happened, not what the pipeline would do. A column hop also needs column
 * lineage between the two columns as of the window's end. The report ends with its bounds and the SHA-256 of its
 * canonical JSON, the same for the same store on any replica and after backup and restore.
 */
import { createHash } from 'node:crypto';
import { Closed, Nullable, StringEnum, Type, type Static } from '../core/json-schema.js';
import type { ColumnGraph, FieldRef } from '../read-model/column-graph.js';
import { taggedSeeds } from '../store/queries/classification.js';
import {
  datasetFacetsInWindow,
  eventIds,
  journeySteps,
  jobsInWindow,
  type JourneyStep,
} from '../store/queries/journey.js';
import { ownerPeriods } from '../store/queries/owners.js';
import type { Queryable } from '../store/db.js';
import type { ReadModel } from '../store/read-model.js';
import { compareText, datasetNodeId, fieldNodeId, jobNodeId } from './context.js';
import { OwnerSchema } from './owners.js';
import { wildcard } from '../core/wildcard.js';

/** Runs sampled per hop (with the events that prove each). */
const SAMPLES = 5;

const TransformationSchema = Closed({ type: Type.String(), subtype: Type.String(), masking: Type.Boolean() });

export const JourneyHopSchema = Closed({
  from: Type.String({
    description: 'The node the data came from (upstream journeys: the node nearer the start)',
  }),
  to: Type.String(),
  distance: Type.Integer({ description: 'Hops from the start to the farther node' }),
  job: Type.String({ description: 'The job between' }),
  transformations: Type.Array(TransformationSchema, { description: 'Column hops: as column lineage says' }),
  masked: Type.Boolean({ description: 'Every transformation of the hop masks its input' }),
  runs: Closed({
    count: Type.Integer(),
    first: Type.String({ format: 'date-time' }),
    last: Type.String({ format: 'date-time' }),
    samples: Type.Array(
      Closed({
        runId: Type.String(),
        readEventId: Nullable(Type.Integer()),
        writeEventId: Nullable(Type.Integer()),
      }),
      {
        description: `The first ${SAMPLES} runs, with the ids of the raw events (GET /api/v1/events) that prove them`,
      },
    ),
  }),
  jobVersions: Type.Array(Type.String(), { description: 'The versions the runs in the window ran' }),
  sql: Type.Array(Type.String(), { description: "The job's SQL in the window" }),
  sourceCode: Type.Array(Type.String(), { description: 'Its code locations in the window (url@version)' }),
  transfer: Type.Boolean({ description: 'The two ends lie in different (known) jurisdictions' }),
});
export type JourneyHop = Static<typeof JourneyHopSchema>;

export const JourneyNodeSchema = Closed({
  nodeId: Type.String(),
  distance: Type.Integer(),
  namespace: Type.String({ description: 'The storage namespace' }),
  jurisdiction: Nullable(Type.String({ description: "From the request's jurisdiction map" })),
  owners: Type.Array(
    Closed({ from: Type.String({ format: 'date-time' }), owners: Type.Array(OwnerSchema) }),
    {
      description: 'Owner periods over the window: each from its time until the next',
    },
  ),
  tags: Type.Array(Type.String(), { description: 'The asked-for tags it carried at the end of the window' }),
  retention: Type.Array(
    Closed({ at: Type.String({ format: 'date-time' }), facet: Type.String(), value: Type.Unknown() }),
    { description: 'lifecycleStateChange and retention facets its events gave in the window' },
  ),
});
export type JourneyNode = Static<typeof JourneyNodeSchema>;

export const JourneySchema = Closed({
  start: Type.String(),
  bounds: Closed({
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    direction: StringEnum(['downstream', 'upstream']),
    depth: Type.Integer(),
    tags: Type.Array(Type.String()),
    jurisdictions: Type.Array(Closed({ pattern: Type.String(), jurisdiction: Type.String() })),
  }),
  nodes: Type.Array(JourneyNodeSchema, { description: 'The start, then every node reached, by distance' }),
  hops: Type.Array(JourneyHopSchema, { description: 'By distance, then from, to and job' }),
  transfers: Type.Integer({ description: 'Hops between two different jurisdictions' }),
  sha256: Type.String({ description: 'SHA-256 of the canonical JSON of everything above (keys sorted)' }),
});
export type JourneyJson = Static<typeof JourneySchema>;

/** What a journey reads. */
export interface JourneySource {
  readonly db: Queryable;
  readonly state: ReadModel;
  readonly columns: Pick<ColumnGraph, 'lineageInputsOf' | 'lineageOutputsOf'>;
}

/** A journey's question. */
export interface JourneyQuery {
  readonly start:
    { kind: 'dataset'; id: number } | { kind: 'datasetField'; datasetId: number; field: string };
  readonly from: Date;
  readonly to: Date;
  readonly direction: 'downstream' | 'upstream';
  readonly depth: number;
  readonly tags: readonly string[];
  /** Storage namespace patterns (`*` any text) and their jurisdiction, the first match winning. */
  readonly jurisdictions: readonly { pattern: string; jurisdiction: string }[];
}

const RETENTION_FACETS = ['lifecycleStateChange', 'retention', 'dataRetention'];

/** JSON with its object keys sorted, at every depth: one text for one value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => compareText(a, b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function jurisdictionOf(jurisdictions: JourneyQuery['jurisdictions'], namespace: string): string | null {
  for (const { pattern, jurisdiction } of jurisdictions) {
    if (wildcard(pattern).test(namespace)) return jurisdiction;
  }
  return null;
}

/** The journey of `query.start` (see the module comment). */
export async function journey(source: JourneySource, query: JourneyQuery): Promise<JourneyJson> {
  const { db, state } = source;
  const at = query.to.getTime();
  const downstream = query.direction === 'downstream';
  const startDataset = query.start.kind === 'dataset' ? query.start.id : query.start.datasetId;
  const namespaceOf = (datasetId: number) =>
    state.namespacesById.get(state.datasetsById.get(datasetId)?.namespaceId ?? -1)?.name ?? '';

  // The dataset-level steps, level by level: a step is a run that moved data in the window.
  const distances = new Map<number, number>([[startDataset, 0]]);
  const steps: (JourneyStep & { distance: number })[] = [];
  let frontier = [startDataset];
  for (let distance = 1; distance <= query.depth && frontier.length > 0; distance++) {
    const found = await journeySteps(db, frontier, query.direction, query.from, query.to);
    const next: number[] = [];
    const current = new Set(frontier);
    for (const step of found) {
      const [near, far] = downstream ? [step.source, step.target] : [step.target, step.source];
      if (!current.has(near)) continue;
      // A node reached earlier is not walked again, but the step into it is evidence of a hop all the same.
      if (!distances.has(far)) {
        distances.set(far, distance);
        next.push(far);
      }
      steps.push({ ...step, distance });
    }
    frontier = next;
  }

  // Hops: between datasets, or between columns (column lineage as of `to` that a step's run carried).
  interface Hop {
    near: string;
    far: string;
    farDataset: number;
    nearDataset: number;
    distance: number;
    jobId: number;
    transformations: { type: string; subtype: string; masking: boolean }[];
    runs: (JourneyStep & { distance: number })[];
  }
  const hops = new Map<string, Hop>();
  const nodes = new Map<string, { datasetId: number; distance: number }>();
  const stepsBetween = new Map<string, (JourneyStep & { distance: number })[]>();
  for (const step of steps) {
    const key = `${step.source}\u0000${step.target}`;
    let list = stepsBetween.get(key);
    if (!list) stepsBetween.set(key, (list = []));
    list.push(step);
  }
  const addHop = (hop: Omit<Hop, 'runs'>, runs: (JourneyStep & { distance: number })[]) => {
    const key = `${hop.near}\u0000${hop.far}\u0000${hop.jobId}`;
    const known = hops.get(key);
    if (known) {
      known.runs.push(...runs);
      known.distance = Math.min(known.distance, hop.distance);
    } else hops.set(key, { ...hop, runs: [...runs] });
  };
  if (query.start.kind === 'dataset') {
    nodes.set(datasetNodeId(state, startDataset), { datasetId: startDataset, distance: 0 });
    for (const step of steps) {
      const [near, far] = downstream ? [step.source, step.target] : [step.target, step.source];
      const farId = datasetNodeId(state, far);
      const known = nodes.get(farId);
      if (!known || known.distance > step.distance)
        nodes.set(farId, { datasetId: far, distance: step.distance });
      addHop(
        {
          near: datasetNodeId(state, near),
          far: farId,
          nearDataset: near,
          farDataset: far,
          distance: step.distance,
          jobId: step.jobId,
          transformations: [],
        },
        [step],
      );
    }
  } else {
    const startRef: FieldRef = { datasetId: startDataset, field: query.start.field };
    nodes.set(fieldNodeId(state, startRef), { datasetId: startDataset, distance: 0 });
    let columns: FieldRef[] = [startRef];
    const seen = new Set([fieldNodeId(state, startRef)]);
    for (let distance = 1; distance <= query.depth && columns.length > 0; distance++) {
      const next: FieldRef[] = [];
      for (const ref of columns) {
        const neighbours = downstream
          ? source.columns.lineageOutputsOf(ref, at).map((output) => ({
              column: output,
              transformations:
                source.columns
                  .lineageInputsOf(output, at)
                  .find((input) => input.datasetId === ref.datasetId && input.field === ref.field)
                  ?.transformations ?? [],
            }))
          : source.columns.lineageInputsOf(ref, at).map((input) => ({
              column: { datasetId: input.datasetId, field: input.field },
              transformations: input.transformations,
            }));
        for (const { column, transformations } of neighbours) {
          const [sourceDataset, targetDataset] = downstream
            ? [ref.datasetId, column.datasetId]
            : [column.datasetId, ref.datasetId];
          const runs = stepsBetween.get(`${sourceDataset}\u0000${targetDataset}`) ?? [];
          if (runs.length === 0) continue;
          const farId = fieldNodeId(state, column);
          for (const [jobId, jobRuns] of groupBy(runs, (run) => run.jobId))
            addHop(
              {
                near: fieldNodeId(state, ref),
                far: farId,
                nearDataset: ref.datasetId,
                farDataset: column.datasetId,
                distance,
                jobId,
                transformations: transformations.map((t) => ({
                  type: t.type,
                  subtype: t.subtype,
                  masking: t.masking === true,
                })),
              },
              jobRuns,
            );
          if (seen.has(farId)) continue;
          seen.add(farId);
          nodes.set(farId, { datasetId: column.datasetId, distance });
          next.push(column);
        }
      }
      columns = next;
    }
  }

  // What was true of the jobs and datasets in the window.
  const jobIds = [...new Set([...hops.values()].map((hop) => hop.jobId))];
  const datasetIds = [...new Set([...nodes.values()].map((node) => node.datasetId))];
  const sampled = [...hops.values()].flatMap((hop) => sortRuns(hop.runs).slice(0, SAMPLES));
  const [jobs, owners, retention, ids, tagged] = await Promise.all([
    jobsInWindow(db, jobIds, ['sql', 'sourceCodeLocation'], query.from, query.to),
    ownerPeriods(db, datasetIds, query.from, query.to),
    datasetFacetsInWindow(db, datasetIds, RETENTION_FACETS, query.from, query.to),
    eventIds(db, [...new Set(sampled.flatMap((run) => [run.readEvent, run.writeEvent]))]),
    Promise.all(query.tags.map(async (tag) => ({ tag, seeds: await taggedSeeds(db, tag, query.to) }))),
  ]);

  const nodeJson: JourneyNode[] = [...nodes]
    .map(([nodeId, { datasetId, distance }]) => {
      const namespace = namespaceOf(datasetId);
      const field = nodeId.startsWith('datasetField:') ? nodeId.slice(nodeId.lastIndexOf(':') + 1) : null;
      return {
        nodeId,
        distance,
        namespace,
        jurisdiction: jurisdictionOf(query.jurisdictions, namespace),
        owners: (owners.get(datasetId) ?? []).map((period) => ({
          from: period.from.toISOString(),
          owners: period.owners.map((owner) => ({ name: owner.name, type: owner.type })),
        })),
        tags: tagged
          .filter(({ seeds }) =>
            // A dataset carries the tags of its fields; a column those of its dataset and its own.
            seeds.some(
              (seed) =>
                seed.datasetId === datasetId &&
                (field === null || seed.field === null || seed.field === field),
            ),
          )
          .map(({ tag }) => tag),
        retention: retention
          .filter((row) => row.datasetId === datasetId)
          .map((row) => ({ at: row.at.toISOString(), facet: row.name, value: stripMeta(row.facet) })),
      };
    })
    .sort((a, b) => a.distance - b.distance || compareText(a.nodeId, b.nodeId));
  const jurisdictionByNode = new Map(nodeJson.map((node) => [node.nodeId, node.jurisdiction]));

  const hopJson: JourneyHop[] = [...hops.values()]
    .map((hop) => {
      const runs = sortRuns(hop.runs);
      const job = jobs.get(hop.jobId);
      const [from, to] = downstream ? [hop.near, hop.far] : [hop.far, hop.near];
      const a =
        jurisdictionByNode.get(hop.near) ?? jurisdictionOf(query.jurisdictions, namespaceOf(hop.nearDataset));
      const b = jurisdictionByNode.get(hop.far) ?? null;
      return {
        from,
        to,
        distance: hop.distance,
        job: jobNodeId(state, hop.jobId),
        transformations: hop.transformations,
        masked: hop.transformations.length > 0 && hop.transformations.every((t) => t.masking),
        runs: {
          count: new Set(runs.map((run) => run.runId)).size,
          first: runs[0]!.readAt.toISOString(),
          last: new Date(Math.max(...runs.map((run) => run.wroteAt.getTime()))).toISOString(),
          samples: runs.slice(0, SAMPLES).map((run) => ({
            runId: run.runId,
            readEventId: ids.get(run.readEvent) ?? null,
            writeEventId: ids.get(run.writeEvent) ?? null,
          })),
        },
        jobVersions: job?.versions ?? [],
        sql: (job?.facets.get('sql') ?? []).flatMap((facet) => {
          const query = (facet as { query?: unknown }).query;
          return typeof query === 'string' ? [query] : [];
        }),
        sourceCode: (job?.facets.get('sourceCodeLocation') ?? []).flatMap((facet) => {
          const { url, version } = facet as { url?: unknown; version?: unknown };
          return typeof url === 'string' ? [typeof version === 'string' ? `${url}@${version}` : url] : [];
        }),
        transfer: a !== null && b !== null && a !== b,
      };
    })
    .sort(
      (a, b) =>
        a.distance - b.distance ||
        compareText(a.from, b.from) ||
        compareText(a.to, b.to) ||
        compareText(a.job, b.job),
    );

  const report = {
    start: nodeJson[0]!.nodeId,
    bounds: {
      from: query.from.toISOString(),
      to: query.to.toISOString(),
      direction: query.direction,
      depth: query.depth,
      tags: [...query.tags],
      jurisdictions: query.jurisdictions.map(({ pattern, jurisdiction }) => ({ pattern, jurisdiction })),
    },
    nodes: nodeJson,
    hops: hopJson,
    transfers: hopJson.filter((hop) => hop.transfer).length,
  };
  return { ...report, sha256: createHash('sha256').update(canonicalJson(report)).digest('hex') };
}

function sortRuns<T extends JourneyStep>(runs: readonly T[]): T[] {
  return [...runs].sort((a, b) => a.readAt.getTime() - b.readAt.getTime() || compareText(a.runId, b.runId));
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    let list = groups.get(k);
    if (!list) groups.set(k, (list = []));
    list.push(item);
  }
  return groups;
}

/** A facet's value without its `_producer` and `_schemaURL`, which say nothing about the data. */
function stripMeta(facet: unknown): unknown {
  if (facet === null || typeof facet !== 'object') return facet;
  const { _producer: _p, _schemaURL: _s, ...rest } = facet as Record<string, unknown>;
  return rest;
}
