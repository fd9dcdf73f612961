import type { Queryable } from '../db.js';

/** What one run reported about one dataset: its statistics facets and quality metrics (null: none). */
export interface QualityObservationRecord {
  readonly runUuid: string;
  readonly datasetId: number;
  readonly jobId: number;
  readonly state: string;
  /** When the run ended, else started, else was first seen. */
  readonly at: Date;
  /** `outputStatistics` of the run's output (run_io, direction 1). */
  readonly outputStatistics: Record<string, unknown> | null;
  /** `inputStatistics` of the run's input (run_io, direction 0). */
  readonly inputStatistics: Record<string, unknown> | null;
  /** `dataQualityMetrics` (dq_metrics). */
  readonly metrics: Record<string, unknown> | null;
}

/** Whose observations: one dataset's over time, or one run's over its datasets. */
export type QualityScope = { readonly datasetId: number } | { readonly runUuid: string };

/**
 * The statistics and quality metrics runs reported, one row per run and dataset, newest run first, of at most
 * `limit` runs: a run's `outputStatistics` and `inputStatistics` (its run_io facets) with the
 * `dataQualityMetrics` stored for it (dq_metrics). Runs that reported only assertions on a dataset are listed
 * too (their assertions are in dq_assertions).
 */
export async function qualityObservations(
  db: Queryable,
  scope: QualityScope,
  limit: number,
): Promise<QualityObservationRecord[]> {
  const [column, value] =
    'datasetId' in scope
      ? (['dataset_id', scope.datasetId] as const)
      : (['run_uuid', scope.runUuid] as const);
  const cast = column === 'dataset_id' ? 'int' : 'uuid';
  return db.query<QualityObservationRecord>(
    `WITH observed AS (
       SELECT run_uuid, dataset_id, facets->'outputStatistics' AS o, NULL::jsonb AS i, NULL::jsonb AS m FROM run_io
       WHERE ${column} = $1::${cast} AND direction = 1 AND facets ? 'outputStatistics'
       UNION ALL
       SELECT run_uuid, dataset_id, NULL, facets->'inputStatistics', NULL FROM run_io
       WHERE ${column} = $1::${cast} AND direction = 0 AND facets ? 'inputStatistics'
       UNION ALL
       SELECT run_uuid, dataset_id, NULL, NULL, metrics FROM dq_metrics WHERE ${column} = $1::${cast}
       UNION ALL
       SELECT DISTINCT run_uuid, dataset_id, NULL::jsonb, NULL::jsonb, NULL::jsonb FROM dq_assertions
       WHERE ${column} = $1::${cast}),
     merged AS (
       SELECT run_uuid, dataset_id, (array_agg(o) FILTER (WHERE o IS NOT NULL))[1] AS o,
              (array_agg(i) FILTER (WHERE i IS NOT NULL))[1] AS i, (array_agg(m) FILTER (WHERE m IS NOT NULL))[1] AS m
       FROM observed GROUP BY run_uuid, dataset_id),
     wanted AS (
       SELECT r.uuid, r.job_id, r.state, COALESCE(r.ended_at, r.started_at, r.first_running_at, r.created_at) AS at
       FROM runs r WHERE r.uuid IN (SELECT run_uuid FROM merged)
       ORDER BY at DESC, r.uuid DESC LIMIT $2)
     SELECT w.uuid::text AS "runUuid", m.dataset_id AS "datasetId", w.job_id AS "jobId", w.state, w.at,
            m.o AS "outputStatistics", m.i AS "inputStatistics", m.m AS metrics
     FROM wanted w JOIN merged m ON m.run_uuid = w.uuid
     ORDER BY w.at DESC, w.uuid DESC, m.dataset_id`,
    [value, limit],
  );
}
