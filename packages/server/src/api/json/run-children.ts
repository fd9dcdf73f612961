/**
 * The child runs of a run (beyond Marquez, which has no such query): the runs that name it in their `parent`
 * facet (a Kedro pipeline run's nodes, an Airflow DAG run's tasks), each with its state, times, error and the
 * datasets it read and wrote with the statistics it reported, the edges between them (a child that wrote a
 * dataset another read) and how many never ran. The explorer's workflow view draws it.
 */
import { statisticsOf } from '../../analysis/quality.js';
import { ERROR_FACETS, runErrorOf } from '../../model/error-facets.js';
import type { Queryable } from '../../store/db.js';
import { latestFacets } from '../../store/queries/facets.js';
import { countChildRuns, listChildRuns, runIo } from '../../store/queries/runs.js';
import type { EntityId } from '../schemas/common.js';
import type { ChildEdgeJson, ChildRunJson, RunChildrenJson } from '../schemas/run-children.js';
import { contradiction, isStaleRun, runTimesJson } from './run.js';

const datasetKey = (d: EntityId) => `${d.namespace}\u0000${d.name}`;

/**
 * The edges between children: for each dataset, from each child that wrote it to each other child that read
 * it, one edge per pair listing the datasets, in the children's order.
 */
export function childEdges(children: readonly ChildRunJson[]): ChildEdgeJson[] {
  const writers = new Map<string, string[]>();
  for (const child of children)
    for (const output of child.outputs) {
      const key = datasetKey(output);
      writers.set(key, [...(writers.get(key) ?? []), child.runId]);
    }
  const edges = new Map<string, ChildEdgeJson>();
  for (const child of children)
    for (const input of child.inputs)
      for (const from of writers.get(datasetKey(input)) ?? []) {
        if (from === child.runId) continue;
        const key = `${from}\u0000${child.runId}`;
        let edge = edges.get(key);
        if (!edge) edges.set(key, (edge = { from, to: child.runId, datasets: [] }));
        edge.datasets.push({ namespace: input.namespace, name: input.name });
      }
  return [...edges.values()];
}

/** One page of a run's children, with the counts over all of them. Four queries whatever the page size. */
export async function runChildren(
  db: Queryable,
  parentUuid: string,
  page: { limit: number; offset: number },
  staleAfterMs?: number,
): Promise<RunChildrenJson> {
  const [records, counts] = await Promise.all([
    listChildRuns(db, parentUuid, page.limit, page.offset),
    countChildRuns(db, parentUuid),
  ]);
  const uuids = records.map((record) => record.uuid);
  const [errors, io] = await Promise.all([latestFacets(db, 'run', uuids, ERROR_FACETS), runIo(db, uuids)]);
  const children = records.map((record): ChildRunJson => {
    const datasets = (direction: 0 | 1) =>
      (io.get(record.uuid) ?? [])
        .filter((entry) => entry.direction === direction)
        .map((entry) => ({
          namespace: entry.namespace,
          name: entry.name,
          version: entry.version,
          ...(statisticsOf(entry.facets[direction === 0 ? 'inputStatistics' : 'outputStatistics']) ?? {
            rowCount: null,
            bytes: null,
            fileCount: null,
          }),
        }));
    return {
      runId: record.uuid,
      job: { namespace: record.namespace, name: record.jobName },
      state: record.state,
      ...runTimesJson(record),
      ran: !record.neverRan,
      error: runErrorOf(errors.get(record.uuid)),
      inputs: datasets(0),
      outputs: datasets(1),
      ...(staleAfterMs !== undefined && isStaleRun(record, staleAfterMs) ? { stale: true as const } : {}),
      ...contradiction(record.terminalsSeen),
    };
  });
  return {
    runId: parentUuid,
    totalCount: counts.total,
    states: counts.byState,
    neverRanCount: counts.neverRan,
    children,
    edges: childEdges(children),
  };
}
