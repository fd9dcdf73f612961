import { useMemo } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import type { RunChildrenJson } from '../api/analysis.js';
import { api } from '../api/client.js';
import type { Run } from '../api/types.js';
import {
  defaultSelection,
  runNodeId,
  stateMark,
  workflowLayoutRequest,
  workflowModel,
  workflowSummary,
  type WorkflowModel,
  type WorkflowNode,
} from '../api/workflow.js';
import { ChildRunsTimeline } from '../components/ChildRunsTimeline.js';
import { RunError } from '../components/RunError.js';
import { RunStateBadge } from '../components/RunStateBadge.js';
import { Async, ErrorMessage, Loading } from '../components/States.js';
import { datasetCounts } from '../components/WorkflowDatasetGraphNode.js';
import { WORKFLOW_NODE_SIZE, WorkflowGraph } from '../components/WorkflowGraph.js';
import { formatDuration, formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { useLayout } from '../hooks/useLayout.js';
import { fromParam, paths } from '../paths.js';

/** The most children drawn: the server's largest page. */
const MAX_CHILDREN = 2000;

/**
 * `/runs/:runId/workflow?select=&datasets=hide`: a parent run's child runs as a graph (a Kedro pipeline's nodes,
 * an Airflow DAG's tasks) with the datasets between them, what never ran, and the selected child's error.
 */
export function WorkflowPage() {
  const runId = fromParam(useParams().runId);
  const run = useApi(`run:${runId}`, (signal) => api.run(runId, signal));
  const children = useApi(`children:${runId}:${MAX_CHILDREN}`, (signal) =>
    api.runChildren(runId, MAX_CHILDREN, signal),
  );
  return (
    <Async state={run} what="the run" notFound={`No run with id ${runId}.`}>
      {(parent) => (
        <Async state={children} what="the child runs">
          {(answer) => <WorkflowView parent={parent} answer={answer} />}
        </Async>
      )}
    </Async>
  );
}

function WorkflowView({ parent, answer }: { parent: Run; answer: RunChildrenJson }) {
  const [params, setParams] = useSearchParams();
  const withDatasets = params.get('datasets') !== 'hide';
  const selected = params.get('select') ?? defaultSelection(answer);
  const model = useMemo(() => workflowModel(answer, withDatasets), [answer, withDatasets]);
  const request = useMemo(() => workflowLayoutRequest(model, WORKFLOW_NODE_SIZE), [model]);
  const { layout, error } = useLayout(request);
  const job = parent.jobVersion;
  const update = (next: { select?: string; datasets?: boolean }) => {
    const search = new URLSearchParams(params);
    if (next.select !== undefined) search.set('select', next.select);
    if (next.datasets !== undefined) {
      if (next.datasets) search.delete('datasets');
      else search.set('datasets', 'hide');
    }
    setParams(search, { replace: true });
  };
  const neverRan = answer.children.filter((child) => !child.ran);
  return (
    <div className="page workflow-page">
      <div className="toolbar">
        <div className="toolbar__title">
          <div className="page__kind">
            Workflow · <RunStateBadge state={parent.state} />
          </div>
          <h1>
            {job ? <Link to={paths.job(job.namespace, job.name)}>{job.name}</Link> : 'Run'}{' '}
            <Link className="mono small" to={paths.run(parent.id)}>
              {parent.id.slice(0, 8)}
            </Link>
          </h1>
          <p className="muted" aria-label="Summary">
            {workflowSummary(answer)} · {formatTime(parent.startedAt)} · {formatDuration(parent.durationMs)}
          </p>
        </div>
        <label className="depth">
          <input
            type="checkbox"
            checked={withDatasets}
            onChange={(event) => update({ datasets: event.target.checked })}
          />{' '}
          Datasets
        </label>
      </div>
      {answer.totalCount === 0 ? (
        <p className="state state--empty">
          No run names this run as its parent. <Link to={paths.run(parent.id)}>Back to the run</Link>.
        </p>
      ) : (
        <>
          {answer.totalCount > answer.children.length && (
            <p className="muted">
              Showing the first {answer.children.length} of {answer.totalCount} child runs.
            </p>
          )}
          <div className="lineage-layout">
            <div className="graph-frame" aria-label="Workflow graph">
              {error ? (
                <ErrorMessage error={error} />
              ) : layout ? (
                <WorkflowGraph
                  model={model}
                  layout={layout}
                  selected={selected}
                  onSelect={(id) => update({ select: id })}
                />
              ) : (
                <Loading what="the layout" />
              )}
            </div>
            <aside className="panel" aria-label="Details">
              <Details model={model} selected={selected} />
              {neverRan.length > 0 && (
                <div className="panel__section">
                  <h3>Never ran ({neverRan.length})</h3>
                  <ul className="failing-list" aria-label="Never ran">
                    {neverRan.map((child) => (
                      <li key={child.runId}>
                        <button
                          type="button"
                          className="link-button"
                          onClick={() => update({ select: runNodeId(child.runId) })}
                        >
                          {child.job.name}
                        </button>{' '}
                        <span className="muted small">{stateMark(child).label}</span>
                      </li>
                    ))}
                  </ul>
                </div>
              )}
            </aside>
          </div>
          <section className="card">
            <h2>In the order they ran</h2>
            <ChildRunsTimeline
              parent={parent}
              runs={answer.children}
              onSelect={(id) => update({ select: runNodeId(id) })}
            />
          </section>
        </>
      )}
    </div>
  );
}

/** The selected child run (times, error with its traceback, datasets) or dataset (counts, who wrote and read it). */
function Details({ model, selected }: { model: WorkflowModel; selected: string | undefined }) {
  const node: WorkflowNode | undefined = selected === undefined ? undefined : model.nodes.get(selected);
  if (!node) return <p className="muted">Select a node to see its times, error and datasets.</p>;
  if (node.kind === 'dataset') {
    const names = (ids: readonly string[]) =>
      ids.map(
        (id) =>
          (model.nodes.get(runNodeId(id)) as { child?: { job: { name: string } } })?.child?.job.name ?? id,
      );
    return (
      <div aria-label="Selected dataset">
        <div className="panel__kind">Dataset</div>
        <h2 className="panel__title">
          <Link to={paths.dataset(node.namespace, node.name)}>{node.name}</Link>
        </h2>
        <div className="panel__namespace">{node.namespace}</div>
        <dl className="facts">
          <dt>Reported</dt>
          <dd>{datasetCounts(node) ?? '—'}</dd>
          <dt>Written by</dt>
          <dd>{names(node.writers).join(', ') || '—'}</dd>
          <dt>Read by</dt>
          <dd>{names(node.readers).join(', ') || '—'}</dd>
        </dl>
      </div>
    );
  }
  const { child } = node;
  const datasets = (list: typeof child.inputs) =>
    list.length === 0 ? (
      '—'
    ) : (
      <ul className="plain-list">
        {list.map((d) => (
          <li key={`${d.namespace}:${d.name}`}>
            <Link to={paths.dataset(d.namespace, d.name)}>{d.name}</Link>
            {datasetCounts(d) && <span className="muted small"> {datasetCounts(d)}</span>}
          </li>
        ))}
      </ul>
    );
  return (
    <div aria-label="Selected run">
      <div className="panel__kind">
        Child run · <RunStateBadge state={child.state} stale={child.stale === true} />
        {!child.ran && <span className="muted small"> never ran</span>}
      </div>
      <h2 className="panel__title">
        <Link to={paths.job(child.job.namespace, child.job.name)}>{child.job.name}</Link>
      </h2>
      <div className="panel__namespace">
        <Link className="mono small" to={paths.run(child.runId)}>
          run {child.runId.slice(0, 8)}
        </Link>
      </div>
      <dl className="facts">
        <dt>Started</dt>
        <dd>{formatTime(child.startedAt)}</dd>
        <dt>Ended</dt>
        <dd>{formatTime(child.endedAt)}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(child.durationMs)}</dd>
        <dt>Read</dt>
        <dd>{datasets(child.inputs)}</dd>
        <dt>Wrote</dt>
        <dd>{datasets(child.outputs)}</dd>
      </dl>
      <RunError error={child.error} />
    </div>
  );
}
