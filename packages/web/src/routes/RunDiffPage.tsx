import { Link, useSearchParams } from 'react-router';
import { api } from '../api/client.js';
import type { DatasetDiff, NumberChange, RunDiffResult } from '../api/analysis.js';
import type { RunState } from '../api/types.js';
import { RunStateBadge } from '../components/RunStateBadge.js';
import { SchemaChangeList } from '../components/SchemaChangeList.js';
import { Async, Empty } from '../components/States.js';
import { formatDuration, formatTime } from '../format.js';
import { FlippedAssertions } from '../components/FlippedAssertions.js';
import { TableHead } from '../components/TableHead.js';
import { useApi } from '../hooks/useApi.js';
import { nodeLabel, paths } from '../paths.js';

const statusWords: Record<DatasetDiff['status'], string> = {
  added: '+ only in the later run',
  removed: '− only in the earlier run',
  unchanged: '= same version',
  versionChanged: '~ new version',
};

const signed = (n: number, format: (n: number) => string) =>
  n > 0 ? `+${format(n)}` : n < 0 ? `−${format(-n)}` : '±0';
const count = (n: number | null) => (n === null ? '—' : n.toLocaleString('en-US'));

function Change({ change, format }: { change: NumberChange; format: (n: number) => string }) {
  return (
    <>
      {change.from === null ? '—' : format(change.from)} → {change.to === null ? '—' : format(change.to)}
      {change.change !== null && <span className="muted"> ({signed(change.change, format)})</span>}
    </>
  );
}

/** `/runs/compare?from=&to=`: the server's run diff (`/api/v1/analysis/run-diff`) of two runs. */
export function RunDiffPage() {
  const [params] = useSearchParams();
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const diff = useApi(`run-diff:${from}:${to}`, (signal) => api.runDiff(from, to, signal));
  if (!from || !to)
    return (
      <Empty>Pick two runs to compare: a job&apos;s run history links each run to the one before.</Empty>
    );
  return (
    <Async state={diff} what="the run comparison" notFound={`No run ${from} or ${to}.`}>
      {(result) => <RunDiffView result={result} />}
    </Async>
  );
}

function RunDiffView({ result }: { result: RunDiffResult }) {
  const side = (run: RunDiffResult['from'], label: string) => (
    <div className="run-diff__side">
      <h3>{label}</h3>
      <RunStateBadge state={run.state as RunState} />{' '}
      <Link className="mono small" to={paths.run(run.id)}>
        {run.id.slice(0, 8)}
      </Link>
      <div className="small">
        {formatTime(run.startedAt)} · {formatDuration(run.durationMs)}
      </div>
      {!result.sameJob && <div className="small muted">{nodeLabel(run.job)}</div>}
    </div>
  );
  return (
    <div className="page">
      <div className="page__header">
        <div>
          <div className="page__kind">Run comparison</div>
          <h1>
            <Link to={paths.node(result.to.job)}>{nodeLabel(result.to.job)}</Link>
          </h1>
          {!result.sameJob && <div className="text-failed">These runs belong to different jobs.</div>}
        </div>
      </div>
      <section className="card run-diff__runs" aria-label="Runs compared">
        {side(result.from, 'Earlier run')}
        <div className="run-diff__arrow" aria-hidden="true">
          →
        </div>
        {side(result.to, 'Later run')}
        <div className="run-diff__side">
          <h3>Duration</h3>
          <Change change={result.duration} format={formatDuration} />
        </div>
      </section>
      {(['inputs', 'outputs'] as const).map((key) => (
        <section className="card" key={key}>
          <h2>{key === 'inputs' ? 'Read' : 'Written'}</h2>
          {result[key].length === 0 ? (
            <p className="muted">Neither run {key === 'inputs' ? 'read' : 'wrote'} a dataset.</p>
          ) : (
            <table className="table" aria-label={key === 'inputs' ? 'Inputs compared' : 'Outputs compared'}>
              <TableHead columns={['Dataset', 'Version', 'Rows', 'Schema']} />
              <tbody>
                {result[key].map((d) => (
                  <tr key={d.dataset}>
                    <td>
                      <Link to={paths.node(d.dataset)}>{nodeLabel(d.dataset)}</Link>
                    </td>
                    <td className="small">
                      {statusWords[d.status]}
                      <div className="mono muted">
                        {d.fromVersion?.slice(0, 8) ?? '—'} → {d.toVersion?.slice(0, 8) ?? '—'}
                      </div>
                    </td>
                    <td className="small">
                      <Change change={d.rowCount} format={count} />
                    </td>
                    <td>
                      {d.schemaChange ? (
                        <SchemaChangeList change={d.schemaChange} label={`Schema change of ${d.dataset}`} />
                      ) : (
                        <span className="muted small">no change</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ))}
      <section className="card">
        <h2>Assertions that flipped</h2>
        {result.assertions.length === 0 ? (
          <p className="muted">No data-quality assertion passed in one run and failed in the other.</p>
        ) : (
          <FlippedAssertions assertions={result.assertions} />
        )}
      </section>
    </div>
  );
}
