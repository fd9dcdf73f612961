import { Link } from 'react-router';
import { brokenByPhrase, brokenDatasets } from '../api/incidents.js';
import { useUnresolvedIncidents } from '../hooks/useIncidents.js';
import { paths } from '../paths.js';

/** Datasets listed at most; the incidents page has the rest. */
const SHOWN = 10;

/**
 * The top of the home page while something is broken: the datasets the unresolved incidents break, furthest
 * downstream first (the dashboards and marts people notice), each with what breaks it, linking to the incident.
 * Nothing at all when no incident is unresolved, while they load, or when they cannot be read (a server without
 * alerts configured simply has none).
 */
export function BrokenDownstream() {
  const incidents = useUnresolvedIncidents();
  if (incidents.status !== 'ready' || incidents.data.length === 0) return null;
  const broken = brokenDatasets(incidents.data);
  const reaching = new Set(broken.flatMap((d) => d.breaks.map((b) => b.incident.id)));
  const reachingNothing = incidents.data.filter((incident) => !reaching.has(incident.id));
  const unresolved = incidents.data.length;
  return (
    <section className="card card--breaking home__broken" aria-label="Broken downstream">
      <div className="card__header">
        <h2>Broken downstream</h2>
        <Link to={paths.incidents()}>
          {unresolved} unresolved {unresolved === 1 ? 'incident' : 'incidents'}
        </Link>
      </div>
      {broken.length > 0 && (
        <ul className="broken-list" aria-label="Broken datasets">
          {broken.slice(0, SHOWN).map((dataset) => (
            <li key={dataset.nodeId}>
              <Link className="broken-list__name" to={paths.dataset(dataset.namespace, dataset.name)}>
                {dataset.name}
              </Link>{' '}
              <span className="muted small">{dataset.namespace}</span> —{' '}
              {dataset.breaks.map(({ incident, depth }, index) => (
                <span key={incident.id}>
                  {index > 0 && '; '}
                  <Link to={paths.incident(incident.id)}>{brokenByPhrase(incident, depth)}</Link>
                  {incident.status === 'acknowledged' && (
                    <span className="muted small">
                      {' '}
                      (acknowledged{incident.acknowledgedBy ? ` by ${incident.acknowledgedBy}` : ''})
                    </span>
                  )}
                </span>
              ))}
            </li>
          ))}
        </ul>
      )}
      {broken.length > SHOWN && (
        <p className="muted small">
          And {broken.length - SHOWN} more datasets: <Link to={paths.incidents()}>see the incidents</Link>.
        </p>
      )}
      {reachingNothing.length > 0 && (
        <ul className="broken-list" aria-label="Incidents that break no dataset">
          {reachingNothing.map((incident) => (
            <li key={incident.id}>
              <Link to={paths.incident(incident.id)}>{incident.headline}</Link>{' '}
              <span className="muted small">(no dataset downstream is known)</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
