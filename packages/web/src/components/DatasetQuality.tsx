import { useMemo } from 'react';
import { Link } from 'react-router';
import type {
  AssertionJson,
  AssertionResultJson,
  DatasetQualityJson,
  QualityObservationJson,
} from '../api/analysis.js';
import { statisticsOf } from '../api/quality.js';
import { formatBytes, formatTime } from '../format.js';
import { paths } from '../paths.js';
import { TableHead } from './TableHead.js';
import { TimeSeriesChart, type ChartSeries } from './TimeSeriesChart.js';
import type { Point } from '../api/quality.js';

const count = (n: number) => n.toLocaleString('en-US');
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const tick = (n: number) => compact.format(n);
const bytes = formatBytes;
const palette = ['#0b6e8a', '#7c3aed', '#b45309', '#16a34a', '#db2777', '#475569'];

const columnSeries = (counts: ReadonlyMap<string, Point[]>, what: string): ChartSeries[] =>
  [...counts].map(([column, points], i) => ({
    label: `${what} in ${column}`,
    points,
    color: palette[i % palette.length]!,
  }));

/**
 * A dataset's data quality and statistics as the server answers them (GET .../datasets/{dataset}/quality): each
 * assertion's latest result from any run with severity and expected against actual, and its history; row counts,
 * bytes, null and distinct counts per column as charts, and the newest column metrics in figures.
 */
export function DatasetQuality({ quality }: { quality: DatasetQualityJson }) {
  const histories = quality.assertions;
  const stats = useMemo(() => statisticsOf(quality.runs), [quality]);
  const nullSeries = useMemo(() => columnSeries(stats.nullCount, 'nulls'), [stats]);
  const distinctSeries = useMemo(() => columnSeries(stats.distinctCount, 'distinct values'), [stats]);
  const newestMetrics = quality.runs.find((o) => (o.metrics?.columns.length ?? 0) > 0);
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
          <p className="muted">No data-quality assertions were reported for this dataset.</p>
        ) : (
          <AssertionTable histories={histories} />
        )}
      </section>
      <section className="card">
        <h2>Statistics over runs</h2>
        {rowSeries.length + byteSeries.length + nullSeries.length + distinctSeries.length === 0 ? (
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
            {distinctSeries.length > 0 && (
              <div>
                <h3>Distinct counts</h3>
                <TimeSeriesChart label="Distinct counts" series={distinctSeries} format={count} tick={tick} />
              </div>
            )}
          </div>
        )}
        {newestMetrics && <ColumnMetrics observation={newestMetrics} />}
      </section>
    </>
  );
}

/** The per-column metrics (dataQualityMetrics) one run reported. */
function ColumnMetrics({ observation }: { observation: QualityObservationJson }) {
  const figure = (n: number | null) => (n === null ? '—' : count(n));
  return (
    <>
      <h3>Column metrics</h3>
      <p className="muted small">
        As reported by <Link to={paths.run(observation.runId)}>{observation.job.name}</Link> at{' '}
        {formatTime(observation.at)}
        {observation.metrics?.rowCount === null
          ? ''
          : ` over ${figure(observation.metrics?.rowCount ?? null)} rows`}
        .
      </p>
      <table className="table" aria-label="Column metrics">
        <TableHead columns={['Column', 'Nulls', 'Distinct', 'Count', 'Min', 'Max', 'Sum']} />
        <tbody>
          {observation.metrics!.columns.map((c) => (
            <tr key={c.column}>
              <td className="mono">{c.column}</td>
              <td>{figure(c.nullCount)}</td>
              <td>{figure(c.distinctCount)}</td>
              <td>{figure(c.count)}</td>
              <td>{figure(c.min)}</td>
              <td>{figure(c.max)}</td>
              <td>{figure(c.sum)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The badge of where an assertion stands, in the server's terms (AssertionStanding). */
const standingBadge: Record<AssertionJson['status'], { className: string; label: string }> = {
  failing: { className: 'failed', label: 'FAILED' },
  passing: { className: 'completed', label: 'PASSED' },
  notEvaluated: { className: 'new', label: 'NOT RUN' },
  retired: { className: 'aborted', label: 'RETIRED' },
};

/** One result as a person reads it: passed, failed, or not run (a check that was skipped). */
const resultWord = (r: AssertionResultJson) => (r.skipped ? 'not run' : r.success ? 'passed' : 'failed');
const resultMark = (r: AssertionResultJson) => (r.skipped ? '–' : r.success ? '✓' : '✕');

function AssertionTable({ histories }: { histories: readonly AssertionJson[] }) {
  return (
    <table className="table" aria-label="Data-quality assertions">
      <TableHead
        columns={['Latest', 'Assertion', 'Column', 'Severity', 'Expected', 'Actual', 'History, newest first']}
      />
      <tbody>
        {histories.map((h) => {
          const { latest } = h;
          const label = h.name ?? h.assertion;
          const badge = standingBadge[h.status];
          return (
            <tr key={h.identity} className={h.status === 'retired' ? 'row--retired' : undefined}>
              <td>
                <span className={`badge badge--${badge.className}`}>{badge.label}</span>
                <div className="muted small">{formatTime(latest.at)}</div>
                {h.retired && (
                  <div className="muted small">
                    no longer reported since{' '}
                    <Link to={paths.run(h.retired.runId)}>{formatTime(h.retired.at)}</Link>
                  </div>
                )}
                {h.status !== 'retired' && h.lastReported.skipped && (
                  <div className="muted small">
                    not run at{' '}
                    <Link to={paths.run(h.lastReported.runId)}>{formatTime(h.lastReported.at)}</Link>
                  </div>
                )}
              </td>
              <td className="mono">
                {label}
                {h.name !== null && <div className="muted small">{h.assertion}</div>}
              </td>
              <td className="mono">{h.column || '—'}</td>
              <td>{latest.severity ?? '—'}</td>
              <td className="mono">{latest.expected ?? '—'}</td>
              <td className="mono">{latest.actual ?? '—'}</td>
              <td>
                <ol className="assertion-history" aria-label={`History of ${label}(${h.column})`}>
                  {h.history.map((r) => (
                    <li key={`${r.runId}:${r.at}`}>
                      <Link
                        to={paths.run(r.runId)}
                        className={`assertion-history__mark assertion-history__mark--${r.skipped ? 'skipped' : r.success ? 'passed' : 'failed'}`}
                        title={`${formatTime(r.at)}: ${resultWord(r)}${r.actual ? `, actual ${r.actual}` : ''}`}
                        aria-label={`${formatTime(r.at)}: ${resultWord(r)}`}
                      >
                        {resultMark(r)}
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
