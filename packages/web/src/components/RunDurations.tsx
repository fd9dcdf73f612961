import { useMemo } from 'react';
import type { Point } from '../api/quality.js';
import type { Run } from '../api/types.js';
import { formatDuration } from '../format.js';
import { TimeSeriesChart, type ChartSeries } from './TimeSeriesChart.js';

const pointOf = (run: Run): Point | undefined =>
  run.durationMs === null
    ? undefined
    : { at: run.startedAt ?? run.createdAt, value: run.durationMs, runId: run.id };

/** A job's run durations over time, failed and aborted runs marked as their own series ("Failed run"). */
export function RunDurations({ runs }: { runs: readonly Run[] }) {
  const series = useMemo<ChartSeries[]>(() => {
    const all = runs.map(pointOf).filter((p) => p !== undefined);
    const failed = runs
      .filter((r) => r.state === 'FAILED' || r.state === 'ABORTED')
      .map(pointOf)
      .filter((p) => p !== undefined);
    return [
      { label: 'Duration', points: all, color: '#0b6e8a' },
      ...(failed.length > 0
        ? [{ label: 'Failed run', points: failed, color: '#dc2626', marksOnly: true }]
        : []),
    ];
  }, [runs]);
  if (series[0]!.points.length === 0) return <p className="muted">No run has both a start and an end yet.</p>;
  return <TimeSeriesChart label="Run durations" series={series} format={(ms) => formatDuration(ms)} />;
}
