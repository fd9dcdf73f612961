import { statusLabels } from '../api/incidents.js';
import type { IncidentStatus } from '../api/types.js';

/** An incident's status as a pill in words; open is red like a failed run, acknowledged amber, resolved green. */
export function IncidentStatusBadge({ status }: { status: IncidentStatus }) {
  return <span className={`badge badge--incident-${status}`}>{statusLabels[status].toUpperCase()}</span>;
}
