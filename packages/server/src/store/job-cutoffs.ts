import { ts, type BulkColumn, type BulkWrite } from './bulk.js';
import type { Queryable } from './db.js';
import { MS, type Ms } from './model-state.js';
import { readAll } from './paged-read.js';
import type { ReadDelta } from './read-delta.js';

/**
 * A job's present cutoff (see read-model/lineage-graph.ts): the completion with the latest start among its completed
 * runs and JobEvents. `key` is the run's uuid, or `job@<event hash>` for a JobEvent; `first` its first eventTime.
 */
export interface CutoffRow {
  readonly job_id: number;
  readonly key: string;
  readonly first: Ms;
}

/**
 * The present cutoff of each job in `$1` (int[]) that has completed, worked out from the history. Per job it
 * reads a few index entries, whatever the number of its runs: the newest completion (by the partial index
 * job_sightings_completions) gives a floor, the start of its run, and only completions at or after that floor
 * can belong to a run that started later (a run completes after it starts), so only those are compared.
 */
const CUTOFFS_SQL = `
  SELECT j.id AS job_id, c.key, ${MS('c.first')} AS first FROM unnest($1::int[]) AS j(id)
  CROSS JOIN LATERAL (
    SELECT COALESCE(r.created_at, s.event_time) AS floor
    FROM job_sightings s LEFT JOIN runs r ON r.uuid = s.run_uuid
    WHERE s.job_id = j.id AND s.kind = 0 AND (s.event_type = 'COMPLETE' OR s.run_uuid IS NULL)
    ORDER BY s.event_time DESC LIMIT 1
  ) latest
  CROSS JOIN LATERAL (
    SELECT CASE WHEN s.run_uuid IS NULL THEN 'job@' || s.event_hash ELSE s.run_uuid::text END AS key,
           COALESCE(r.created_at, s.event_time) AS first
    FROM job_sightings s LEFT JOIN runs r ON r.uuid = s.run_uuid
    WHERE s.job_id = j.id AND s.kind = 0 AND (s.event_type = 'COMPLETE' OR s.run_uuid IS NULL)
      AND s.event_time >= latest.floor
    ORDER BY first DESC, key LIMIT 1
  ) c`;

/** The present cutoffs of the jobs in `jobIds`, worked out from the history (jobs never completed have none). */
export async function readCutoffs(db: Queryable, jobIds: readonly number[]): Promise<CutoffRow[]> {
  return jobIds.length === 0 ? [] : db.query<CutoffRow>(CUTOFFS_SQL, [jobIds]);
}

/**
 * Every job's present cutoff, as start-up reads it: from job_cutoffs (migration 013), one row per job, which the
 * writer keeps with every batch; a row the writer marked stale is worked out from the history instead. Start-up
 * thus reads current state: before, it worked out every job's cutoff from the history, about 2 s at 50,000
 * jobs and 3 M events.
 */
export async function loadCutoffs(db: Queryable): Promise<CutoffRow[]> {
  const rows: CutoffRow[] = [];
  const stale: number[] = [];
  await readAll<{ job_id: number; key: string | null; first: Ms | null; stale: boolean }>(
    db,
    {
      select: `SELECT job_id, key, ${MS('first')} AS first, stale FROM job_cutoffs`,
      where: 'key IS NOT NULL OR stale',
      key: ['job_id'],
      fromText: (f) => ({
        job_id: Number(f[0]),
        key: f[1] ?? null,
        first: f[2] === null ? null : Number(f[2]),
        stale: f[3] === 't',
      }),
    },
    (page) => {
      for (const row of page) {
        if (row.stale) stale.push(row.job_id);
        else rows.push({ job_id: row.job_id, key: row.key!, first: row.first! });
      }
    },
  );
  for (const row of await readCutoffs(db, stale)) rows.push(row);
  return rows;
}

/** Whether completion `a` sets a later cutoff than `b`: the later start wins, ties go to the smaller key. */
const later = (a: { key: string; first: Ms }, b: { key: string; first: Ms } | undefined) =>
  b === undefined || a.first > b.first || (a.first === b.first && a.key < b.key);

const CUTOFF_COLUMNS: readonly BulkColumn[] = [
  { name: 'job_id', type: 'int' },
  { name: 'key', type: 'text' },
  { name: 'first', type: 'timestamptz' },
];

/**
 * The writes that keep job_cutoffs with a batch, in its statement (see writer.ts), and which rows they leave
 * stale (RETURNING job_id, stale).
 *
 * A completion only ever raises a cutoff, so the batch's latest completion of a job replaces the row's when it
 * is later. The one way a cutoff goes down is the run that sets it learning of an earlier event (a START that
 * arrives after the COMPLETE): its start moves back, and another completion, which only the history holds, may
 * set the cutoff now. The statement cannot read the history it is writing, so it marks the row stale, and the
 * writer works it out from the history before its next batch (`fixes`: the cutoffs of the stale jobs as the
 * store held them before this batch, null for a job with no completion), which this batch's own completions
 * and runs then move on from. A job's row is in one of the two writes only.
 */
export function cutoffWrites(
  delta: ReadDelta,
  fixes: ReadonlyMap<number, CutoffRow | null>,
): [BulkWrite, BulkWrite] {
  const best = new Map<number, { key: string; first: Ms }>();
  for (const [jobId, key, first] of delta.completions) {
    const completion = { key, first };
    if (later(completion, best.get(jobId))) best.set(jobId, completion);
  }
  // The first eventTime of each run the batch touched, by job.
  const starts = new Map<number, Record<string, Ms>>();
  for (const [jobId, uuid, first] of delta.runs) {
    let runs = starts.get(jobId);
    if (!runs) starts.set(jobId, (runs = {}));
    runs[uuid] = first;
  }
  const fixed: unknown[][] = [];
  for (const [jobId, fix] of fixes) {
    const completion = best.get(jobId);
    if (completion !== undefined && later(completion, fix ?? undefined)) {
      fixed.push([jobId, completion.key, ts(completion.first), false]);
    } else {
      const moved = fix !== null && (starts.get(jobId)?.[fix.key] ?? Infinity) < fix.first;
      fixed.push([jobId, fix?.key ?? null, ts(fix?.first), moved]);
    }
  }
  const changed: unknown[][] = [];
  for (const jobId of new Set([...best.keys(), ...starts.keys()])) {
    if (fixes.has(jobId)) continue;
    const completion = best.get(jobId);
    changed.push([jobId, completion?.key ?? null, ts(completion?.first), starts.get(jobId) ?? null]);
  }
  const laterSql = `EXCLUDED.key IS NOT NULL AND (t.key IS NULL OR EXCLUDED.first > t.first
    OR (EXCLUDED.first = t.first AND EXCLUDED.key < t.key))`;
  return [
    {
      table: 'job_cutoffs',
      columns: [...CUTOFF_COLUMNS, { name: 'stale', type: 'boolean' }],
      rows: fixed,
      conflict: '(job_id) DO UPDATE SET key = EXCLUDED.key, first = EXCLUDED.first, stale = EXCLUDED.stale',
      returning: 'job_id, stale',
    },
    {
      table: 'job_cutoffs',
      columns: CUTOFF_COLUMNS,
      inputs: [{ name: 'starts', type: 'jsonb' }],
      // Whether the run that sets the stored cutoff has just learnt of an earlier event (read before the
      // statement writes, like every part of it).
      computed: {
        stale: `coalesce((SELECT (u.starts ->> c.key)::float8 < ${MS('c.first')} FROM job_cutoffs c
                          WHERE c.job_id = u.job_id), false)`,
      },
      rows: changed,
      conflict: `(job_id) DO UPDATE SET
        key = CASE WHEN ${laterSql} THEN EXCLUDED.key ELSE t.key END,
        first = CASE WHEN ${laterSql} THEN EXCLUDED.first ELSE t.first END,
        stale = CASE WHEN ${laterSql} THEN false ELSE t.stale OR EXCLUDED.stale END
        WHERE (${laterSql}) OR (EXCLUDED.stale AND NOT t.stale)`,
      returning: 'job_id, stale',
    },
  ];
}
