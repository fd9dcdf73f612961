import { Link } from 'react-router';
import type { Cause, CauseKind, RootCauseResult } from '../api/analysis.js';
import type { RunState } from '../api/types.js';
import { formatDuration, formatTime } from '../format.js';
import { nodeLabel, paths } from '../paths.js';
import type { ApiState } from '../hooks/useApi.js';
import { RunStateBadge } from './RunStateBadge.js';
import { Async } from './States.js';
import { SchemaChangeList } from './SchemaChangeList.js';

/** How each kind of cause is named; the same words label the graph's nodes. */
export const causeLabels: Record<CauseKind, string> = {
  failedRun: 'Failed run',
  failedAssertion: 'Failing assertion',
  stale: 'Stale',
  schemaChange: 'Schema change',
};

/** A mark beside the label, so a cause is told by its shape and words as well as its colour. */
export const causeMarks: Record<CauseKind, string> = {
  failedRun: '✕',
  failedAssertion: '!',
  stale: '◷',
  schemaChange: '≠',
};

/**
 * The server's root-cause answer (`/api/v1/analysis/root-cause`) for one dataset or column: every cause in the
 * server's order, each with its basis (the failing assertions with expected and actual, how late the data is
 * against its usual interval, the columns that changed, the failed run and its error) and its path. A cause the
 * server says follows from a failed run upstream (`explainedBy`) is shown under that run, not as a cause of its own.
 */
export function RootCause({ result, title }: { result: RootCauseResult; title?: string }) {
  const { causes, checked } = result;
  const shown = new Set(causes.filter((c) => c.kind === 'failedRun').map((c) => c.nodeId));
  const roots = causes.filter((c) => c.explainedBy === null || !shown.has(c.explainedBy));
  const following = (cause: Cause) =>
    cause.kind === 'failedRun' ? causes.filter((c) => c.explainedBy === cause.nodeId) : [];
  const upstreamLink = paths.lineage(result.target, {
    depth: Math.max(1, ...causes.map((c) => c.distance)),
    direction: 'upstream',
  });
  return (
    <section
      className={`root-cause${causes.length > 0 ? ' root-cause--found' : ''}`}
      aria-label={title ?? 'Root cause'}
    >
      <div className="root-cause__header">
        <strong>
          {causes.length === 0
            ? 'Nothing upstream looks wrong.'
            : `${roots.length} possible ${roots.length === 1 ? 'cause' : 'causes'} upstream, nearest first` +
              (roots.length < causes.length
                ? `, and ${causes.length - roots.length} more that follow from ${roots.length === 1 ? 'it' : 'them'}:`
                : ':')}
        </strong>{' '}
        <span className="muted small">
          Checked {checked.datasets} {checked.datasets === 1 ? 'dataset' : 'datasets'} and {checked.jobs}{' '}
          {checked.jobs === 1 ? 'job' : 'jobs'} as of {formatTime(result.at)}
          {result.lastGoodRunAt ? `; last completed write ${formatTime(result.lastGoodRunAt)}` : ''}.
        </span>
      </div>
      {causes.length > 0 && (
        <>
          <ol className="cause-list" aria-label="Causes">
            {roots.map((cause, index) => (
              <CauseItem
                key={`${cause.kind}:${cause.nodeId}:${index}`}
                cause={cause}
                following={following(cause)}
              />
            ))}
          </ol>
          <Link to={upstreamLink}>Show the paths in the lineage graph</Link>
        </>
      )}
    </section>
  );
}

/** The root causes of several targets (a job's outputs), each titled by its target when there are more. */
export function RootCauses({ state, what }: { state: ApiState<RootCauseResult[]>; what?: string }) {
  return (
    <Async state={state} what={what ?? 'the root cause'}>
      {(results) =>
        results.map((result) => (
          <RootCause
            key={result.target}
            result={result}
            title={results.length > 1 ? `Root cause of ${nodeLabel(result.target)}` : 'Root cause'}
          />
        ))
      }
    </Async>
  );
}

function CauseItem({ cause, following = [] }: { cause: Cause; following?: readonly Cause[] }) {
  return (
    <li className={`cause cause--${cause.kind}`}>
      <div className="cause__head">
        <span className={`cause__kind cause__kind--${cause.kind}`}>
          <span aria-hidden="true">{causeMarks[cause.kind]}</span> {causeLabels[cause.kind]}
        </span>{' '}
        <Link className="cause__node" to={paths.node(cause.nodeId)}>
          {nodeLabel(cause.nodeId)}
        </Link>{' '}
        <span className="muted small">
          {cause.distance === 0
            ? 'on this dataset itself'
            : `${cause.distance} ${cause.distance === 1 ? 'hop' : 'hops'} up`}
        </span>
      </div>
      <p className="cause__message">{cause.message}</p>
      <CauseBasis cause={cause} />
      <div className="cause__path muted small" aria-label="Path">
        {cause.path.map((id, i) => (
          <span key={`${id}:${i}`}>
            {i > 0 && ' ← '}
            <Link to={paths.node(id)}>{nodeLabel(id)}</Link>
          </span>
        ))}
      </div>
      {following.length > 0 && (
        <div className="cause__following">
          <strong className="small">What follows from this failure:</strong>
          <ol className="cause-list" aria-label={`Explained by ${nodeLabel(cause.nodeId)}`}>
            {following.map((c, index) => (
              <CauseItem key={`${c.kind}:${c.nodeId}:${index}`} cause={c} />
            ))}
          </ol>
        </div>
      )}
    </li>
  );
}

/** What the cause rests on, in the server's words and numbers. */
function CauseBasis({ cause }: { cause: Cause }) {
  if (cause.kind === 'failedRun' && cause.run) {
    return (
      <div className="cause__basis">
        <RunStateBadge state={cause.run.state as RunState} contradictory={cause.run.contradictoryStates} />{' '}
        run{' '}
        <Link className="mono small" to={paths.run(cause.run.id)}>
          {cause.run.id.slice(0, 8)}
        </Link>{' '}
        ended {formatTime(cause.run.endedAt)}
        {cause.errorMessage && <pre className="code code--error cause__error">{cause.errorMessage}</pre>}
      </div>
    );
  }
  if (cause.kind === 'failedAssertion') {
    return (
      <ul className="cause__basis cause__assertions" aria-label="Failing assertions">
        {cause.assertions.map((a) => (
          <li key={`${a.assertion}:${a.column}:${a.runId}`}>
            <span className="mono">
              {a.assertion}
              {a.column ? `(${a.column})` : ''}
            </span>
            : expected <span className="mono">{a.expected ?? '—'}</span>, actual{' '}
            <span className="mono">{a.actual ?? '—'}</span>
            <span className="muted small">
              {' '}
              · severity {a.severity ?? 'not given'} · reported{' '}
              <Link to={paths.run(a.runId)}>{formatTime(a.at)}</Link>
            </span>
          </li>
        ))}
      </ul>
    );
  }
  if (cause.kind === 'stale' && cause.staleness) {
    const s = cause.staleness;
    return (
      <div className="cause__basis">
        <p>
          Last written {formatTime(s.lastWriteAt)}, {formatDuration(s.ageMs)} before the time looked at;{' '}
          {s.job.replace(/^job:/, '')} usually writes it every {formatDuration(s.medianIntervalMs)} (median of
          its last {s.writes} writes, bursts within {formatDuration(s.floorMs)} as one), so stale after{' '}
          {formatDuration(s.thresholdMs)}.
        </p>
        {s.writers.length > 1 && (
          <ul aria-label="Writers and their cadence">
            {s.writers.map((w) => (
              <li key={w.job}>
                {w.job.replace(/^job:/, '')}: every {formatDuration(w.medianIntervalMs)}, last{' '}
                {formatTime(w.lastWriteAt)}
              </li>
            ))}
          </ul>
        )}
      </div>
    );
  }
  if (cause.kind === 'schemaChange' && cause.schemaChange) {
    const change = cause.schemaChange;
    return (
      <div className="cause__basis">
        <SchemaChangeList change={change} />
        <span className="muted small">
          Version {change.fromVersion.slice(0, 8)} → {change.toVersion.slice(0, 8)},{' '}
          {formatTime(change.createdAt)}
          {change.createdByRun && (
            <>
              {' '}
              by run <Link to={paths.run(change.createdByRun)}>{change.createdByRun.slice(0, 8)}</Link>
            </>
          )}
        </span>
      </div>
    );
  }
  return null;
}
