import { Link } from 'react-router';
import type { DatasetNode, JobNode } from '../api/types.js';
import { formatDuration, formatTime } from '../format.js';
import { paths } from '../paths.js';
import { RunStateBadge } from './RunStateBadge.js';

export interface NodePanelProps {
  readonly node: DatasetNode | JobNode;
  readonly failing: readonly JobNode[];
  readonly pathTo: (DatasetNode | JobNode) | undefined;
  readonly pathLength: number;
  readonly columnsShown: boolean;
  readonly onToggleColumns: () => void;
  readonly onClearPath: () => void;
  /** The URL of the lineage centred on this node. */
  readonly recenterUrl: string;
}

/** The side panel of the graph: the selected node, its failing upstream jobs, and the path being shown. */
export function NodePanel(props: NodePanelProps) {
  const { node } = props;
  const isJob = node.type === 'JOB';
  return (
    <aside className="panel" aria-label="Selected node">
      <div className="panel__kind">{isJob ? 'Job' : 'Dataset'}</div>
      <h2 className="panel__title">{node.data.name}</h2>
      <div className="panel__namespace">{node.data.namespace}</div>
      {isJob && (
        <dl className="facts">
          <dt>Latest run</dt>
          <dd>
            <RunStateBadge state={node.data.latestRun?.state} />
          </dd>
          <dt>Started</dt>
          <dd>{formatTime(node.data.latestRun?.startedAt)}</dd>
          <dt>Duration</dt>
          <dd>{formatDuration(node.data.latestRun?.durationMs)}</dd>
        </dl>
      )}
      {!isJob && node.data.description && <p>{node.data.description}</p>}
      <div className="panel__actions">
        <Link
          className="button"
          to={
            isJob
              ? paths.job(node.data.namespace, node.data.name)
              : paths.dataset(node.data.namespace, node.data.name)
          }
        >
          Open {isJob ? 'job' : 'dataset'} page
        </Link>
        <Link className="button button--quiet" to={props.recenterUrl}>
          Centre lineage here
        </Link>
        {!isJob && node.data.fields.length > 0 && (
          <button type="button" className="button button--quiet" onClick={props.onToggleColumns}>
            {props.columnsShown ? 'Hide columns' : 'Show columns'}
          </button>
        )}
      </div>
      <section className="panel__section">
        <h3>Failed upstream</h3>
        {props.failing.length === 0 ? (
          <p className="muted">No job upstream of this {isJob ? 'job' : 'dataset'} failed its latest run.</p>
        ) : (
          <ul className="failing-list" aria-label="Failed upstream jobs">
            {props.failing.map((job) => (
              <li key={job.id}>
                <RunStateBadge state={job.data.latestRun?.state} />{' '}
                <Link to={paths.job(job.data.namespace, job.data.name)}>{job.data.name}</Link>
                <div className="muted small">
                  {job.data.namespace} ·{' '}
                  {formatTime(job.data.latestRun?.endedAt ?? job.data.latestRun?.updatedAt)}
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="panel__section">
        <h3>Path</h3>
        {props.pathTo ? (
          <p>
            {props.pathLength > 0
              ? `${props.pathLength} nodes between this and ${props.pathTo.data.name}.`
              : `No path between this and ${props.pathTo.data.name}.`}{' '}
            <button type="button" className="link-button" onClick={props.onClearPath}>
              Clear
            </button>
          </p>
        ) : (
          <p className="muted">Shift-click another node to highlight the path to it.</p>
        )}
      </section>
    </aside>
  );
}
