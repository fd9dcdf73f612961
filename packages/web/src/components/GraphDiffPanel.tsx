import { Link } from 'react-router';
import { api } from '../api/client.js';
import type { GraphDiffResult } from '../api/analysis.js';
import type { Direction, RunState } from '../api/types.js';
import { formatDuration, formatTime } from '../format.js';
import { AddedRemoved } from './AddedRemoved.js';
import { FlippedAssertions } from './FlippedAssertions.js';
import { TableHead } from './TableHead.js';
import { useApi } from '../hooks/useApi.js';
import { nodeLabel, paths } from '../paths.js';
import { RunStateBadge } from './RunStateBadge.js';
import { SchemaChangeList } from './SchemaChangeList.js';
import { Async } from './States.js';

const count = (n: number | null) => (n === null ? '—' : n.toLocaleString('en-US'));

/** The server's graph diff (`/api/v1/analysis/graph-diff`) of a node's lineage between `from` and now. */
export function GraphDiffPanel(props: { nodeId: string; from: string; depth: number; direction: Direction }) {
  const { nodeId, from, depth, direction } = props;
  const diff = useApi(`graph-diff:${nodeId}:${from}:${depth}:${direction}`, (signal) =>
    api.graphDiff({ nodeId, from, depth, direction }, signal),
  );
  return (
    <section className="card graph-diff" aria-label="Changes since then">
      <Async state={diff} what="the changes">
        {(result) => <GraphDiff result={result} />}
      </Async>
    </section>
  );
}

function GraphDiff({ result }: { result: GraphDiffResult }) {
  const { nodes, edges, datasets, jobs, assertions } = result;
  const nothing =
    nodes.added.length + nodes.removed.length + edges.added.length + edges.removed.length === 0 &&
    datasets.length + jobs.length + assertions.length === 0;
  return (
    <>
      <h2>
        Changes from {formatTime(result.from)} to {formatTime(result.to)}
      </h2>
      <p className="muted">
        {nothing
          ? 'Nothing changed in this lineage between the two times.'
          : `${nodes.added.length} nodes added, ${nodes.removed.length} removed, ${nodes.unchanged} unchanged; ` +
            `${edges.added.length} edges added, ${edges.removed.length} removed.`}
      </p>
      <div className="graph-diff__grid">
        {(nodes.added.length > 0 || nodes.removed.length > 0) && (
          <div>
            <h3>Nodes</h3>
            <AddedRemoved
              label="Nodes added and removed"
              added={nodes.added}
              removed={nodes.removed}
              show={(id, side) =>
                side === 'added' ? <Link to={paths.node(id)}>{nodeLabel(id)}</Link> : nodeLabel(id)
              }
            />
          </div>
        )}
        {(edges.added.length > 0 || edges.removed.length > 0) && (
          <div>
            <h3>Edges</h3>
            <ul className="link-list" aria-label="Edges added and removed">
              {edges.added.map((e) => (
                <li key={`+${e.origin}>${e.destination}`}>
                  <span className="diff-word diff-word--added">+ added</span> {nodeLabel(e.origin)} →{' '}
                  {nodeLabel(e.destination)}
                </li>
              ))}
              {edges.removed.map((e) => (
                <li key={`-${e.origin}>${e.destination}`}>
                  <span className="diff-word diff-word--removed">− removed</span> {nodeLabel(e.origin)} →{' '}
                  {nodeLabel(e.destination)}
                </li>
              ))}
            </ul>
          </div>
        )}
        {jobs.length > 0 && (
          <div>
            <h3>Jobs whose latest run changed</h3>
            <table className="table table--compact" aria-label="Jobs whose latest run changed">
              <TableHead columns={['Job', 'Then', 'Now', 'Duration']} />
              <tbody>
                {jobs.map((job) => (
                  <tr key={job.job}>
                    <td>
                      <Link to={paths.node(job.job)}>{nodeLabel(job.job)}</Link>
                    </td>
                    <td>{job.from ? <RunStateBadge state={job.from.state as RunState} /> : '—'}</td>
                    <td>{job.to ? <RunStateBadge state={job.to.state as RunState} /> : '—'}</td>
                    <td>
                      {formatDuration(job.duration.from)} → {formatDuration(job.duration.to)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {datasets.length > 0 && (
          <div>
            <h3>Datasets that changed</h3>
            <ul className="link-list" aria-label="Datasets that changed">
              {datasets.map((d) => (
                <li key={d.dataset}>
                  <Link to={paths.node(d.dataset)}>{nodeLabel(d.dataset)}</Link>{' '}
                  <span className="muted small">
                    rows {count(d.rowCount.from)} → {count(d.rowCount.to)}
                  </span>
                  {d.schemaChange && (
                    <SchemaChangeList change={d.schemaChange} label={`Schema of ${d.dataset}`} />
                  )}
                </li>
              ))}
            </ul>
          </div>
        )}
        {assertions.length > 0 && (
          <div>
            <h3>Assertions that flipped</h3>
            <FlippedAssertions assertions={assertions} />
          </div>
        )}
      </div>
    </>
  );
}
