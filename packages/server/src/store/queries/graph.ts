import type { Queryable } from '../db.js';
import { MS, type Ms } from '../model-state.js';
import { readAll, selectColumns, type BulkColumn } from '../paged-read.js';

/** An edge of the job-level lineage graph: a job reads (direction 0) or writes (1) a dataset. */
export interface LineageEdgeRow {
  readonly job_id: number;
  readonly direction: number;
  readonly dataset_id: number;
  /** When an event named the edge last (at or before the time asked about). */
  readonly at: Ms;
}

/** Reads `columns` of every row of `table` in the order of `key`, in pages handed to `take`. */
function readTable<Row>(
  db: Queryable,
  table: string,
  columns: readonly BulkColumn[],
  key: readonly string[],
  take: (rows: readonly Row[]) => void,
): Promise<void> {
  return readAll<Row>(db, { ...selectColumns<Row>(columns, table), key }, take);
}

/** Reads every current edge (lineage_edges), in pages handed to `take`, as start-up does. */
export function readLineageEdges(
  db: Queryable,
  take: (rows: readonly LineageEdgeRow[]) => void,
): Promise<void> {
  const columns: BulkColumn[] = [
    ['job_id', 'number'],
    ['direction', 'number'],
    ['dataset_id', 'number'],
    ['at', 'number', MS('last_seen')],
  ];
  return readTable(db, 'lineage_edges', columns, ['job_id', 'direction', 'dataset_id'], take);
}

/** The current edges (lineage_edges) of the jobs `jobIds`. */
export function readJobEdges(db: Queryable, jobIds: readonly number[]): Promise<LineageEdgeRow[]> {
  return db.query<LineageEdgeRow>(
    `SELECT job_id, direction, dataset_id, ${MS('last_seen')} AS at FROM lineage_edges WHERE job_id = ANY($1::int[])`,
    [jobIds],
  );
}

/** The ids of the soft-deleted (hidden) jobs. */
export function readHiddenJobs(db: Queryable): Promise<{ id: number }[]> {
  return db.query<{ id: number }>('SELECT id FROM jobs WHERE is_hidden');
}

/** The ids of the soft-deleted (hidden) datasets. */
export function readHiddenDatasets(db: Queryable): Promise<{ id: number }[]> {
  return db.query<{ id: number }>('SELECT id FROM datasets WHERE is_hidden');
}

/**
 * Completed runs and JobEvents of the jobs in `$1` (int[]): `first` is a run's first eventTime, `completed_at`
 * the time of its earliest COMPLETE. A JobEvent is a completion that starts and ends at its own time.
 */
const COMPLETIONS_SQL = `
  SELECT s.job_id, s.run_uuid::text AS key, r.created_at AS first, min(s.event_time) AS completed_at
  FROM job_sightings s JOIN runs r ON r.uuid = s.run_uuid
  WHERE s.job_id = ANY($1::int[]) AND s.kind = 0 AND s.event_type = 'COMPLETE'
  GROUP BY s.job_id, s.run_uuid, r.created_at
  UNION ALL
  SELECT job_id, 'job@' || event_hash, event_time, event_time FROM job_sightings
  WHERE job_id = ANY($1::int[]) AND kind = 0 AND run_uuid IS NULL`;

/**
 * The edges current at `$2` of the jobs (side 'job') or datasets (side 'dataset') in `$1`, in the directions in
 * `$3`: named by an event at or before `$2`, and not retired by a run of the job that completed by `$2` having
 * started after the edge was last named then.
 */
const edgesAsOfSql = (side: 'job' | 'dataset') => `
  WITH seen AS (
    SELECT job_id, kind AS direction, dataset_id, max(event_time) AS last_seen
    FROM dataset_sightings
    WHERE ${side}_id = ANY($1::int[]) AND job_id IS NOT NULL AND kind = ANY($3::smallint[]) AND event_time <= $2
    GROUP BY job_id, kind, dataset_id
  ),
  cut AS (
    SELECT job_id, max(first) AS cutoff FROM (${COMPLETIONS_SQL.replaceAll('$1::int[]', 'ARRAY(SELECT DISTINCT job_id FROM seen)')}) c
    WHERE completed_at <= $2 GROUP BY job_id
  )
  SELECT seen.job_id, seen.direction, seen.dataset_id, ${MS('seen.last_seen')} AS at FROM seen LEFT JOIN cut USING (job_id)
  WHERE cut.cutoff IS NULL OR seen.last_seen >= cut.cutoff`;

const EDGES_AS_OF_SQL = { job: edgesAsOfSql('job'), dataset: edgesAsOfSql('dataset') } as const;

/**
 * The edges current at event time `at` of the jobs (`side` 'job') or datasets ('dataset') `ids`, in
 * `directions` (0 reads, 1 writes), worked out from the history: `at` of each is when an event named it last.
 */
export async function edgesAsOf(
  db: Queryable,
  side: 'job' | 'dataset',
  ids: readonly number[],
  directions: readonly number[],
  at: Ms,
): Promise<LineageEdgeRow[]> {
  if (ids.length === 0) return [];
  // A walk asks this once per level (about 40 times for a depth-20 answer, twice that for a graph diff):
  // prepared once per connection, its planning (as costly as running it for a level of a few dozen nodes) is
  // not paid again on every level.
  return db.query<LineageEdgeRow>(
    EDGES_AS_OF_SQL[side],
    [ids, new Date(at), directions],
    `headwater_edges_as_of_${side}`,
  );
}

/** An edge of the column-level lineage graph, as column_lineage holds it. */
export interface ColumnEdgeRow {
  readonly output_dataset_id: number;
  readonly output_field: string;
  readonly input_dataset_id: number;
  readonly input_field: string;
  readonly transformation_type: string;
  readonly transformation_subtype: string;
  readonly transformation_description: string | null;
  readonly masking: boolean;
  readonly first_seen: Ms;
}

/** The key of column_lineage, the order in which start-up reads it. */
const COLUMN_EDGE_KEY = [
  'output_dataset_id',
  'output_field',
  'input_dataset_id',
  'input_field',
  'transformation_type',
  'transformation_subtype',
] as const;

/** How many column edges the store holds. */
export async function countColumnEdges(db: Queryable): Promise<number> {
  const [count] = await db.query<{ edges: number }>('SELECT count(*)::int AS edges FROM column_lineage');
  return count?.edges ?? 0;
}

/** Reads every column edge (column_lineage) in key order, in pages handed to `take`, as start-up does. */
export function readColumnEdges(
  db: Queryable,
  take: (rows: readonly ColumnEdgeRow[]) => void,
): Promise<void> {
  const columns: BulkColumn[] = [
    ['output_dataset_id', 'number'],
    ['output_field', 'text'],
    ['input_dataset_id', 'number'],
    ['input_field', 'text'],
    ['transformation_type', 'text'],
    ['transformation_subtype', 'text'],
    ['transformation_description', 'text'],
    ['masking', 'boolean'],
    ['first_seen', 'number', MS('first_seen')],
  ];
  return readTable(db, 'column_lineage', columns, COLUMN_EDGE_KEY, take);
}
