import type { LineageEventsBucket } from '../api/types.js';

const series = [
  { key: 'complete', label: 'Complete', className: 'bar--completed' },
  { key: 'start', label: 'Start', className: 'bar--running' },
  { key: 'fail', label: 'Fail', className: 'bar--failed' },
  { key: 'abort', label: 'Abort', className: 'bar--aborted' },
] as const;

/** Stacked bars of OpenLineage events per interval, drawn as plain SVG (no chart library for one chart). */
export function IngestChart({ buckets }: { buckets: readonly LineageEventsBucket[] }) {
  const total = buckets.reduce((sum, b) => sum + b.complete + b.start + b.fail + b.abort, 0);
  const max = Math.max(1, ...buckets.map((b) => b.complete + b.start + b.fail + b.abort));
  const width = 600;
  const height = 120;
  const barWidth = width / Math.max(1, buckets.length);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${total} events in the period`}>
        {buckets.map((bucket, i) => {
          let y = height;
          return (
            <g key={bucket.startInterval}>
              <title>{`${new Date(bucket.startInterval).toLocaleString()}: ${bucket.complete} complete, ${bucket.start} start, ${bucket.fail} fail, ${bucket.abort} abort`}</title>
              {series.map((s) => {
                const h = (bucket[s.key] / max) * (height - 4);
                y -= h;
                return h > 0 ? (
                  <rect
                    key={s.key}
                    className={s.className}
                    x={i * barWidth + 1}
                    y={y}
                    width={barWidth - 2}
                    height={h}
                  />
                ) : null;
              })}
            </g>
          );
        })}
        <line x1={0} x2={width} y1={height - 0.5} y2={height - 0.5} className="chart__axis" />
      </svg>
      <figcaption>
        {total === 0 ? 'No events received in this period.' : `${total} events`}
        <span className="chart__keys">
          {series.map((s) => (
            <span key={s.key}>
              <span className={`legend__swatch ${s.className}`} /> {s.label}
            </span>
          ))}
        </span>
      </figcaption>
    </figure>
  );
}
