import { useMemo } from 'react';
import { Link } from 'react-router';
import {
  assertionHistories,
  observationsOf,
  statisticsOf,
  type AssertionHistory,
} from '../api/run-observations.js';
import type { Run } from '../api/types.js';
import { formatTime } from '../format.js';
import { paths } from '../paths.js';
import { TableHead } from './TableHead.js';
import { TimeSeriesChart, type ChartSeries } from './TimeSeriesChart.js';

const count = (n: number) => n.toLocaleString('en-US');
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const tick = (n: number) => compact.format(n);
const bytes = (n: number) => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
};
const palette = ['#0b6e8a', '#7c3aed', '#b45309', '#16a34a', '#db2777', '#475569'];

/**
 * A dataset's data quality and statistics over the recent runs of the jobs that read or write it, from the run
 * facets the run API returns: each assertion's latest result with severity and expected against actual, and its
 * history; row counts, bytes and null counts as charts.
 */
export function DatasetQuality({
  namespace,
  name,
  runs,
}: {
  namespace: string;
  name: string;
  runs: readonly Run[];
}) {
  const observations = useMemo(() => observationsOf(namespace, name, runs), [namespace, name, runs]);
  const histories = useMemo(() => assertionHistories(observations), [observations]);
  const stats = useMemo(() => statisticsOf(observations), [observations]);
  const nullSeries = useMemo<ChartSeries[]>(
    () =>
      [...stats.nullCount].map(([column, points], i) => ({
        label: `nulls in ${column}`,
        points,
        color: palette[i % palette.length]!,
      })),
    [stats],
  );
  const rowSeries = useMemo<ChartSeries[]>(
    () =>
      [
        { label: 'rows read', points: stats.rowsRead, color: palette[0]! },
        { label: 'rows written', points: stats.rowsWritten, color: palette[2]! },
      ].filter((s) => s.points.length > 0),
    [stats],
  );
  const byteSeries = useMemo<ChartSeries[]>(
    () =>
      [
        { label: 'bytes read', points: stats.bytesRead, color: palette[0]! },
        { label: 'bytes written', points: stats.bytesWritten, color: palette[2]! },
      ].filter((s) => s.points.length > 0),
    [stats],
  );
  return (
    <>
      <section className="card">
        <h2>Data quality</h2>
        {histories.length === 0 ? (
          <p className="muted">
            No data-quality assertions were reported for this dataset in its recent runs.
          </p>
        ) : (
          <AssertionTable histories={histories} />
        )}
      </section>
      <section className="card">
        <h2>Statistics over runs</h2>
        {rowSeries.length + byteSeries.length + nullSeries.length === 0 ? (
          <p className="muted">No run reported row counts, sizes or null counts for this dataset.</p>
        ) : (
          <div className="charts">
            {rowSeries.length > 0 && (
              <div>
                <h3>Row counts</h3>
                <p className="muted small">
                  Read: the whole table as its readers saw it. Written: what each writing run added.
                </p>
                <TimeSeriesChart label="Row counts" series={rowSeries} format={count} tick={tick} />
              </div>
            )}
            {byteSeries.length > 0 && (
              <div>
                <h3>Size</h3>
                <TimeSeriesChart label="Size" series={byteSeries} format={bytes} />
              </div>
            )}
            {nullSeries.length > 0 && (
              <div>
                <h3>Null counts</h3>
                <TimeSeriesChart label="Null counts" series={nullSeries} format={count} tick={tick} />
              </div>
            )}
          </div>
        )}
      </section>
    </>
  );
}

function AssertionTable({ histories }: { histories: readonly AssertionHistory[] }) {
  return (
    <table className="table" aria-label="Data-quality assertions">
      <TableHead
        columns={['Latest', 'Assertion', 'Column', 'Severity', 'Expected', 'Actual', 'History, newest first']}
      />
      <tbody>
        {histories.map((h) => {
          const latest = h.results[0]!;
          return (
            <tr key={`${h.assertion}:${h.column}`}>
              <td>
                <span className={`badge badge--${latest.success ? 'completed' : 'failed'}`}>
                  {latest.success ? 'PASSED' : 'FAILED'}
                </span>
                <div className="muted small">{formatTime(latest.at)}</div>
              </td>
              <td className="mono">{h.assertion}</td>
              <td className="mono">{h.column || '—'}</td>
              <td>{latest.severity ?? '—'}</td>
              <td className="mono">{latest.expected ?? '—'}</td>
              <td className="mono">{latest.actual ?? '—'}</td>
              <td>
                <ol className="assertion-history" aria-label={`History of ${h.assertion}(${h.column})`}>
                  {h.results.map((r) => (
                    <li key={`${r.runId}:${r.at}`}>
                      <Link
                        to={paths.run(r.runId)}
                        className={`assertion-history__mark assertion-history__mark--${r.success ? 'passed' : 'failed'}`}
                        title={`${formatTime(r.at)}: ${r.success ? 'passed' : 'failed'}${r.actual ? `, actual ${r.actual}` : ''}`}
                        aria-label={`${formatTime(r.at)}: ${r.success ? 'passed' : 'failed'}`}
                      >
                        {r.success ? '✓' : '✕'}
                      </Link>
                    </li>
                  ))}
                </ol>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
