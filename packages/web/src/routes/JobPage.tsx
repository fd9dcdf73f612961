import { Link, useParams } from 'react-router';
import { api } from '../api/client.js';
import type { Job, Run } from '../api/types.js';
import { DeclaredLineage } from '../components/DeclaredLineage.js';
import { FacetsViewer } from '../components/FacetsViewer.js';
import { HealthBadges } from '../components/HealthBadges.js';
import { RunError } from '../components/RunError.js';
import { RunsTable } from '../components/RunsTable.js';
import { RunStateBadge } from '../components/RunStateBadge.js';
import { RunDurations } from '../components/RunDurations.js';
import { SqlCode } from '../components/SqlCode.js';
import { Async } from '../components/States.js';
import { PageHeader } from '../components/PageHeader.js';
import { RootCauses } from '../components/RootCause.js';
import { formatDuration, formatOwners, formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { useRootCauses } from '../hooks/useRootCauses.js';
import { datasetNodeId, fromParam, jobNodeId, paths } from '../paths.js';

interface SourceCodeLocation {
  url?: string;
  path?: string;
  repoUrl?: string;
  version?: string;
  branch?: string;
}

/** `/jobs/:namespace/:name`: runs and their timeline, the latest run with its error, SQL, source, parents. */
export function JobPage() {
  const params = useParams();
  const namespace = fromParam(params.namespace);
  const name = fromParam(params.name);
  const job = useApi(`job:${namespace}:${name}`, (signal) => api.job(namespace, name, signal));
  return (
    <Async state={job} what="the job" notFound={`No job ${name} in namespace ${namespace}.`}>
      {(data) => <JobView job={data} />}
    </Async>
  );
}

function JobView({ job }: { job: Job }) {
  const nodeId = jobNodeId(job.namespace, job.name);
  const runs = useApi(`runs:${nodeId}`, (signal) => api.jobRuns(job.namespace, job.name, 100, signal));
  const siblings = useApi(`jobs:${job.namespace}`, (signal) =>
    api.jobs({ namespace: job.namespace, limit: 1000 }, signal),
  );
  // The server's root cause starts at data: a job's is that of the datasets it writes.
  const outputs = job.outputs.map((d) => datasetNodeId(d.namespace, d.name));
  const rootCause = useRootCauses(outputs);
  const facets = job.facets ?? {};
  const sql = (facets.sql as { query?: string } | undefined)?.query;
  const source = facets.sourceCodeLocation as SourceCodeLocation | undefined;
  const children = siblings.data?.jobs.filter((j) => j.parentJobName === job.name) ?? [];
  const declared = useApi(`declared:${nodeId}`, (signal) => api.declaredLineage(nodeId, signal));

  return (
    <div className="page">
      <PageHeader kind={`Job · ${job.type}`} name={job.name} namespace={job.namespace} nodeId={nodeId} />
      <HealthBadges nodeIds={[nodeId]} what="job" />
      <RootCauses state={rootCause} />
      <div className="two-columns">
        <section className="card">
          <h2>About</h2>
          {job.description ? <p>{job.description}</p> : <p className="muted">No description.</p>}
          <dl className="facts">
            <dt>Owners</dt>
            <dd>{formatOwners(facets)}</dd>
            <dt>Labels and tags</dt>
            <dd>{[...(job.labels ?? []), ...(job.tags ?? [])].join(', ') || '—'}</dd>
            <dt>Parent job</dt>
            <dd>
              {job.parentJobName ? (
                <Link to={paths.job(job.namespace, job.parentJobName)}>{job.parentJobName}</Link>
              ) : (
                '—'
              )}
            </dd>
            <dt>Child jobs</dt>
            <dd>
              {children.length === 0
                ? '—'
                : children.map((c, i) => (
                    <span key={c.name}>
                      {i > 0 && ', '}
                      <Link to={paths.job(c.namespace, c.name)}>{c.simpleName || c.name}</Link>
                    </span>
                  ))}
            </dd>
            <dt>Source code</dt>
            <dd>
              {(source?.url ?? job.location) ? (
                <a
                  href={source?.url ?? job.location ?? undefined}
                  className="mono small"
                  rel="noreferrer"
                  target="_blank"
                >
                  {source?.path ?? source?.url ?? job.location}
                </a>
              ) : (
                '—'
              )}
              {source?.version && (
                <div className="muted small mono">
                  at {source.version.slice(0, 12)}
                  {source.branch ? ` on ${source.branch}` : ''}
                </div>
              )}
            </dd>
            <dt>Inputs</dt>
            <dd>
              {job.inputs.length === 0
                ? '—'
                : job.inputs.map((d, i) => (
                    <span key={d.namespace + d.name}>
                      {i > 0 && ', '}
                      <Link to={paths.dataset(d.namespace, d.name)}>{d.name}</Link>
                    </span>
                  ))}
            </dd>
            <dt>Outputs</dt>
            <dd>
              {job.outputs.length === 0
                ? '—'
                : job.outputs.map((d, i) => (
                    <span key={d.namespace + d.name}>
                      {i > 0 && ', '}
                      <Link to={paths.dataset(d.namespace, d.name)}>{d.name}</Link>
                    </span>
                  ))}
            </dd>
          </dl>
        </section>
        <section className="card">
          <h2>Latest run</h2>
          <Async state={runs} what="the latest run">
            {({ runs: list }) =>
              list[0] ? (
                <LatestRun run={list[0]} withWorkflow={children.length > 0} />
              ) : (
                <p className="muted">This job has not run yet.</p>
              )
            }
          </Async>
        </section>
      </div>
      <DeclaredLineage state={declared} />
      {sql && (
        <section className="card">
          <h2>SQL</h2>
          <SqlCode sql={sql} />
        </section>
      )}
      <section className="card">
        <h2>Run history</h2>
        <Async state={runs} what="runs">
          {({ runs: list }) =>
            list.length === 0 ? (
              <p className="muted">No runs.</p>
            ) : (
              <>
                <RunDurations runs={list} />
                <RunsTable
                  runs={list.map((run) => ({ namespace: job.namespace, job: job.name, run }))}
                  label="Run history"
                  showJob={false}
                  compare
                  workflow={children.length > 0}
                />
              </>
            )
          }
        </Async>
      </section>
      <section className="card">
        <h2>Facets</h2>
        <FacetsViewer facets={facets} label="job facets" />
      </section>
    </div>
  );
}

function LatestRun({ run, withWorkflow }: { run: Run; withWorkflow: boolean }) {
  return (
    <div>
      <dl className="facts">
        <dt>State</dt>
        <dd>
          <RunStateBadge
            state={run.state}
            stale={run.stale === true}
            contradictory={run.contradictoryStates}
            execution={run.execution}
          />
        </dd>
        <dt>Started</dt>
        <dd>{formatTime(run.startedAt)}</dd>
        <dt>Ended</dt>
        <dd>{formatTime(run.endedAt)}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(run.durationMs)}</dd>
        <dt>Run</dt>
        <dd>
          <Link className="mono small" to={paths.run(run.id)}>
            {run.id}
          </Link>
        </dd>
        {withWorkflow && (
          <>
            <dt>Child runs</dt>
            <dd>
              <Link to={paths.workflow(run.id)}>Workflow graph of this run</Link>
            </dd>
          </>
        )}
      </dl>
      <RunError error={run.error} />
    </div>
  );
}
