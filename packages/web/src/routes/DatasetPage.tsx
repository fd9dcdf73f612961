import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api } from '../api/client.js';
import type { Dataset, DatasetVersion, JobNode } from '../api/types.js';
import { FacetsViewer } from '../components/FacetsViewer.js';
import { QualityAssertions } from '../components/QualityAssertions.js';
import { SchemaDiff } from '../components/SchemaDiff.js';
import { Async } from '../components/States.js';
import { UpstreamFailures } from '../components/UpstreamFailures.js';
import { formatOwners, formatTime } from '../format.js';
import { buildLineageModel, failedUpstream } from '../graph/lineage-model.js';
import { useApi } from '../hooks/useApi.js';
import { datasetNodeId, fromParam, paths } from '../paths.js';

/** `/datasets/:namespace/:name`: schema, owners, versions with a schema diff, quality, facets, jobs. */
export function DatasetPage() {
  const params = useParams();
  const namespace = fromParam(params.namespace);
  const name = fromParam(params.name);
  const nodeId = datasetNodeId(namespace, name);
  const dataset = useApi(`dataset:${nodeId}`, (signal) => api.dataset(namespace, name, signal));
  return (
    <Async state={dataset} what="the dataset" notFound={`No dataset ${name} in namespace ${namespace}.`}>
      {(data) => <DatasetView dataset={data} nodeId={nodeId} />}
    </Async>
  );
}

function DatasetView({ dataset, nodeId }: { dataset: Dataset; nodeId: string }) {
  const { namespace, name } = dataset;
  const upstream = useApi(`lineage-up:${nodeId}`, (signal) => api.lineage(nodeId, 20, 'upstream', signal));
  const downstream = useApi(`lineage-down:${nodeId}`, (signal) =>
    api.lineage(nodeId, 1, 'downstream', signal),
  );
  const versions = useApi(`versions:${nodeId}`, (signal) =>
    api.datasetVersions(namespace, name, 100, signal),
  );
  const failing = useMemo(
    () =>
      upstream.status === 'ready' ? failedUpstream(buildLineageModel(upstream.data), nodeId).failing : [],
    [upstream, nodeId],
  );
  const facets = dataset.facets ?? {};
  const documentation = (facets.documentation as { description?: string } | undefined)?.description;
  const jobsOf = (state: typeof upstream, producers: boolean): JobNode[] =>
    state.status === 'ready'
      ? (state.data.graph.filter(
          (n) =>
            n.type === 'JOB' &&
            (producers
              ? n.outEdges.some((e) => e.destination === nodeId)
              : n.inEdges.some((e) => e.origin === nodeId)),
        ) as JobNode[])
      : [];

  return (
    <div className="page">
      <div className="page__header">
        <div>
          <div className="page__kind">Dataset · {dataset.type}</div>
          <h1>{name}</h1>
          <div className="muted">{namespace}</div>
        </div>
        <Link className="button" to={paths.lineage(nodeId, { depth: 3 })}>
          Lineage
        </Link>
      </div>
      <UpstreamFailures
        failing={failing}
        lineageUrl={paths.lineage(nodeId, { depth: 20, direction: 'upstream' })}
      />
      <div className="two-columns">
        <section className="card">
          <h2>About</h2>
          {(documentation ?? dataset.description) ? (
            <p>{documentation ?? dataset.description}</p>
          ) : (
            <p className="muted">No documentation.</p>
          )}
          <dl className="facts">
            <dt>Owners</dt>
            <dd>{formatOwners(facets)}</dd>
            <dt>Tags</dt>
            <dd>{dataset.tags.length === 0 ? '—' : dataset.tags.join(', ')}</dd>
            <dt>Last modified</dt>
            <dd>{formatTime(dataset.lastModifiedAt)}</dd>
            <dt>Source</dt>
            <dd>{dataset.sourceName}</dd>
          </dl>
        </section>
        <section className="card">
          <h2>Jobs</h2>
          <h3>Produced by</h3>
          <JobLinks jobs={jobsOf(upstream, true)} label="Producing jobs" />
          <h3>Consumed by</h3>
          <JobLinks jobs={jobsOf(downstream, false)} label="Consuming jobs" />
        </section>
      </div>
      <section className="card">
        <h2>Schema</h2>
        {dataset.fields.length === 0 ? (
          <p className="muted">No schema was reported for this dataset.</p>
        ) : (
          <table className="table" aria-label="Schema">
            <thead>
              <tr>
                <th>Column</th>
                <th>Type</th>
                <th>Description</th>
                <th>Tags</th>
              </tr>
            </thead>
            <tbody>
              {dataset.fields.map((f) => (
                <tr key={f.name} id={`column-${encodeURIComponent(f.name)}`}>
                  <td className="mono">{f.name}</td>
                  <td className="mono">{f.type ?? ''}</td>
                  <td>{f.description ?? ''}</td>
                  <td>{f.tags.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="card">
        <h2>Versions</h2>
        <Async state={versions} what="versions">
          {({ versions: list }) => <VersionHistory versions={list} />}
        </Async>
      </section>
      <section className="card">
        <h2>Data quality</h2>
        <QualityAssertions facet={facets.dataQualityAssertions} />
      </section>
      <section className="card">
        <h2>Facets</h2>
        <FacetsViewer facets={facets} label="dataset facets" />
      </section>
    </div>
  );
}

function JobLinks({ jobs, label }: { jobs: readonly JobNode[]; label: string }) {
  if (jobs.length === 0) return <p className="muted">None known.</p>;
  return (
    <ul className="link-list" aria-label={label}>
      {jobs.map((j) => (
        <li key={j.id}>
          <Link to={paths.job(j.data.namespace, j.data.name)}>{j.data.name}</Link>{' '}
          <span className="muted small">{j.data.namespace}</span>
        </li>
      ))}
    </ul>
  );
}

/** The versions, newest first; pick any two to compare their schemas. */
function VersionHistory({ versions }: { versions: readonly DatasetVersion[] }) {
  const [before, setBefore] = useState(versions[1]?.version ?? versions[0]?.version);
  const [after, setAfter] = useState(versions[0]?.version);
  if (versions.length === 0) return <p className="muted">No versions.</p>;
  const byVersion = new Map(versions.map((v) => [v.version, v]));
  const a = before ? byVersion.get(before) : undefined;
  const b = after ? byVersion.get(after) : undefined;
  return (
    <>
      <table className="table" aria-label="Versions">
        <thead>
          <tr>
            <th>Compare</th>
            <th>Created</th>
            <th>Columns</th>
            <th>Created by run</th>
            <th>Version</th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => (
            <tr key={v.version}>
              <td>
                <label className="small">
                  <input
                    type="radio"
                    name="before"
                    checked={before === v.version}
                    onChange={() => setBefore(v.version)}
                  />{' '}
                  from
                </label>{' '}
                <label className="small">
                  <input
                    type="radio"
                    name="after"
                    checked={after === v.version}
                    onChange={() => setAfter(v.version)}
                  />{' '}
                  to
                </label>
              </td>
              <td>{formatTime(v.createdAt)}</td>
              <td>{v.fields.length}</td>
              <td>
                {v.createdByRun ? (
                  <Link className="mono small" to={paths.run(v.createdByRun.id)}>
                    {v.createdByRun.id.slice(0, 8)}
                  </Link>
                ) : (
                  '—'
                )}
              </td>
              <td className="mono small">{v.version.slice(0, 8)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {a && b && (
        <>
          <h3>
            Schema changes from {formatTime(a.createdAt)} to {formatTime(b.createdAt)}
          </h3>
          <SchemaDiff before={a.fields} after={b.fields} />
        </>
      )}
    </>
  );
}
