import { Link } from 'react-router';
import { paths } from '../paths.js';

/** The head of a dataset or job page: kind, name, namespace, and the lineage and impact of the node. */
export function PageHeader(props: { kind: string; name: string; namespace: string; nodeId: string }) {
  return (
    <div className="page__header">
      <div>
        <div className="page__kind">{props.kind}</div>
        <h1>{props.name}</h1>
        <div className="muted">{props.namespace}</div>
      </div>
      <div className="page__actions">
        <Link className="button" to={paths.lineage(props.nodeId, { depth: 3 })}>
          Lineage
        </Link>
        <Link className="button button--quiet" to={paths.impact(props.nodeId)}>
          Impact
        </Link>
      </div>
    </div>
  );
}
