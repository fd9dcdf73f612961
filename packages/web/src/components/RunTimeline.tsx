import { Link } from 'react-router';
import type { Run } from '../api/types.js';
import { formatDuration, formatTime } from '../format.js';
import { paths } from '../paths.js';

/**
 * Runs as bars on a time axis, oldest left: a bar's height is its duration, its colour its state, so slow and
 * failed runs stand out. Each bar links to its run.
 */
export function RunTimeline({ runs }: { runs: readonly Run[] }) {
  const ordered = [...runs].reverse();
  const max = Math.max(1, ...ordered.map((r) => r.durationMs ?? 0));
  const width = 640;
  const height = 110;
  const slot = width / Math.max(ordered.length, 12);
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        preserveAspectRatio="xMinYMax meet"
        role="img"
        aria-label="Run timeline"
      >
        {ordered.map((run, i) => {
          const h = Math.max(3, ((run.durationMs ?? 0) / max) * (height - 6));
          return (
            <Link key={run.id} to={paths.run(run.id)}>
              <rect
                className={`bar--${run.state.toLowerCase()}`}
                x={i * slot + 2}
                y={height - h}
                width={Math.max(2, slot - 4)}
                height={h}
                rx={2}
              >
                <title>{`${formatTime(run.startedAt ?? run.createdAt)} · ${run.state} · ${formatDuration(run.durationMs)}`}</title>
              </rect>
            </Link>
          );
        })}
      </svg>
      <figcaption>
        Duration of the last {runs.length} runs, {formatTime(ordered[0]?.startedAt)} to{' '}
        {formatTime(ordered.at(-1)?.startedAt)} (longest {formatDuration(max)}).
      </figcaption>
    </figure>
  );
}
