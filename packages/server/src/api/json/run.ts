/**
 * Marquez's Run, built from the store's records (with Headwater's additions: error, stale, contradictory
 * states, execution), and the loaders that read runs in a fixed number of queries.
 *
 * As Marquez (Jackson's NON_NULL with empty Optionals written as null): nominal and end times are null when
 * unknown, while `jobVersion` is left out until the run has one.
 */
import { LEGACY_RUN_ARGS_FACET } from '../../accept/marquez-legacy.js';
import { runErrorOf } from '../../model/error-facets.js';
import { contradictoryStates } from '../../model/run-state.js';
import type { Queryable } from '../../store/db.js';
import { latestFacets, type Facets } from '../../store/queries/facets.js';
import { findRuns, runIo, type RunRecord } from '../../store/queries/runs.js';
import type { RunJson } from '../schemas/run.js';
import { iso, isObject, isoOrNull } from './values.js';

/**
 * Marquez's run args: those a run created through the legacy API was given (its LEGACY_RUN_ARGS_FACET), then
 * those built from the nominalTime and parent run facets (nominal_start_time, nominal_end_time, run_id, name,
 * namespace), with the values as the producer wrote them.
 */
function runArgs(facets: Facets): Record<string, string> {
  const args: Record<string, string> = {};
  const legacy = facets[LEGACY_RUN_ARGS_FACET];
  if (isObject(legacy) && isObject(legacy.args)) {
    for (const [key, value] of Object.entries(legacy.args)) if (typeof value === 'string') args[key] = value;
  }
  const nominal = facets.nominalTime;
  if (isObject(nominal)) {
    if (typeof nominal.nominalStartTime === 'string') args.nominal_start_time = nominal.nominalStartTime;
    if (typeof nominal.nominalEndTime === 'string') args.nominal_end_time = nominal.nominalEndTime;
  }
  const parent = facets.parent ?? facets.parentRun;
  if (isObject(parent) && isObject(parent.run) && isObject(parent.job)) {
    if (typeof parent.run.runId === 'string') args.run_id = parent.run.runId;
    if (typeof parent.job.name === 'string') args.name = parent.job.name;
    if (typeof parent.job.namespace === 'string') args.namespace = parent.job.namespace;
  }
  return args;
}

/**
 * Whether a run is stale: RUNNING with its last event (`updatedAt`) more than `staleAfterMs` before `now` (the
 * wall clock: a run is stale because nothing arrived for so long, whatever the event times of other runs).
 */
export function isStaleRun(
  record: Pick<RunRecord, 'state' | 'updatedAt'>,
  staleAfterMs: number,
  now = Date.now(),
): boolean {
  return record.state === 'RUNNING' && now - record.updatedAt.getTime() > staleAfterMs;
}

/** A run's startedAt, endedAt and durationMs (null unless both ends are known), as every Run shows them. */
export function runTimesJson(record: Pick<RunRecord, 'startedAt' | 'endedAt'>): {
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
} {
  const { startedAt, endedAt } = record;
  return {
    startedAt: isoOrNull(startedAt),
    endedAt: isoOrNull(endedAt),
    durationMs: startedAt !== null && endedAt !== null ? endedAt.getTime() - startedAt.getTime() : null,
  };
}

/** Builds a Run; with `staleAfterMs`, a stale run (see {@link isStaleRun}) is flagged. */
export function runJson(
  record: RunRecord,
  facets: Facets,
  io: readonly { direction: number; namespace: string; name: string; version: string; facets: Facets }[],
  staleAfterMs?: number,
): RunJson {
  const versions = (direction: number) =>
    io
      .filter((entry) => entry.direction === direction)
      .map((entry) => ({
        datasetVersionId: { namespace: entry.namespace, name: entry.name, version: entry.version },
        facets: entry.facets,
      }));
  return {
    id: record.uuid,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    nominalStartTime: isoOrNull(record.nominalStartTime),
    nominalEndTime: isoOrNull(record.nominalEndTime),
    state: record.state,
    ...runTimesJson(record),
    args: runArgs(facets),
    ...(record.jobVersion !== null
      ? { jobVersion: { namespace: record.namespace, name: record.jobName, version: record.jobVersion } }
      : {}),
    inputDatasetVersions: versions(0),
    outputDatasetVersions: versions(1),
    facets,
    error: runErrorOf(facets),
    ...(staleAfterMs !== undefined && isStaleRun(record, staleAfterMs) ? { stale: true as const } : {}),
    ...contradiction(record.terminalsSeen),
    ...(record.execution === 'executed' ? {} : { execution: record.execution }),
  };
}

/** The contradictoryStates field of a run whose events reported more than one terminal state, else nothing. */
export function contradiction(terminalsSeen: number): Pick<RunJson, 'contradictoryStates'> {
  const states = contradictoryStates(terminalsSeen);
  return states.length > 0 ? { contradictoryStates: states } : {};
}

/** The Run of each record (its facets and dataset versions in one query each), in the records' order. */
export async function runsJson(
  db: Queryable,
  records: readonly RunRecord[],
  staleAfterMs?: number,
): Promise<RunJson[]> {
  const uuids = [...new Set(records.map((record) => record.uuid))];
  const [facets, io] = await Promise.all([latestFacets(db, 'run', uuids), runIo(db, uuids)]);
  return records.map((record) =>
    runJson(record, facets.get(record.uuid) ?? {}, io.get(record.uuid) ?? [], staleAfterMs),
  );
}

/** The Runs with these uuids (three queries); unknown uuids are absent from the map. */
export async function loadRuns(
  db: Queryable,
  uuids: readonly string[],
  staleAfterMs?: number,
): Promise<Map<string, RunJson>> {
  const unique = [...new Set(uuids)];
  const [records, facets, io] = await Promise.all([
    findRuns(db, unique),
    latestFacets(db, 'run', unique),
    runIo(db, unique),
  ]);
  return new Map(
    records.map((record) => [
      record.uuid,
      runJson(record, facets.get(record.uuid) ?? {}, io.get(record.uuid) ?? [], staleAfterMs),
    ]),
  );
}
