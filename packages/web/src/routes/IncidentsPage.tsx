import { Link, useNavigate, useSearchParams } from 'react-router';
import { api } from '../api/client.js';
import { impactedSummary, recipientsSummary, signalLabels, type IncidentFilter } from '../api/incidents.js';
import type { Incident } from '../api/types.js';
import { IncidentStatusBadge } from '../components/IncidentStatusBadge.js';
import { Async, Empty } from '../components/States.js';
import { TableHead } from '../components/TableHead.js';
import { formatAgo, formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { nodeLabel, parseNodeId, paths } from '../paths.js';

const filters: { value: IncidentFilter; label: string }[] = [
  { value: 'unresolved', label: 'Unresolved' },
  { value: 'resolved', label: 'Resolved' },
  { value: 'all', label: 'All' },
];

/** Rows one page reads; the count says when there are more. */
const LIMIT = 200;

/** `/incidents?status=`: the incidents newest first, unresolved ones unless the filter says otherwise. */
export function IncidentsPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const status = filters.find((f) => f.value === params.get('status'))?.value ?? 'unresolved';
  const incidents = useApi(`incidents:${status}`, (signal) =>
    api.incidents({ status, limit: LIMIT }, signal),
  );
  return (
    <div className="page">
      <div className="page__header">
        <div>
          <div className="page__kind">Incidents</div>
          <h1>{filters.find((f) => f.value === status)!.label} incidents</h1>
          <div className="muted">
            One per broken root cause, with what it breaks downstream and who was told.
          </div>
        </div>
        <div className="segmented" role="group" aria-label="Status">
          {filters.map((f) => (
            <button
              key={f.value}
              type="button"
              aria-pressed={status === f.value}
              onClick={() => void navigate(paths.incidents(f.value), { replace: true })}
            >
              {f.label}
            </button>
          ))}
        </div>
      </div>
      <section className="card">
        <Async state={incidents} what="the incidents">
          {({ incidents: list, totalCount }) =>
            list.length === 0 ? (
              <Empty>
                {status === 'all' ? 'No incidents.' : `No ${status} incidents.`} An incident opens when a run
                fails or an assertion fails under a rule of the server's alerts configuration (
                <code>headwater serve --alerts-config FILE</code>).
              </Empty>
            ) : (
              <>
                {totalCount > list.length && (
                  <p className="muted small">
                    The newest {list.length} of {totalCount}.
                  </p>
                )}
                <IncidentsTable incidents={list} />
              </>
            )
          }
        </Async>
      </section>
    </div>
  );
}

function IncidentsTable({ incidents }: { incidents: readonly Incident[] }) {
  return (
    <table className="table" aria-label="Incidents">
      <TableHead
        columns={['Status', 'Incident', 'Signal', 'Root', 'Opened', 'Updated', 'Impacted', 'Told']}
      />
      <tbody>
        {incidents.map((incident) => (
          <tr key={incident.id}>
            <td>
              <IncidentStatusBadge status={incident.status} />
            </td>
            <td>
              <Link to={paths.incident(incident.id)}>{incident.headline}</Link>
            </td>
            <td>{signalLabels[incident.signal]}</td>
            <td>
              <Link to={paths.node(incident.root)}>{nodeLabel(incident.root)}</Link>
              <div className="muted small">
                {parseNodeId(incident.root)?.type ?? ''} in {incident.namespace}
              </div>
            </td>
            <td>
              {formatTime(incident.openedAt)}
              <div className="muted small">{formatAgo(incident.openedAt)}</div>
            </td>
            <td>
              {formatTime(incident.updatedAt)}
              <div className="muted small">{formatAgo(incident.updatedAt)}</div>
            </td>
            <td>{impactedSummary(incident)}</td>
            <td>{recipientsSummary(incident.recipients)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
