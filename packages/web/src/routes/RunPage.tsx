import { Link, useParams } from 'react-router';
import { api } from '../api/client.js';
import type { DatasetVersionRef, Run } from '../api/types.js';
import { FacetsViewer } from '../components/FacetsViewer.js';
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

/** `/runs/:runId`: what one run read and wrote, its error, and for a parent run the runs of its child jobs. */
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
      {job && <ChildRuns parentRun={run} namespace={job.namespace} parentJob={job.name} />}
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

/**
 * The runs of the child jobs that name this run as their parent, on a shared time axis. The API has no
 * "children of a run" query, so the recent runs of each child job are read and matched on the parent facet.
 */
function ChildRuns({
  parentRun,
  namespace,
  parentJob,
}: {
  parentRun: Run;
  namespace: string;
  parentJob: string;
}) {
  const children = useApi(`children:${parentRun.id}`, async (signal) => {
    const { jobs } = await api.jobs({ namespace, limit: 1000 }, signal);
    const childJobs = jobs.filter((j) => j.parentJobName === parentJob);
    const runs = await Promise.all(childJobs.map((j) => api.jobRuns(j.namespace, j.name, 50, signal)));
    return runs
      .flatMap((r) => r.runs)
      .filter((r) => (r.facets.parent as ParentFacet | undefined)?.run?.runId === parentRun.id)
      .sort((a, b) => ((a.startedAt ?? '') < (b.startedAt ?? '') ? -1 : 1));
  });
  if (children.status === 'ready' && children.data.length === 0) return null;
  return (
    <section className="card">
      <h2>Child runs</h2>
      <Async state={children} what="child runs">
        {(runs) => <Workflow parent={parentRun} runs={runs} />}
      </Async>
    </section>
  );
}

function Workflow({ parent, runs }: { parent: Run; runs: readonly Run[] }) {
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
        const left = Number.isFinite(start) ? ((start - from) / span) * 100 : 0;
        const width = Number.isFinite(start) ? Math.max(1, ((end - start) / span) * 100) : 100;
        return (
          <li key={run.id} className="workflow__row">
            <Link to={paths.run(run.id)} className="workflow__name">
              {run.jobVersion?.name ?? run.id}
            </Link>
            <span className="workflow__track">
              <span
                className={`workflow__bar bar-bg--${run.state.toLowerCase()}`}
                style={{ left: `${left}%`, width: `${width}%` }}
              />
            </span>
            <RunStateBadge state={run.state} />
            <span className="workflow__duration">{formatDuration(run.durationMs)}</span>
          </li>
        );
      })}
    </ol>
  );
}
