/**
 * A dataset's data quality as the server answers it (GET .../datasets/{dataset}/quality): the server decides
 * what an assertion is and which result is the latest; this module only arranges the answer for charts.
 */
import type { QualityObservationJson } from './analysis.js';

/** A value at a time, for charts. */
export interface Point {
  readonly at: string;
  readonly value: number;
  readonly runId: string;
}

/** Row counts, bytes, and null and distinct counts per column over the runs, oldest first. */
export interface DatasetStatistics {
  /** What the writing runs reported writing (`outputStatistics`): for an appending job, the rows appended. */
  readonly rowsWritten: Point[];
  /** What the reading runs reported seeing (`inputStatistics`, else `dataQualityMetrics`): the whole dataset. */
  readonly rowsRead: Point[];
  readonly bytesWritten: Point[];
  readonly bytesRead: Point[];
  readonly nullCount: ReadonlyMap<string, Point[]>;
  readonly distinctCount: ReadonlyMap<string, Point[]>;
}

const byTime = (a: { at: string }, b: { at: string }) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0);

/**
 * The statistics of the server's observations (newest first), kept apart by who reported them: a writer's
 * `outputStatistics` counts what it wrote, a reader's `inputStatistics` or `dataQualityMetrics` what it read, and
 * the two differ for an appended table.
 */
export function statisticsOf(observations: readonly QualityObservationJson[]): DatasetStatistics {
  const stats = {
    rowsWritten: [] as Point[],
    rowsRead: [] as Point[],
    bytesWritten: [] as Point[],
    bytesRead: [] as Point[],
    nullCount: new Map<string, Point[]>(),
    distinctCount: new Map<string, Point[]>(),
  };
  for (const o of [...observations].sort(byTime)) {
    const push = (list: Point[], value: number | null | undefined) => {
      if (typeof value === 'number') list.push({ at: o.at, value, runId: o.runId });
    };
    push(stats.rowsWritten, o.output?.rowCount);
    push(stats.bytesWritten, o.output?.bytes);
    push(stats.rowsRead, o.input?.rowCount ?? o.metrics?.rowCount);
    push(stats.bytesRead, o.input?.bytes ?? o.metrics?.bytes);
    for (const column of o.metrics?.columns ?? []) {
      for (const [map, value] of [
        [stats.nullCount, column.nullCount],
        [stats.distinctCount, column.distinctCount],
      ] as const) {
        let list = map.get(column.column);
        if (!list) map.set(column.column, (list = []));
        push(list, value);
      }
    }
  }
  for (const map of [stats.nullCount, stats.distinctCount]) {
    for (const [column, points] of map) if (points.length === 0) map.delete(column);
  }
  return stats;
}
