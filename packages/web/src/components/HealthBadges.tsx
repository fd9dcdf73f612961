import { Link } from 'react-router';
import { hops, incidentsOfNode, statusLabels } from '../api/incidents.js';
import { formatAgo } from '../format.js';
import { useUnresolvedIncidents } from '../hooks/useIncidents.js';
import { nodeLabel, paths } from '../paths.js';

/**
 * The unresolved incidents that break a dataset or job (`nodeIds`: a dataset and the one it is an alias of), rooted
 * at it or reaching it downstream, each linking to its incident. Nothing at all when there are none, while they
 * load, or when they cannot be read: the page's own data matters more, and a server without alerts configured
 * has no incidents.
 */
export function HealthBadges({ nodeIds, what }: { nodeIds: readonly string[]; what: 'dataset' | 'job' }) {
  const incidents = useUnresolvedIncidents();
  if (incidents.status !== 'ready') return null;
  const found = incidentsOfNode(incidents.data, nodeIds);
  if (found.length === 0) return null;
  return (
    <section className="alert alert--failed health" aria-label="Health">
      <ul className="plain-list">
        {found.map(({ incident, depth, columns }) => (
          <li key={incident.id} className="health__item">
            <Link className="health__badge" to={paths.incident(incident.id)}>
              <span aria-hidden="true">✕</span> Broken: {incident.headline}
            </Link>{' '}
            <span className="muted small">
              {depth === 0
                ? `this ${what} is the root cause`
                : `${hops(depth)} downstream of ${nodeLabel(incident.root)}`}
              {columns && columns.length > 0 ? ` (${columns.join(', ')})` : ''} ·{' '}
              {statusLabels[incident.status].toLowerCase()}
              {incident.acknowledgedBy ? ` by ${incident.acknowledgedBy}` : ''} · opened{' '}
              {formatAgo(incident.openedAt)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
