import { Link, useParams } from 'react-router';
import { api } from '../api/client.js';
import { REDACTED } from '../api/redacted.js';
import type { Dataset, JobNode, LineageGraphResponse } from '../api/types.js';
import { FacetsViewer } from '../components/FacetsViewer.js';
import { HealthBadges } from '../components/HealthBadges.js';
import { DatasetJourney } from '../components/DatasetJourney.js';
import { DatasetQuality } from '../components/DatasetQuality.js';
import { PageHeader } from '../components/PageHeader.js';
import { RootCauses } from '../components/RootCause.js';
import { SchemaHistory } from '../components/SchemaHistory.js';
import { Async } from '../components/States.js';
import { formatOwners, formatTime } from '../format.js';
import { useApi, type ApiState } from '../hooks/useApi.js';
import { useRootCauses } from '../hooks/useRootCauses.js';
import { datasetNodeId, fromParam, paths } from '../paths.js';

/** The dataset page's tabs: `overview` at `/datasets/:namespace/:name`, `journey` at `…/journey`. */
export type DatasetTab = 'overview' | 'journey';

/**
 * `/datasets/:namespace/:name`: schema, owners, versions with a schema diff, quality, facets, jobs; its Journey tab
 * (`/journey`) where the dataset's or a column's data went in a window.
 */
export function DatasetPage({ tab = 'overview' }: { tab?: DatasetTab }) {
  const params = useParams();
  const namespace = fromParam(params.namespace);
  const name = fromParam(params.name);
  const nodeId = datasetNodeId(namespace, name);
  const dataset = useApi(`dataset:${nodeId}`, (signal) => api.dataset(namespace, name, signal));
  return (
    <Async state={dataset} what="the dataset" notFound={`No dataset ${name} in namespace ${namespace}.`}>
      {(data) => (
        <div className="page">
          <PageHeader kind={`Dataset · ${data.type}`} name={name} namespace={namespace} nodeId={nodeId} />
          <nav className="tabs" aria-label="Dataset views">
            <Link to={paths.dataset(namespace, name)} aria-current={tab === 'overview' ? 'page' : undefined}>
              Overview
            </Link>
            <Link
              to={paths.datasetJourney(namespace, name)}
              aria-current={tab === 'journey' ? 'page' : undefined}
            >
              Journey
            </Link>
          </nav>
          {tab === 'journey' ? (
            <DatasetJourney nodeId={nodeId} fields={data.fields.map((field) => field.name)} />
          ) : (
            <DatasetView dataset={data} nodeId={nodeId} />
          )}
        </div>
      )}
    </Async>
  );
}

function DatasetView({ dataset, nodeId }: { dataset: Dataset; nodeId: string }) {
  const { namespace, name, aliasOf } = dataset;
  // An alias's lineage is that of the dataset it is: the server answers with that node.
  const lineageId =
    aliasOf && aliasOf.namespace !== REDACTED ? datasetNodeId(aliasOf.namespace, aliasOf.name) : nodeId;
  const upstream = useApi(`lineage-up:${lineageId}`, (signal) =>
    api.lineage(lineageId, 1, 'upstream', signal),
  );
  const downstream = useApi(`lineage-down:${lineageId}`, (signal) =>
    api.lineage(lineageId, 1, 'downstream', signal),
  );
  const versions = useApi(`versions:${nodeId}`, (signal) =>
    api.datasetVersions(namespace, name, 100, signal),
  );
  const rootCause = useRootCauses([nodeId]);
  const producers = jobsOf(upstream, lineageId, true);
  const consumers = jobsOf(downstream, lineageId, false);
  const quality = useApi(`quality:${nodeId}`, (signal) => api.datasetQuality(namespace, name, signal));
  const facets = dataset.facets ?? {};
  const documentation = (facets.documentation as { description?: string } | undefined)?.description;

  return (
    <>
      <HealthBadges nodeIds={[nodeId, lineageId]} what="dataset" />
      <RootCauses state={rootCause} />
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
            {aliasOf && (
              <>
                <dt>Alias of</dt>
                <dd>
                  {aliasOf.namespace === REDACTED ? (
                    REDACTED
                  ) : (
                    <Link to={paths.dataset(aliasOf.namespace, aliasOf.name)}>
                      {aliasOf.namespace}:{aliasOf.name}
                    </Link>
                  )}
                </dd>
              </>
            )}
            {dataset.aliases && (
              <>
                <dt>Aliases</dt>
                <dd>
                  {dataset.aliases.map((alias, index) => (
                    <span key={`${alias.namespace}:${alias.name}`}>
                      {index > 0 && ', '}
                      <Link to={paths.dataset(alias.namespace, alias.name)}>
                        {alias.namespace}:{alias.name}
                      </Link>
                    </span>
                  ))}
                </dd>
              </>
            )}
          </dl>
        </section>
        <section className="card">
          <h2>Jobs</h2>
          <h3>Produced by</h3>
          <JobLinks jobs={producers} label="Producing jobs" />
          <h3>Consumed by</h3>
          <JobLinks jobs={consumers} label="Consuming jobs" />
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
                <th>Impact</th>
                <th>Journey</th>
              </tr>
            </thead>
            <tbody>
              {dataset.fields.map((f) => (
                <tr key={f.name} id={`column-${encodeURIComponent(f.name)}`}>
                  <td className="mono">{f.name}</td>
                  <td className="mono">{f.type ?? ''}</td>
                  <td>{f.description ?? ''}</td>
                  <td>{f.tags.join(', ')}</td>
                  <td>
                    <Link
                      className="small"
                      to={paths.impact(`datasetField:${namespace}:${name}:${f.name}`, 'removed')}
                      aria-label={`Impact of removing ${f.name}`}
                    >
                      if removed
                    </Link>
                  </td>
                  <td>
                    <Link
                      className="small"
                      to={paths.datasetJourney(namespace, name, f.name)}
                      aria-label={`Journey of ${f.name}`}
                    >
                      journey
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="card">
        <h2>Schema history</h2>
        <Async state={versions} what="versions">
          {({ versions: list }) => <SchemaHistory dataset={nodeId} versions={list} />}
        </Async>
      </section>
      <Async state={quality} what="the data quality">
        {(answer) => <DatasetQuality quality={answer} />}
      </Async>
      <section className="card">
        <h2>Facets</h2>
        <FacetsViewer facets={facets} label="dataset facets" />
      </section>
    </>
  );
}

/** The jobs of a lineage answer that write (`producers`) or read the dataset. */
const jobsOf = (state: ApiState<LineageGraphResponse>, nodeId: string, producers: boolean): JobNode[] =>
  state.status === 'ready'
    ? (state.data.graph.filter(
        (n) =>
          n.type === 'JOB' &&
          (producers
            ? n.outEdges.some((e) => e.destination === nodeId)
            : n.inEdges.some((e) => e.origin === nodeId)),
      ) as JobNode[])
    : [];

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
