import { Link } from 'react-router';
import type { RootCauseResult } from '../api/analysis.js';
import { isRedacted } from '../api/redacted.js';
import type { DatasetNode, JobNode } from '../api/types.js';
import { formatDuration, formatTime } from '../format.js';
import { jobRunLabel } from '../graph/lineage-model.js';
import type { ApiState } from '../hooks/useApi.js';
import { paths } from '../paths.js';
import { RootCauses } from './RootCause.js';
import { RunStateBadge } from './RunStateBadge.js';

export interface NodePanelProps {
  readonly node: DatasetNode | JobNode;
  /** The server's root cause of each of `targets`. */
  readonly rootCause: ApiState<RootCauseResult[]>;
  /** The datasets root cause starts at: the node itself, or a job's outputs. */
  readonly targets: readonly string[];
  /** Set when the graph shows the past. */
  readonly asOf: string | undefined;
  readonly pathTo: (DatasetNode | JobNode) | undefined;
  readonly pathLength: number;
  readonly columnsShown: boolean;
  readonly onToggleColumns: () => void;
  readonly onClearPath: () => void;
  /** The URL of the lineage centred on this node. */
  readonly recenterUrl: string;
}

/** The side panel of the graph: the selected node, the server's root cause of it, and the path being shown. */
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
            {isRedacted(node) ? (
              <span className="muted">{jobRunLabel(node)}</span>
            ) : (
              <RunStateBadge
                state={node.data.latestRun?.state}
                stale={node.data.latestRun?.stale === true}
                contradictory={node.data.latestRun?.contradictoryStates}
              />
            )}
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
        <Link className="button button--quiet" to={paths.impact(node.id)}>
          Impact
        </Link>
        {!isJob && node.data.fields.length > 0 && (
          <button type="button" className="button button--quiet" onClick={props.onToggleColumns}>
            {props.columnsShown ? 'Hide columns' : 'Show columns'}
          </button>
        )}
      </div>
      <section className="panel__section">
        <h3>Root cause</h3>
        {props.asOf ? (
          <p className="muted">Root cause is the server&apos;s answer about now: move the timeline to now.</p>
        ) : props.targets.length === 0 ? (
          <p className="muted">This job writes no dataset in the graph; root cause starts at a dataset.</p>
        ) : (
          <RootCauses state={props.rootCause} />
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
