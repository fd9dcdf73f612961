import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Point } from '../api/quality.js';
import { formatTime } from '../format.js';
import { paths } from '../paths.js';

/** One line (or set of marks) of a chart. */
export interface ChartSeries {
  readonly label: string;
  readonly points: readonly Point[];
  readonly color: string;
  /** Marks only, larger, no line: for events such as failed runs. */
  readonly marksOnly?: boolean;
}

/**
 * Values over time, drawn with uPlot (a canvas time-series library: small, fast with thousands of points, no
 * dependencies). The figures are also in a table beneath, for screen readers, copying and tests; the legend
 * names each series in words, so a series is never told by its colour alone.
 */
export function TimeSeriesChart({
  label,
  series,
  format,
  height = 180,
  tick,
}: {
  label: string;
  series: readonly ChartSeries[];
  format: (value: number) => string;
  height?: number;
  /** A shorter format for the axis; default `format`. */
  tick?: (value: number) => string;
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    // uPlot wants one x array shared by all series, with null where a series has no value.
    const times = [...new Set(series.flatMap((s) => s.points.map((p) => Date.parse(p.at) / 1000)))].sort(
      (a, b) => a - b,
    );
    const column = new Map(times.map((t, i) => [t, i]));
    const data: uPlot.AlignedData = [
      times,
      ...series.map((s) => {
        const values: (number | null)[] = times.map(() => null);
        for (const p of s.points) values[column.get(Date.parse(p.at) / 1000)!] = p.value;
        return values;
      }),
    ];
    const chart = new uPlot(
      {
        width: Math.max(200, element.clientWidth),
        height,
        series: [
          {
            label: 'Time',
            value: (_, t) => (t === null ? '—' : formatTime(new Date(t * 1000).toISOString())),
          },
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: s.marksOnly ? 0 : 2,
            spanGaps: true,
            points: { show: true, size: s.marksOnly ? 11 : 6, fill: s.color, stroke: s.color },
            value: (_: uPlot, v: number | null) => (v === null ? '—' : format(v)),
          })),
        ],
        axes: [{}, { values: (_, ticks) => ticks.map(tick ?? format), size: 80 }],
        scales: { x: { time: true } },
      },
      data,
      element,
    );
    const observer = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(200, element.clientWidth), height }),
    );
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [series, format, tick, height]);

  const rows = series
    .flatMap((s) => s.points.map((p) => ({ series: s.label, ...p })))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return (
    <figure className="time-chart" aria-label={label}>
      <div ref={container} className="time-chart__canvas" />
      <details className="time-chart__figures">
        <summary>The figures ({rows.length})</summary>
        <table className="table table--compact" aria-label={`${label}: figures`}>
          <thead>
            <tr>
              <th>Time</th>
              <th>Series</th>
              <th>Value</th>
              <th>Run</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={`${row.series}:${row.runId}:${row.at}`}>
                <td>{formatTime(row.at)}</td>
                <td>{row.series}</td>
                <td>{format(row.value)}</td>
                <td>
                  <Link className="mono small" to={paths.run(row.runId)}>
                    {row.runId.slice(0, 8)}
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
