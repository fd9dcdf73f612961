import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client.js';
import type { SchemaChange, SchemaDiffResult } from '../api/analysis.js';
import type { DatasetVersion } from '../api/types.js';
import { formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { nodeLabel, paths } from '../paths.js';
import { TableHead } from './TableHead.js';
import { SchemaChangeList } from './SchemaChangeList.js';
import { Async } from './States.js';

/** How many of the newest versions are each compared with the one before. */
const historyDepth = 20;

const summary = (change: SchemaChange): string => {
  const parts = [
    ...change.added.map((c) => `+${c.name}`),
    ...change.removed.map((c) => `−${c.name}`),
    ...change.typeChanged.map((c) => `~${c.name}`),
  ];
  return parts.length === 0 ? 'no column changes' : parts.join(' ');
};

/**
 * A dataset's versions, newest first, each with what changed in its schema since the version before, and a
 * comparison of any two: every answer is the server's schema diff (`/api/v1/analysis/schema-diff`, nested
 * columns included), with the downstream columns and owners a breaking change reaches.
 */
export function SchemaHistory({
  dataset,
  versions,
}: {
  dataset: string;
  versions: readonly DatasetVersion[];
}) {
  const [before, setBefore] = useState(versions[1]?.version);
  const [after, setAfter] = useState(versions[0]?.version);
  const pairs = versions.slice(0, historyDepth).flatMap((v, i) => {
    const older = versions[i + 1];
    return older ? [{ from: older.version, to: v.version }] : [];
  });
  const history = useApi(`schema-history:${dataset}:${pairs.map((p) => p.to).join(',')}`, async (signal) => {
    const diffs = await Promise.all(pairs.map((pair) => api.schemaDiff(dataset, pair, signal)));
    return new Map(diffs.map((diff) => [diff.to.version, diff]));
  });
  if (versions.length === 0) return <p className="muted">No versions.</p>;
  return (
    <>
      <table className="table" aria-label="Versions">
        <TableHead
          columns={[
            'Compare',
            'Created',
            'Columns',
            'Schema change from the version before',
            'Created by run',
            'Version',
          ]}
        />
        <tbody>
          {versions.map((v, i) => {
            const diff = history.data?.get(v.version);
            return (
              <tr key={v.version}>
                <td>
                  <label className="small">
                    <input
                      type="radio"
                      name="before"
                      checked={before === v.version}
                      onChange={() => setBefore(v.version)}
                    />{' '}
                    from
                  </label>{' '}
                  <label className="small">
                    <input
                      type="radio"
                      name="after"
                      checked={after === v.version}
                      onChange={() => setAfter(v.version)}
                    />{' '}
                    to
                  </label>
                </td>
                <td>{formatTime(v.createdAt)}</td>
                <td>{v.fields.length}</td>
                <td className={`mono small${diff?.breaking ? ' text-failed' : ''}`}>
                  {i === versions.length - 1
                    ? 'first version'
                    : diff
                      ? `${diff.breaking ? 'breaking: ' : ''}${summary(diff)}`
                      : i < historyDepth && history.status === 'loading'
                        ? '…'
                        : '—'}
                </td>
                <td>
                  {v.createdByRun ? (
                    <Link className="mono small" to={paths.run(v.createdByRun.id)}>
                      {v.createdByRun.id.slice(0, 8)}
                    </Link>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="mono small">{v.version.slice(0, 8)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {history.status === 'error' && (
        <Async state={history} what="the schema history">
          {() => null}
        </Async>
      )}
      {before && after && before !== after && <SchemaComparison dataset={dataset} from={before} to={after} />}
    </>
  );
}

function SchemaComparison({ dataset, from, to }: { dataset: string; from: string; to: string }) {
  const diff = useApi(`schema-diff:${dataset}:${from}:${to}`, (signal) =>
    api.schemaDiff(dataset, { from, to }, signal),
  );
  return (
    <Async state={diff} what="the schema comparison">
      {(result) => <ComparisonView result={result} />}
    </Async>
  );
}

function ComparisonView({ result }: { result: SchemaDiffResult }) {
  return (
    <div className="schema-comparison">
      <h3>
        Schema changes from {formatTime(result.from.createdAt)} to {formatTime(result.to.createdAt)}
      </h3>
      <SchemaChangeList change={result} label="Schema diff" />
      {result.reach.length > 0 && (
        <>
          <h3>Downstream columns the breaking change reaches</h3>
          <table className="table table--compact" aria-label="Columns reached">
            <TableHead columns={['Column', 'Hops', 'Owners']} />
            <tbody>
              {result.reach.map((r) => (
                <tr key={r.nodeId}>
                  <td>
                    <Link to={paths.node(r.nodeId)}>{nodeLabel(r.nodeId)}</Link>
                  </td>
                  <td>{r.distance}</td>
                  <td>{r.owners.map((o) => o.name).join(', ') || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
