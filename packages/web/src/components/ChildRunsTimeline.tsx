import { Link } from 'react-router';
import type { ChildRunJson } from '../api/analysis.js';
import { stateMark } from '../api/workflow.js';
import { formatDuration } from '../format.js';
import { paths } from '../paths.js';
import { RunStateBadge } from './RunStateBadge.js';

/**
 * Child runs on a shared time axis, in the order they ran, from the parent's start (or the first child's) to its
 * end. A child that never ran has no bar and says so. `onSelect` makes each name select the child instead of
 * linking to its run page.
 */
export function ChildRunsTimeline({
  parent,
  runs,
  onSelect,
}: {
  parent: { startedAt: string | null; endedAt: string | null };
  runs: readonly ChildRunJson[];
  onSelect?: (runId: string) => void;
}) {
  const time = (iso: string | null) => (iso ? new Date(iso).getTime() : NaN);
  const starts = runs.map((r) => time(r.startedAt)).filter(Number.isFinite);
  const ends = runs.map((r) => time(r.endedAt)).filter(Number.isFinite);
  const from = Math.min(time(parent.startedAt) || Infinity, ...starts);
  const to = Math.max(time(parent.endedAt) || -Infinity, ...ends);
  const span = Math.max(1, to - from);
  return (
    <ol className="workflow" aria-label="Child runs">
      {runs.map((run) => {
        const start = time(run.startedAt);
        const end = Number.isFinite(time(run.endedAt)) ? time(run.endedAt) : to;
        const { mark } = stateMark(run);
        return (
          <li key={run.runId} className="workflow__row">
            {onSelect ? (
              <button
                type="button"
                className="link-button workflow__name"
                onClick={() => onSelect(run.runId)}
              >
                {run.job.name}
              </button>
            ) : (
              <Link to={paths.run(run.runId)} className="workflow__name">
                {run.job.name}
              </Link>
            )}
            <span className="workflow__track">
              {run.ran && Number.isFinite(start) ? (
                <span
                  className={`workflow__bar bar-bg--${run.state.toLowerCase()}`}
                  style={{
                    left: `${((start - from) / span) * 100}%`,
                    width: `${Math.max(1, ((end - start) / span) * 100)}%`,
                  }}
                />
              ) : (
                <span className="workflow__never">{run.ran ? 'no start reported' : 'never ran'}</span>
              )}
            </span>
            <span className="workflow__state">
              <span aria-hidden="true">{mark} </span>
              <RunStateBadge state={run.state} stale={run.stale === true} />
            </span>
            <span className="workflow__duration">{formatDuration(run.durationMs)}</span>
          </li>
        );
      })}
    </ol>
  );
}
