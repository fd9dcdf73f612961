import type { Queryable } from '../store/db.js';
import type { ModelState } from '../store/model-state.js';

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

/** Marquez's Run shape for many runs at once (latest-run summaries of lineage job nodes). */
export async function loadRuns(
  db: Queryable,
  state: ModelState,
  uuids: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const result = new Map<string, Record<string, unknown>>();
  if (uuids.length === 0) return result;
  const rows = await db.query<{
    uuid: string;
    job_id: number;
    state: string;
    created_at: Date;
    updated_at: Date;
    started_at: Date | null;
    ended_at: Date | null;
    nominal_start_time: Date | null;
    nominal_end_time: Date | null;
    version: string | null;
  }>(
    `SELECT r.uuid::text AS uuid, r.job_id, r.state, r.created_at, r.updated_at,
            COALESCE(r.started_at, r.first_running_at) AS started_at, r.ended_at,
            r.nominal_start_time, r.nominal_end_time, v.version::text AS version
     FROM runs r LEFT JOIN job_versions v ON v.id = r.job_version_id
     WHERE r.uuid = ANY($1::uuid[])`,
    [uuids],
  );
  for (const row of rows) {
    const job = state.jobsById.get(row.job_id);
    const namespace = job ? (state.namespacesById.get(job.namespaceId)?.name ?? '') : '';
    result.set(row.uuid, {
      id: row.uuid,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
      nominalStartTime: iso(row.nominal_start_time),
      nominalEndTime: iso(row.nominal_end_time),
      state: row.state,
      startedAt: iso(row.started_at),
      endedAt: iso(row.ended_at),
      durationMs: row.started_at && row.ended_at ? row.ended_at.getTime() - row.started_at.getTime() : null,
      args: {},
      jobVersion: job && row.version ? { namespace, name: job.name, version: row.version } : null,
      facets: {},
    });
  }
  return result;
}
