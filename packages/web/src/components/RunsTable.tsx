import { Link } from 'react-router';
import type { Run } from '../api/types.js';
import { formatDuration, formatTime } from '../format.js';
import { paths } from '../paths.js';
import { RunStateBadge } from './RunStateBadge.js';

/** A run with the job it belongs to, for lists that mix jobs. */
export interface JobRun {
  readonly namespace: string;
  readonly job: string;
  readonly run: Run;
}

/** Runs as a table: state, job, start, duration; each row links to its run page. */
export function RunsTable({
  runs,
  label,
  showJob = true,
  compare = false,
  workflow = false,
}: {
  runs: readonly JobRun[];
  label: string;
  showJob?: boolean;
  /** Runs of one job, newest first: each row links to its comparison with the next (older) row. */
  compare?: boolean;
  /** Runs of a parent job: each row links to its workflow graph (its child runs). */
  workflow?: boolean;
}) {
  return (
    <table className="table" aria-label={label}>
      <thead>
        <tr>
          <th>State</th>
          {showJob && <th>Job</th>}
          <th>Started</th>
          <th>Duration</th>
          <th>Run</th>
          {compare && <th>Compare</th>}
          {workflow && <th>Child runs</th>}
        </tr>
      </thead>
      <tbody>
        {runs.map(({ namespace, job, run }, i) => (
          <tr key={run.id}>
            <td>
              <RunStateBadge
                state={run.state}
                stale={run.stale === true}
                contradictory={run.contradictoryStates}
                execution={run.execution}
              />
            </td>
            {showJob && (
              <td>
                <Link to={paths.job(namespace, job)}>{job}</Link>
                <div className="muted small">{namespace}</div>
              </td>
            )}
            <td>{formatTime(run.startedAt ?? run.createdAt)}</td>
            <td>{formatDuration(run.durationMs)}</td>
            <td>
              <Link className="mono small" to={paths.run(run.id)}>
                {run.id.slice(0, 8)}
              </Link>
            </td>
            {compare && (
              <td>
                {runs[i + 1] && (
                  <Link className="small" to={paths.runDiff(runs[i + 1]!.run.id, run.id)}>
                    with the run before
                  </Link>
                )}
              </td>
            )}
            {workflow && (
              <td>
                <Link className="small" to={paths.workflow(run.id)}>
                  workflow
                </Link>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
