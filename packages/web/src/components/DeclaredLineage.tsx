import { Link } from 'react-router';
import type { DeclaredLineageResult, JobEdge } from '../api/analysis.js';
import { formatTime } from '../format.js';
import type { ApiState } from '../hooks/useApi.js';
import { nodeLabel, paths } from '../paths.js';

/** One list of edges, each as job, reads or writes, dataset. */
function EdgeList({ edges, label, showJob }: { edges: readonly JobEdge[]; label: string; showJob: boolean }) {
  return (
    <ul className="link-list" aria-label={label}>
      {edges.map((edge) => (
        <li key={`${edge.job}:${edge.direction}:${edge.dataset}`}>
          {showJob && (
            <>
              <Link to={paths.node(edge.job)}>{nodeLabel(edge.job)}</Link>{' '}
            </>
          )}
          {edge.direction === 'input' ? 'reads' : 'writes'}{' '}
          <Link to={paths.node(edge.dataset)}>{nodeLabel(edge.dataset)}</Link>
        </li>
      ))}
    </ul>
  );
}

/**
 * The server's declared-against-observed answer (`/api/v1/analysis/declared-lineage`) for a job: the edges its
 * JobEvents declare (a pipeline pushed before it runs) that the latest completed runs did not touch, and those
 * they touched that were never declared. Nothing shows for a job no JobEvent declared, or while loading.
 */
export function DeclaredLineage({ state }: { state: ApiState<DeclaredLineageResult> }) {
  if (state.status === 'loading') return null;
  if (state.status === 'error') {
    return (
      <section className="card" aria-label="Declared against observed">
        <h2>Declared against observed</h2>
        <p className="muted">Could not load the comparison: {state.error.message}</p>
      </section>
    );
  }
  const result = state.data;
  const declared = result.jobs.filter((job) => job.declaredAt !== null);
  if (declared.length === 0) return null;
  const showJob = result.jobs.length > 1;
  const neverCompleted = declared.filter((job) => job.run === null);
  const latest = declared
    .map((job) => job.declaredAt!)
    .sort()
    .at(-1)!;
  const same = result.declaredNotObserved.length === 0 && result.observedNotDeclared.length === 0;
  return (
    <section className="card" aria-label="Declared against observed">
      <h2>Declared against observed</h2>
      <p className="muted small">
        What {showJob ? `the ${declared.length} declared jobs` : 'this job'} declared (last at{' '}
        {formatTime(latest)}) against what {showJob ? 'each one’s' : 'its'} latest completed run read and
        wrote.
      </p>
      {same ? (
        <p>The latest completed runs touched exactly what is declared.</p>
      ) : (
        <>
          {neverCompleted.length > 0 && (
            <p>
              Never completed:{' '}
              {neverCompleted.map((job, i) => (
                <span key={job.job}>
                  {i > 0 && ', '}
                  <Link to={paths.node(job.job)}>{nodeLabel(job.job)}</Link>
                </span>
              ))}
            </p>
          )}
          <h3>Declared, not touched ({result.declaredNotObserved.length})</h3>
          {result.declaredNotObserved.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <EdgeList edges={result.declaredNotObserved} label="Declared, not touched" showJob={showJob} />
          )}
          <h3>Observed, never declared ({result.observedNotDeclared.length})</h3>
          {result.observedNotDeclared.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <EdgeList edges={result.observedNotDeclared} label="Observed, never declared" showJob={showJob} />
          )}
        </>
      )}
    </section>
  );
}
