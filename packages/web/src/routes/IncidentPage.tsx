import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError, api } from '../api/client.js';
import {
  addressText,
  deliveryText,
  hops,
  impactedInOrder,
  signalDetail,
  signalLabels,
  transitionLabels,
  type IncidentAction,
} from '../api/incidents.js';
import type {
  Incident,
  IncidentDelivery,
  IncidentDetail,
  IncidentSignal,
  IncidentTransition,
} from '../api/types.js';
import { IncidentStatusBadge } from '../components/IncidentStatusBadge.js';
import { Async, Empty } from '../components/States.js';
import { TableHead } from '../components/TableHead.js';
import { formatTime } from '../format.js';
import { useApi, type ApiState } from '../hooks/useApi.js';
import { fromParam, nodeLabel, paths } from '../paths.js';

/**
 * `/incidents/:id` (the address the server's messages link to): what broke, what it breaks downstream, who is
 * told and why, the signals grouped into it, and its timeline with each delivery; acknowledge and resolve.
 */
export function IncidentPage() {
  const id = fromParam(useParams().id);
  // Bumped after an action, to read the incident again.
  const [version, setVersion] = useState(0);
  const detail = useIncidentDetail(id, version);
  return (
    <Async state={detail} what="the incident" notFound={`No incident ${id} (or none you may read).`}>
      {(data) => (
        <IncidentView key={data.incident.id} detail={data} onChanged={() => setVersion((v) => v + 1)} />
      )}
    </Async>
  );
}

/**
 * The incident, read again for each `version` while the last answer stays on screen: the page does not blank,
 * and what the actions said (a 409's message) stays beside the new state.
 */
function useIncidentDetail(id: string, version: number): ApiState<IncidentDetail> {
  const state = useApi(`incident:${id}:${version}`, (signal) => api.incident(id, signal));
  const [last, setLast] = useState<{ id: string; data: IncidentDetail }>();
  useEffect(() => {
    if (state.status === 'ready') setLast({ id, data: state.data });
  }, [state, id]);
  return state.status === 'loading' && last?.id === id ? { status: 'ready', data: last.data } : state;
}

function IncidentView({ detail, onChanged }: { detail: IncidentDetail; onChanged: () => void }) {
  const { incident, signals, timeline } = detail;
  return (
    <div className="page">
      <div className="page__header">
        <div>
          <div className="page__kind">Incident · {signalLabels[incident.signal]}</div>
          <h1>{incident.headline}</h1>
          <div className="muted">
            <IncidentStatusBadge status={incident.status} /> Opened {formatTime(incident.openedAt)}
            {incident.acknowledgedAt &&
              ` · acknowledged ${formatTime(incident.acknowledgedAt)}${incident.acknowledgedBy ? ` by ${incident.acknowledgedBy}` : ''}`}
            {incident.resolvedAt &&
              ` · resolved ${formatTime(incident.resolvedAt)}${incident.resolvedBy ? ` by ${incident.resolvedBy}` : ''}`}
            {` · updated ${formatTime(incident.updatedAt)}`}
          </div>
        </div>
        <div className="page__actions">
          <Link className="button" to={paths.impact(incident.root)}>
            Impact
          </Link>
          <Link
            className="button button--quiet"
            to={paths.lineage(incident.root, { depth: 3, direction: 'downstream' })}
          >
            Lineage
          </Link>
        </div>
      </div>
      <IncidentActions incident={incident} onChanged={onChanged} />
      <div className="two-columns">
        <section className="card" aria-label="Root cause">
          <h2>Root cause</h2>
          <RootCauseFacts incident={incident} />
        </section>
        <section className="card" aria-label="Who is told">
          <h2>Who is told</h2>
          <Recipients incident={incident} />
        </section>
      </div>
      <section className="card">
        <h2>What it breaks downstream, nearest first</h2>
        <Impacted incident={incident} />
      </section>
      <section className="card">
        <h2>Signals</h2>
        <Signals signals={signals} />
      </section>
      <section className="card">
        <h2>Timeline</h2>
        <Timeline timeline={timeline} />
      </section>
    </div>
  );
}

const actionLabels: Record<IncidentAction, { verb: string; done: string }> = {
  acknowledge: { verb: 'Acknowledge', done: 'Acknowledged' },
  resolve: { verb: 'Resolve', done: 'Resolved' },
};

/** Acknowledge (someone is on it) and resolve (it is over), with an optional note the recipients are told. */
function IncidentActions({ incident, onChanged }: { incident: Incident; onChanged: () => void }) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState<IncidentAction>();
  const [outcome, setOutcome] = useState<{ action: IncidentAction; error?: Error }>();
  const act = async (action: IncidentAction) => {
    setBusy(action);
    setOutcome(undefined);
    try {
      await api.actOnIncident(incident.id, action, note.trim() === '' ? undefined : note.trim());
      setNote('');
      setOutcome({ action });
    } catch (error) {
      setOutcome({ action, error: error instanceof Error ? error : new Error(String(error)) });
    } finally {
      setBusy(undefined);
      // After a refusal too: a 409 means the incident changed meanwhile, and the page should show how.
      onChanged();
    }
  };
  const actions: IncidentAction[] =
    incident.status === 'open'
      ? ['acknowledge', 'resolve']
      : incident.status === 'acknowledged'
        ? ['resolve']
        : [];
  return (
    <section className="card incident-actions" aria-label="Actions">
      {actions.length > 0 ? (
        <>
          <label className="incident-actions__label" htmlFor="incident-note">
            Note <span className="muted small">(optional; sent to the recipients with the change)</span>
          </label>
          <textarea
            id="incident-note"
            className="incident-actions__note"
            rows={2}
            maxLength={2000}
            value={note}
            onChange={(event) => setNote(event.target.value)}
          />
          <div className="incident-actions__buttons">
            {actions.map((action, index) => (
              <button
                key={action}
                type="button"
                className={index === 0 ? 'button' : 'button button--quiet'}
                disabled={busy !== undefined}
                onClick={() => void act(action)}
              >
                {busy === action ? `${actionLabels[action].verb}…` : actionLabels[action].verb}
              </button>
            ))}
          </div>
        </>
      ) : (
        <p className="muted">Resolved: nothing left to do. A new failure of its root opens a new incident.</p>
      )}
      {outcome && !outcome.error && (
        <p role="status">
          {actionLabels[outcome.action].done};{' '}
          {incident.recipients.length === 0 ? 'nobody' : 'its recipients'} will be told.
        </p>
      )}
      {outcome?.error && <ActionError action={outcome.action} error={outcome.error} />}
    </section>
  );
}

function ActionError({ action, error }: { action: IncidentAction; error: Error }) {
  const conflict = error instanceof ApiError && error.status === 409;
  return (
    <div className="state state--error" role="alert">
      <strong>
        {conflict
          ? `Not ${actionLabels[action].done.toLowerCase()}: the incident changed meanwhile.`
          : `Could not ${action} the incident.`}
      </strong>
      <p>{error.message}</p>
      {conflict && <p>The page now shows it as it is.</p>}
    </div>
  );
}

/** The root cause: the job and its run, or the dataset and its failing assertion, and the error. */
function RootCauseFacts({ incident }: { incident: Incident }) {
  const root = incident.rootCause;
  const run = root.runId ? (
    <Link className="mono small" to={paths.run(root.runId)}>
      {root.runId}
    </Link>
  ) : (
    '—'
  );
  return (
    <>
      <dl className="facts">
        {root.kind === 'job' ? (
          <>
            <dt>Job</dt>
            <dd>
              <Link to={paths.job(root.job.namespace, root.job.name)}>{root.job.name}</Link>{' '}
              <span className="muted small">{root.job.namespace}</span>
            </dd>
            <dt>Run</dt>
            <dd>{run}</dd>
            {root.expectedBy && (
              <>
                <dt>Due by</dt>
                <dd>{formatTime(root.expectedBy)}</dd>
              </>
            )}
          </>
        ) : (
          <>
            <dt>Dataset</dt>
            <dd>
              <Link to={paths.dataset(root.dataset.namespace, root.dataset.name)}>{root.dataset.name}</Link>{' '}
              <span className="muted small">{root.dataset.namespace}</span>
            </dd>
            <dt>Assertion</dt>
            <dd className="mono">
              {root.assertion.name}
              {root.assertion.column ? `(${root.assertion.column})` : ''}
            </dd>
            <dt>Reported by</dt>
            <dd>
              {root.job ? (
                <Link to={paths.job(root.job.namespace, root.job.name)}>{root.job.name}</Link>
              ) : (
                '—'
              )}
            </dd>
            <dt>Run</dt>
            <dd>{run}</dd>
          </>
        )}
      </dl>
      {root.errorMessage ? (
        <pre className="code code--error" aria-label="Error message">
          {root.errorMessage}
        </pre>
      ) : (
        <p className="muted small">No error message was reported.</p>
      )}
    </>
  );
}

/** Each address told, with every reason it has. */
function Recipients({ incident }: { incident: Incident }) {
  if (incident.recipients.length === 0)
    return (
      <Empty>
        Nobody is told: no owner the alerts configuration maps to a channel owns the root or anything it
        breaks, and no rule names a channel.
      </Empty>
    );
  return (
    <ul className="recipient-list" aria-label="Recipients">
      {incident.recipients.map((recipient) => {
        const address = addressText(recipient.address);
        return (
          <li key={address}>
            <strong>{address}</strong>
            <ul aria-label={`Why ${address} is told`}>
              {recipient.why.map((text) => (
                <li key={text}>{text}</li>
              ))}
            </ul>
          </li>
        );
      })}
    </ul>
  );
}

function Impacted({ incident }: { incident: Incident }) {
  const entries = impactedInOrder(incident);
  if (entries.length === 0)
    return (
      <p className="muted">Nothing downstream of the root is known: it breaks no other dataset or job.</p>
    );
  return (
    <>
      <table className="table" aria-label="Impacted">
        <TableHead columns={['Hops', 'Kind', 'Name', 'Namespace', 'Columns']} />
        <tbody>
          {entries.map(({ type, nodeId, node }) => (
            <tr key={nodeId}>
              <td className="impacted__hops">{hops(node.depth)}</td>
              <td>{type === 'dataset' ? 'Dataset' : 'Job'}</td>
              <td>
                <Link to={paths.node(nodeId)}>{node.name}</Link>
              </td>
              <td className="muted small">{node.namespace}</td>
              <td className="mono small">{node.columns?.join(', ') ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="small">
        <Link to={paths.impact(incident.root)}>Everything downstream of {nodeLabel(incident.root)}</Link> in
        the impact view.
      </p>
    </>
  );
}

/** The failures grouped into the incident: its root's, and those that follow from it. */
function Signals({ signals }: { signals: readonly IncidentSignal[] }) {
  if (signals.length === 0) return <p className="muted">No signal is recorded.</p>;
  return (
    <table className="table" aria-label="Signals">
      <TableHead columns={['Signal', 'On', 'At', 'Detail']} />
      <tbody>
        {signals.map((signal) => {
          const detail = signalDetail(signal);
          return (
            <tr key={signal.key}>
              <td>{signalLabels[signal.kind]}</td>
              <td>
                <Link to={paths.node(signal.node)}>{nodeLabel(signal.node)}</Link>
              </td>
              <td>{formatTime(signal.at)}</td>
              <td>
                {detail.assertion && <div className="mono small">{detail.assertion}</div>}
                {detail.reportedBy && (
                  <div className="small">
                    reported by <Link to={paths.node(detail.reportedBy)}>{nodeLabel(detail.reportedBy)}</Link>
                  </div>
                )}
                {detail.runId && (
                  <div className="small">
                    run{' '}
                    <Link className="mono" to={paths.run(detail.runId)}>
                      {detail.runId}
                    </Link>
                  </div>
                )}
                {detail.errorMessage && (
                  <pre className="code code--error cause__error">{detail.errorMessage}</pre>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const deliveryMarks: Record<IncidentDelivery['state'], string> = { sent: '✓', pending: '…', 'given-up': '✕' };

/** The transitions, oldest first, each with what it sent through each channel. */
function Timeline({ timeline }: { timeline: readonly IncidentTransition[] }) {
  return (
    <ol className="timeline" aria-label="Timeline">
      {timeline.map((transition) => {
        const label = `${transitionLabels[transition.kind]}${transition.by ? ` by ${transition.by}` : ''}`;
        return (
          <li key={transition.id} className="timeline__item">
            <div>
              <strong>{label}</strong> <span className="muted small">{formatTime(transition.at)}</span>
              {transition.throttled && (
                <span
                  className="badge badge--stale"
                  title="Recorded but not sent: within the rules' throttle"
                >
                  THROTTLED
                </span>
              )}
            </div>
            {transition.note && <p className="timeline__note">{transition.note}</p>}
            {transition.deliveries.length === 0 ? (
              <p className="muted small">
                {transition.throttled
                  ? 'Not sent: within the throttle of its rules.'
                  : 'Nothing sent: no channel reaches a recipient.'}
              </p>
            ) : (
              <ul className="plain-list delivery-list" aria-label={`Deliveries: ${label}`}>
                {transition.deliveries.map((delivery) => (
                  <li key={delivery.channel}>
                    <span className={`delivery delivery--${delivery.state}`}>
                      <span aria-hidden="true">{deliveryMarks[delivery.state]}</span> channel{' '}
                      {delivery.channel}
                    </span>
                    : {deliveryText(delivery, formatTime)}
                  </li>
                ))}
              </ul>
            )}
          </li>
        );
      })}
    </ol>
  );
}
