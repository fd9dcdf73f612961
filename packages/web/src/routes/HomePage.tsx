import { Link, useSearchParams } from 'react-router';
import { api } from '../api/client.js';
import type { Job, Run } from '../api/types.js';
import { BrokenDownstream } from '../components/BrokenDownstream.js';
import { IngestChart } from '../components/IngestChart.js';
import { NamespacePicker } from '../components/NamespacePicker.js';
import { RunsTable, type JobRun } from '../components/RunsTable.js';
import { RunStateBadge } from '../components/RunStateBadge.js';
import { Async, Empty } from '../components/States.js';
import { hourlyBuckets } from '../api/activity.js';
import { formatAgo, formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { paths } from '../paths.js';

const dayMs = 24 * 3600 * 1000;
/** Enough for a day of a busy deployment's events; the chart says when it saw only this many. */
const activityEventLimit = 5000;

/**
 * The server's last-24-hours stats when anything arrived in them; otherwise the 24 hours up to the newest
 * stored event, however old, so the chart never says "no events" while there are some.
 */
async function latestActivity(signal: AbortSignal) {
  const buckets = await api.lineageEventStats('DAY', signal);
  if (buckets.some((b) => b.start + b.complete + b.fail + b.abort > 0)) return { buckets, latest: undefined };
  const [newest] = (await api.events({ limit: 1 }, signal)).events;
  if (!newest) return { buckets, latest: undefined };
  const latest = new Date(newest.eventTime);
  const { events } = await api.events(
    {
      after: new Date(latest.getTime() - dayMs).toISOString(),
      before: new Date(latest.getTime() + 1).toISOString(),
      limit: activityEventLimit,
    },
    signal,
  );
  return { buckets: hourlyBuckets(events, latest), latest: newest.eventTime };
}

/** A run that failed for real: a run that did not execute (skipped, reused) failed nothing, whatever its state. */
const isFailure = (run: Run | null | undefined) => run?.state === 'FAILED' && run.execution === undefined;

const latestRuns = (jobs: readonly Job[]): JobRun[] =>
  jobs
    .filter((job) => job.latestRun)
    .map((job) => ({ namespace: job.namespace, job: job.name, run: job.latestRun! }))
    .sort((a, b) => (b.run.updatedAt < a.run.updatedAt ? -1 : 1));

/**
 * `/`: what unresolved incidents break downstream first, then namespaces, counts, recent runs, the ingest rate and
 * the failures that need attention.
 */
export function HomePage() {
  const [params, setParams] = useSearchParams();
  const namespace = params.get('ns') ?? undefined;
  const namespaces = useApi('namespaces', (signal) => api.namespaces(signal));
  const jobs = useApi('jobs', (signal) => api.jobs({ limit: 500 }, signal));
  const activity = useApi('stats:activity', latestActivity);

  return (
    <div className="home">
      <BrokenDownstream />
      <section className="card home__namespaces">
        <h2>Namespaces</h2>
        <Async state={namespaces} what="namespaces">
          {({ namespaces: list }) =>
            list.length === 0 ? (
              <Empty>
                No namespaces yet. Send OpenLineage events to <code>/api/v1/lineage</code>, or load the demo
                with <code>headwater demo</code>.
              </Empty>
            ) : (
              <NamespacePicker
                namespaces={list}
                selected={namespace}
                onSelect={(ns) => setParams({ ns }, { replace: true })}
              />
            )
          }
        </Async>
      </section>
      <div className="home__main">
        <section className="card">
          <h2>Overview</h2>
          <Async state={jobs} what="counts">
            {({ jobs: list, totalCount }) => {
              const failing = list.filter((j) => isFailure(j.latestRun)).length;
              return (
                <dl className="counts">
                  <div>
                    <dt>Namespaces</dt>
                    <dd>{namespaces.data?.namespaces.length ?? '…'}</dd>
                  </div>
                  <div>
                    <dt>Jobs</dt>
                    <dd>{totalCount}</dd>
                  </div>
                  <div>
                    <dt>Failing jobs</dt>
                    <dd className={failing > 0 ? 'text-failed' : ''}>{failing}</dd>
                  </div>
                </dl>
              );
            }}
          </Async>
        </section>
        {namespace && <NamespaceContents namespace={namespace} />}
        <section className="card">
          <h2>Failed runs</h2>
          <Async state={jobs} what="failed runs">
            {({ jobs: list }) => <FailedRuns runs={latestRuns(list).filter((r) => isFailure(r.run))} />}
          </Async>
        </section>
        <section className="card">
          <h2>Recent runs</h2>
          <Async state={jobs} what="recent runs">
            {({ jobs: list }) =>
              list.length === 0 ? (
                <Empty>No runs yet.</Empty>
              ) : (
                <RunsTable runs={latestRuns(list).slice(0, 10)} label="Recent runs" />
              )
            }
          </Async>
        </section>
        <section className="card">
          <Async state={activity} what="the ingest rate">
            {({ buckets, latest }) => (
              <>
                <h2>
                  {latest
                    ? `Latest activity: the 24 h up to ${formatTime(latest)} (${formatAgo(latest)})`
                    : 'Events received, last 24 h'}
                </h2>
                <IngestChart buckets={buckets} />
              </>
            )}
          </Async>
        </section>
      </div>
    </div>
  );
}

/** Failures of the last 24 h first; when there are none, the latest older ones, said as such. */
function FailedRuns({ runs }: { runs: JobRun[] }) {
  const since = Date.now() - dayMs;
  const recent = runs.filter((r) => new Date(r.run.endedAt ?? r.run.updatedAt).getTime() >= since);
  if (runs.length === 0) return <Empty>No job's latest run failed.</Empty>;
  return (
    <>
      {recent.length === 0 && (
        <p className="muted">No run failed in the last 24 hours. Jobs whose latest run failed earlier:</p>
      )}
      <RunsTable runs={recent.length > 0 ? recent : runs} label="Failed runs" />
    </>
  );
}

/** The datasets and jobs of the chosen namespace. */
function NamespaceContents({ namespace }: { namespace: string }) {
  const datasets = useApi(`datasets:${namespace}`, (signal) => api.datasets(namespace, 200, signal));
  const jobs = useApi(`jobs:${namespace}`, (signal) => api.jobs({ namespace, limit: 200 }, signal));
  return (
    <section className="card" aria-label={`Namespace ${namespace}`}>
      <h2>
        Namespace <span className="mono">{namespace}</span>
      </h2>
      <div className="two-columns">
        <div>
          <h3>Datasets</h3>
          <Async state={datasets} what="datasets">
            {({ datasets: list }) =>
              list.length === 0 ? (
                <p className="muted">No datasets in this namespace.</p>
              ) : (
                <ul className="link-list" aria-label="Datasets">
                  {list.map((d) => (
                    <li key={d.name}>
                      <Link to={paths.dataset(d.namespace, d.name)}>{d.name}</Link>
                    </li>
                  ))}
                </ul>
              )
            }
          </Async>
        </div>
        <div>
          <h3>Jobs</h3>
          <Async state={jobs} what="jobs">
            {({ jobs: list }) =>
              list.length === 0 ? (
                <p className="muted">No jobs in this namespace.</p>
              ) : (
                <ul className="link-list" aria-label="Jobs">
                  {list.map((j) => (
                    <li key={j.name}>
                      <RunStateBadge state={j.latestRun?.state} execution={j.latestRun?.execution} />{' '}
                      <Link to={paths.job(j.namespace, j.name)}>{j.name}</Link>
                    </li>
                  ))}
                </ul>
              )
            }
          </Async>
        </div>
      </div>
    </section>
  );
}
