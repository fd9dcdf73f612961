import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../api/client.js';
import type { ImpactChange, ImpactLevel, ImpactResult } from '../api/analysis.js';
import { impactCommandLine, impactCsv } from '../api/impact-export.js';
import { TableHead } from '../components/TableHead.js';
import { Async, Empty } from '../components/States.js';
import { download } from '../download.js';
import { useApi } from '../hooks/useApi.js';
import { nodeLabel, paths } from '../paths.js';

const changes: { value: ImpactChange; label: string }[] = [
  { value: 'latest', label: 'Latest change' },
  { value: 'removed', label: 'Removed' },
  { value: 'typeChanged', label: 'Type changed' },
  { value: 'none', label: 'No change' },
];

/** Level words with a mark, so the level never rests on colour. */
const levels: Record<ImpactLevel, string> = {
  breaking: '✕ breaking',
  direct: '● direct',
  indirect: '○ indirect',
};

const column = (fieldNodeId: string) => fieldNodeId.slice(fieldNodeId.lastIndexOf(':') + 1);

/** `/impact?node=&change=`: the server's impact analysis of a dataset, column or job. */
export function ImpactPage() {
  const [params, setParams] = useSearchParams();
  const nodeId = params.get('node') ?? '';
  const change = changes.find((c) => c.value === params.get('change'))?.value ?? 'latest';
  const impact = useApi(`impact:${nodeId}:${change}`, (signal) => api.impact(nodeId, change, signal));
  if (!nodeId) return <Empty>Choose a dataset, column or job: its page has an Impact button.</Empty>;
  return (
    <div className="page">
      <div className="page__header">
        <div>
          <div className="page__kind">Impact</div>
          <h1>{nodeLabel(nodeId)}</h1>
          <div className="muted mono small">{nodeId}</div>
        </div>
        <div className="segmented" role="group" aria-label="Change to consider">
          {changes.map((c) => (
            <button
              key={c.value}
              type="button"
              aria-pressed={change === c.value}
              onClick={() =>
                setParams(
                  (previous) => {
                    const next = new URLSearchParams(previous);
                    next.set('change', c.value);
                    return next;
                  },
                  { replace: true },
                )
              }
            >
              {c.label}
            </button>
          ))}
        </div>
      </div>
      <Async state={impact} what="the impact" notFound={`Nothing named ${nodeId} is known to this server.`}>
        {(result) => <ImpactView result={result} />}
      </Async>
    </div>
  );
}

function ImpactView({ result }: { result: ImpactResult }) {
  const counts = { breaking: 0, direct: 0, indirect: 0 };
  for (const node of result.nodes) counts[node.level]++;
  const fileName = `impact-${nodeLabel(result.start).replace(/[^\w.-]+/g, '_')}`;
  const command = impactCommandLine(result.start, result.change, location.origin);
  const [copied, setCopied] = useState(false);
  return (
    <>
      <section className={`card${result.breaking ? ' card--breaking' : ''}`} aria-label="Impact summary">
        <p>
          <strong>
            {result.nodes.length === 0
              ? 'Nothing is downstream.'
              : `${result.nodes.length} downstream: ${counts.breaking} breaking, ${counts.direct} direct, ${counts.indirect} indirect.`}
          </strong>{' '}
          {result.breaking ? 'This change breaks downstream columns.' : 'No downstream column breaks.'}
        </p>
        {result.changes.map((c) => (
          <p key={c.dataset} className="small">
            Change considered on <Link to={paths.node(c.dataset)}>{nodeLabel(c.dataset)}</Link>:{' '}
            <span className="mono">
              {[
                ...c.added.map((x) => `+${x.name}`),
                ...c.removed.map((x) => `−${x.name}`),
                ...c.typeChanged.map((x) => `~${x.name}`),
              ].join(' ') || 'no column changes'}
            </span>
            {c.breaking ? ' (breaking)' : ''}
          </p>
        ))}
        <div className="impact__exports">
          <button
            type="button"
            className="button button--quiet"
            onClick={() => download(`${fileName}.csv`, 'text/csv', impactCsv(result))}
          >
            Export CSV
          </button>
          <button
            type="button"
            className="button button--quiet"
            onClick={() =>
              download(`${fileName}.json`, 'application/json', `${JSON.stringify(result, null, 2)}\n`)
            }
          >
            Export JSON
          </button>
        </div>
        <div className="impact__cli">
          <span className="small muted">The same check in CI (exits 1 when a change is breaking):</span>
          <code className="impact__command" aria-label="Command line">
            {command}
          </code>
          <button
            type="button"
            className="button button--quiet"
            onClick={() =>
              void navigator.clipboard.writeText(command).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      </section>
      {result.nodes.length > 0 && (
        <section className="card">
          <h2>Downstream</h2>
          <table className="table" aria-label="Downstream nodes">
            <TableHead columns={['Distance', 'Level', 'Node', 'Owners', 'Breaking columns', 'Via']} />
            <tbody>
              {result.nodes.map((node) => (
                <tr key={node.nodeId} className={`impact--${node.level}`}>
                  <td>{node.distance}</td>
                  <td className={`impact__level impact__level--${node.level}`}>{levels[node.level]}</td>
                  <td>
                    <span className="muted small">{node.kind} </span>
                    <Link to={paths.node(node.nodeId)}>{nodeLabel(node.nodeId)}</Link>
                  </td>
                  <td>{node.owners.map((o) => o.name).join(', ') || '—'}</td>
                  <td className="mono small">{node.breakingColumns.map(column).join(', ') || '—'}</td>
                  <td className="small">{nodeLabel(node.via)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {result.owners.length > 0 && (
        <section className="card">
          <h2>Owners to tell</h2>
          <table className="table" aria-label="Owners">
            <TableHead columns={['Owner', 'Type', 'Owns']} />
            <tbody>
              {result.owners.map((owner) => (
                <tr key={owner.name}>
                  <td>{owner.name}</td>
                  <td>{owner.type?.toLowerCase() ?? '—'}</td>
                  <td>{owner.nodes.map(nodeLabel).join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}
