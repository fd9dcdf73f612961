import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ApiError } from '../api/client.js';
import type { JourneyHop, JourneyJson } from '../api/analysis.js';
import {
  journeyFormOf,
  journeyParamsOf,
  journeyQuery,
  journeySearch,
  type JourneyFormat,
  type JourneyForm,
  type JourneyParams,
} from '../api/journey.js';
import { download } from '../download.js';
import { formatOwnerList, formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { nodeLabel, paths } from '../paths.js';
import { JourneyLanes } from './JourneyLanes.js';
import { SqlCode } from './SqlCode.js';
import { Async, ErrorMessage } from './States.js';
import { TableHead } from './TableHead.js';

const exports: readonly { format: JourneyFormat; label: string; extension: string; type: string }[] = [
  { format: 'json', label: 'JSON', extension: 'json', type: 'application/json' },
  { format: 'markdown', label: 'Markdown', extension: 'md', type: 'text/markdown' },
  { format: 'csv', label: 'CSV', extension: 'csv', type: 'text/csv' },
  { format: 'html', label: 'HTML (printable)', extension: 'html', type: 'text/html' },
];

/**
 * The Journey tab of a dataset page: where the dataset's (or one column's) data went, or came from, over a window,
 * as the server's `/api/v1/compliance/journey` answers, with the report's exports. The question lives in the
 * page's address, so a journey is a link to share.
 */
export function DatasetJourney({ nodeId, fields }: { nodeId: string; fields: readonly string[] }) {
  const [search, setSearch] = useSearchParams();
  const form = journeyFormOf(search);
  const { params, problems } = journeyParamsOf(nodeId, form);
  const state = useApi(`journey:${journeyQuery(params)}:${problems.join()}`, (signal) =>
    problems.length > 0 ? Promise.reject(new Error(problems.join(' '))) : api.journey(params, signal),
  );
  return (
    <>
      <JourneyControls
        // A new address (back, a column's link) starts the controls from it again.
        key={search.toString()}
        initial={form}
        datasetNodeId={nodeId}
        fields={fields}
        onApply={(next) => setSearch(journeySearch(next, search))}
      />
      {state.status === 'error' && state.error instanceof ApiError && state.error.status === 410 ? (
        <div className="state state--error" role="alert">
          <strong>The window starts before the server's retention horizon.</strong>
          <p>{state.error.message}</p>
          <p>Choose a later From, or leave it empty for the last 90 days.</p>
        </div>
      ) : (
        <Async
          state={state}
          what="the journey"
          notFound={`The server does not know ${nodeLabel(params.nodeId)}.`}
        >
          {(journey) => <JourneyView journey={journey} params={params} />}
        </Async>
      )}
    </>
  );
}

function JourneyControls({
  initial,
  datasetNodeId,
  fields,
  onApply,
}: {
  initial: JourneyForm;
  datasetNodeId: string;
  fields: readonly string[];
  onApply: (form: JourneyForm) => void;
}) {
  const [draft, setDraft] = useState(initial);
  const [problems, setProblems] = useState<string[]>([]);
  const edit = (change: Partial<JourneyForm>) => setDraft((previous) => ({ ...previous, ...change }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = journeyParamsOf(datasetNodeId, draft).problems;
    setProblems(checked);
    if (checked.length === 0) onApply(draft);
  };
  const columns = draft.column === '' || fields.includes(draft.column) ? fields : [draft.column, ...fields];
  return (
    <form className="card journey-controls" aria-label="Journey question" onSubmit={submit}>
      <label>
        Column
        <select value={draft.column} onChange={(event) => edit({ column: event.target.value })}>
          <option value="">The whole dataset</option>
          {columns.map((field) => (
            <option key={field} value={field}>
              {field}
            </option>
          ))}
        </select>
      </label>
      <TextField
        label="From"
        value={draft.from}
        placeholder="90 days before To"
        onChange={(from) => edit({ from })}
      />
      <TextField label="To" value={draft.to} placeholder="the latest event" onChange={(to) => edit({ to })} />
      <label>
        Direction
        <select
          value={draft.direction}
          onChange={(event) =>
            edit({ direction: event.target.value === 'upstream' ? 'upstream' : 'downstream' })
          }
        >
          <option value="downstream">Downstream: where it went</option>
          <option value="upstream">Upstream: where it came from</option>
        </select>
      </label>
      <TextField
        label="Depth"
        value={draft.depth}
        placeholder="20"
        size={4}
        onChange={(depth) => edit({ depth })}
      />
      <TextField label="Tags" value={draft.tags} placeholder="pii,gdpr" onChange={(tags) => edit({ tags })} />
      <label className="journey-controls__jurisdictions">
        Jurisdictions (PATTERN=NAME a line)
        <textarea
          value={draft.jurisdictions}
          rows={3}
          placeholder={'s3://acme-eu-*=EU\npostgres://us-*=US'}
          onChange={(event) => edit({ jurisdictions: event.target.value })}
        />
      </label>
      <div className="journey-controls__actions">
        <button type="submit" className="button">
          Show the journey
        </button>
      </div>
      {problems.length > 0 && (
        <ul className="journey-controls__problems" role="alert" aria-label="Problems with the question">
          {problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      )}
    </form>
  );
}

/** A labelled text input of the controls; empty means the server's default, which `placeholder` names. */
function TextField(props: {
  label: string;
  value: string;
  placeholder: string;
  size?: number;
  onChange: (value: string) => void;
}) {
  return (
    <label>
      {props.label}
      <input
        value={props.value}
        placeholder={props.placeholder}
        {...(props.size !== undefined ? { size: props.size } : {})}
        onChange={(event) => props.onChange(event.target.value)}
      />
    </label>
  );
}

function JourneyView({ journey, params }: { journey: JourneyJson; params: JourneyParams }) {
  const { bounds } = journey;
  return (
    <>
      <section className="card" aria-label="Journey">
        <h2>
          Journey of <span title={journey.start}>{nodeLabel(journey.start)}</span>
        </h2>
        <p className="small" aria-label="Bounds">
          {bounds.direction === 'downstream' ? 'Where its data went' : 'Where its data came from'} from{' '}
          <span className="mono">{bounds.from}</span> to <span className="mono">{bounds.to}</span>, up to{' '}
          {bounds.depth} hops
          {bounds.tags.length > 0 && <>, tags {bounds.tags.join(', ')}</>}
          {bounds.jurisdictions.length > 0 && (
            <>
              , jurisdictions {bounds.jurisdictions.map((j) => `${j.pattern}=${j.jurisdiction}`).join(', ')}
            </>
          )}
          . {journey.hops.length} {journey.hops.length === 1 ? 'hop' : 'hops'}, {journey.transfers}{' '}
          {journey.transfers === 1 ? 'transfer' : 'transfers'} between jurisdictions.
        </p>
        {journey.hops.length === 0 ? (
          <p className="muted">No run in the window moved this data: there is no hop to show.</p>
        ) : (
          <JourneyLanes journey={journey} />
        )}
        <dl className="facts journey__hash">
          <dt>SHA-256</dt>
          <dd className="mono" aria-label="SHA-256">
            {journey.sha256}
          </dd>
        </dl>
        <JourneyExports params={params} start={journey.start} />
      </section>
      <section className="card" aria-label="Journey nodes">
        <h2>Nodes</h2>
        <table className="table table--compact" aria-label="Nodes">
          <TableHead
            columns={['Node', 'Distance', 'Jurisdiction', 'Owners over the window', 'Tags', 'Retention']}
          />
          <tbody>
            {journey.nodes.map((node) => (
              <tr key={node.nodeId}>
                <td>
                  <Link to={paths.node(node.nodeId)} title={node.nodeId}>
                    {nodeLabel(node.nodeId)}
                  </Link>
                  <div className="muted small">{node.namespace}</div>
                </td>
                <td>{node.distance}</td>
                <td>{node.jurisdiction ?? <span className="muted">unknown</span>}</td>
                <td className="small">
                  {node.owners.map((period) => (
                    <div key={period.from}>
                      from <span title={period.from}>{formatTime(period.from)}</span>:{' '}
                      {formatOwnerList(period.owners)}
                    </div>
                  ))}
                </td>
                <td>{node.tags.join(', ') || '—'}</td>
                <td className="small">
                  {node.retention.map((item) => `${item.facet} at ${formatTime(item.at)}`).join('; ') || '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {journey.hops.length > 0 && <HopsTable hops={journey.hops} />}
    </>
  );
}

function HopsTable({ hops }: { hops: readonly JourneyHop[] }) {
  return (
    <section className="card" aria-label="Journey hops">
      <h2>Hops and their evidence</h2>
      <table className="table table--compact" aria-label="Hops">
        <TableHead
          columns={[
            'Distance',
            'Hop',
            'Job',
            'Runs',
            'Evidence',
            'Versions',
            'Transformations',
            'SQL and code',
          ]}
        />
        <tbody>
          {hops.map((hop) => (
            <tr key={`${hop.from} ${hop.to} ${hop.job}`}>
              <td>{hop.distance}</td>
              <td>
                <Link to={paths.node(hop.from)} title={hop.from}>
                  {nodeLabel(hop.from)}
                </Link>{' '}
                →{' '}
                <Link to={paths.node(hop.to)} title={hop.to}>
                  {nodeLabel(hop.to)}
                </Link>
                {hop.masked && <div className="small">masked</div>}
                {hop.transfer && <div className="small">transfer between jurisdictions</div>}
              </td>
              <td>
                <Link to={paths.node(hop.job)} title={hop.job}>
                  {nodeLabel(hop.job)}
                </Link>
              </td>
              <td className="small">
                {hop.runs.count}: {formatTime(hop.runs.first)} to {formatTime(hop.runs.last)}
              </td>
              <td className="small">
                <ul
                  className="link-list"
                  aria-label={`Runs of ${nodeLabel(hop.from)} → ${nodeLabel(hop.to)}`}
                >
                  {hop.runs.samples.map((sample) => (
                    <li key={sample.runId}>
                      <Link className="mono" to={paths.run(sample.runId)}>
                        {sample.runId}
                      </Link>
                      <div className="muted">
                        read event {sample.readEventId ?? '—'}, write event {sample.writeEventId ?? '—'}
                      </div>
                    </li>
                  ))}
                </ul>
              </td>
              <td className="mono small">{hop.jobVersions.join(', ') || '—'}</td>
              <td className="small">
                {hop.transformations
                  .map((t) => `${t.type}/${t.subtype}${t.masking ? ' (masking)' : ''}`)
                  .join(', ') || '—'}
              </td>
              <td className="small">
                {hop.sql.map((sql, index) => (
                  <details key={index}>
                    <summary>SQL{hop.sql.length > 1 ? ` ${index + 1}` : ''}</summary>
                    <SqlCode sql={sql} />
                  </details>
                ))}
                {hop.sourceCode.map((location) => (
                  <div key={location} className="mono">
                    {location}
                  </div>
                ))}
                {hop.sql.length + hop.sourceCode.length === 0 && '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The server's report of the same question, saved as a file; the server renders each format. */
function JourneyExports({ params, start }: { params: JourneyParams; start: string }) {
  const [failure, setFailure] = useState<Error | undefined>();
  const name = `journey-${nodeLabel(start).replace(/[^\w.-]+/g, '_')}`;
  const save = async (format: (typeof exports)[number]) => {
    setFailure(undefined);
    try {
      const text = await api.journeyReport(params, format.format);
      download(`${name}.${format.extension}`, format.type, text);
    } catch (error) {
      setFailure(error instanceof Error ? error : new Error(String(error)));
    }
  };
  return (
    <div className="journey__exports" role="group" aria-label="Export the report">
      {exports.map((format) => (
        <button
          key={format.format}
          type="button"
          className="button button--quiet"
          onClick={() => void save(format)}
        >
          Export {format.label}
        </button>
      ))}
      {failure && <ErrorMessage error={failure} />}
    </div>
  );
}
