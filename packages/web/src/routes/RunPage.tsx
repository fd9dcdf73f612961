import { Link, useParams } from 'react-router';
import { api } from '../api/client.js';
import type { DatasetVersionRef, Run } from '../api/types.js';
import { FacetsViewer } from '../components/FacetsViewer.js';
import { workflowSummary } from '../api/workflow.js';
import { ChildRunsTimeline } from '../components/ChildRunsTimeline.js';
import { RunError } from '../components/RunError.js';
import { RunStateBadge } from '../components/RunStateBadge.js';
import { Async } from '../components/States.js';
import { formatDuration, formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { fromParam, paths } from '../paths.js';

interface ParentFacet {
  job?: { namespace?: string; name?: string };
  run?: { runId?: string };
}

/** `/runs/:runId`: what one run read and wrote, its error, and for a parent run its child runs. */
export function RunPage() {
  const runId = fromParam(useParams().runId);
  const run = useApi(`run:${runId}`, (signal) => api.run(runId, signal));
  return (
    <Async state={run} what="the run" notFound={`No run with id ${runId}.`}>
      {(data) => <RunView run={data} />}
    </Async>
  );
}

function RunView({ run }: { run: Run }) {
  const job = run.jobVersion;
  const parent = run.facets.parent as ParentFacet | undefined;
  return (
    <div className="page">
      <div className="page__header">
        <div>
          <div className="page__kind">
            Run ·{' '}
            <RunStateBadge
              state={run.state}
              stale={run.stale === true}
              contradictory={run.contradictoryStates}
              execution={run.execution}
            />
          </div>
          <h1>{job ? <Link to={paths.job(job.namespace, job.name)}>{job.name}</Link> : 'Run'}</h1>
          <div className="muted mono small">{run.id}</div>
        </div>
      </div>
      <section className="card">
        <dl className="facts facts--inline">
          <dt>Started</dt>
          <dd>{formatTime(run.startedAt)}</dd>
          <dt>Ended</dt>
          <dd>{formatTime(run.endedAt)}</dd>
          <dt>Duration</dt>
          <dd>{formatDuration(run.durationMs)}</dd>
          <dt>Nominal time</dt>
          <dd>{formatTime(run.nominalStartTime)}</dd>
          <dt>Parent run</dt>
          <dd>
            {parent?.run?.runId ? (
              <Link to={paths.run(parent.run.runId)}>{parent.job?.name ?? parent.run.runId.slice(0, 8)}</Link>
            ) : (
              '—'
            )}
          </dd>
        </dl>
        <RunError error={run.error} />
      </section>
      <section className="card">
        <h2>Datasets read and written</h2>
        <RunFlow run={run} />
      </section>
      <ChildRuns parentRun={run} />
      <section className="card">
        <h2>Run facets</h2>
        <FacetsViewer facets={run.facets} label="run facets" />
      </section>
    </div>
  );
}

/** Inputs → job → outputs, each dataset version a link to its dataset. */
function RunFlow({ run }: { run: Run }) {
  const inputs = run.inputDatasetVersions ?? [];
  const outputs = run.outputDatasetVersions ?? [];
  if (inputs.length === 0 && outputs.length === 0)
    return <p className="muted">This run reported no input or output datasets.</p>;
  const list = (refs: DatasetVersionRef[], label: string) => (
    <ul className="run-flow__list" aria-label={label}>
      {refs.map(({ datasetVersionId: d }) => (
        <li key={`${d.namespace}:${d.name}`} className="run-flow__dataset">
          <Link to={paths.dataset(d.namespace, d.name)}>{d.name}</Link>
          <div className="muted small">{d.namespace}</div>
          <div className="muted small mono">version {d.version.slice(0, 8)}</div>
        </li>
      ))}
    </ul>
  );
  return (
    <div className="run-flow">
      <div>
        <h3>Read</h3>
        {inputs.length ? list(inputs, 'Inputs') : <p className="muted">Nothing.</p>}
      </div>
      <div className="run-flow__arrow" aria-hidden="true">
        →
      </div>
      <div className={`run-flow__job graph-node graph-node--job graph-node--${run.state.toLowerCase()}`}>
        <div className="graph-node__kind">Job · {run.state}</div>
        <div className="graph-node__name">{run.jobVersion?.name}</div>
        <div className="graph-node__namespace">{formatDuration(run.durationMs)}</div>
      </div>
      <div className="run-flow__arrow" aria-hidden="true">
        →
      </div>
      <div>
        <h3>Wrote</h3>
        {outputs.length ? list(outputs, 'Outputs') : <p className="muted">Nothing.</p>}
      </div>
    </div>
  );
}

/** How many children the run page summarises; the workflow page shows up to the server's page size. */
const CHILDREN_ON_RUN_PAGE = 200;

/**
 * The runs that name this run as their parent (the server's `/children`), on a shared time axis, with a link to
 * the workflow graph. Nothing when the run has no children.
 */
function ChildRuns({ parentRun }: { parentRun: Run }) {
  const children = useApi(`children:${parentRun.id}:${CHILDREN_ON_RUN_PAGE}`, (signal) =>
    api.runChildren(parentRun.id, CHILDREN_ON_RUN_PAGE, signal),
  );
  if (children.status === 'ready' && children.data.totalCount === 0) return null;
  return (
    <section className="card">
      <div className="card__header">
        <h2>Child runs</h2>
        <Link to={paths.workflow(parentRun.id)}>Workflow graph</Link>
      </div>
      <Async state={children} what="child runs">
        {(answer) => (
          <>
            <p className="muted">{workflowSummary(answer)}</p>
            <ChildRunsTimeline parent={parentRun} runs={answer.children} />
            {answer.totalCount > answer.children.length && (
              <p className="muted small">
                The first {answer.children.length} of {answer.totalCount};{' '}
                <Link to={paths.workflow(parentRun.id)}>the workflow graph</Link> shows more.
              </p>
            )}
          </>
        )}
      </Async>
    </section>
  );
}
