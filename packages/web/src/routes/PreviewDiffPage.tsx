import { Link, useParams } from 'react-router';
import { api } from '../api/client.js';
import type { PreviewCategory, PreviewChange, PreviewConsumer, PreviewDiff } from '../api/analysis.js';
import type { Preview } from '../api/types.js';
import { AddedRemoved } from '../components/AddedRemoved.js';
import { Async, Empty } from '../components/States.js';
import { TableHead } from '../components/TableHead.js';
import { formatTime } from '../format.js';
import { useApi } from '../hooks/useApi.js';
import { fromParam, nodeLabel, paths } from '../paths.js';
import { TO_PRODUCTION, withPreview } from '../preview.js';

/** The categories in the server's order (breaking first), each with a mark so that it never rests on colour. */
const categories: Record<PreviewCategory, { mark: string; title: string }> = {
  breaking: { mark: '✕', title: 'Breaking' },
  partial: { mark: '◐', title: 'Partial' },
  'non-breaking': { mark: '○', title: 'Non-breaking' },
};

/** What is added lives in the preview alone; everything else the diff names is production's. */
const addedReasons: ReadonlySet<PreviewChange['reason']> = new Set(['dataset-added', 'job-added']);

/**
 * A node of the diff, linked to its page: production's (leaving the preview if one is shown), or, with `preview`,
 * the preview's.
 */
function NodeLink({ nodeId, preview }: { nodeId: string; preview?: string }) {
  return preview === undefined ? (
    <Link to={paths.node(nodeId)} state={TO_PRODUCTION} title={nodeId}>
      {nodeLabel(nodeId)}
    </Link>
  ) : (
    <Link to={withPreview(paths.node(nodeId), preview)} title={`${nodeId} in ${preview}`}>
      {nodeLabel(nodeId)}
    </Link>
  );
}

/** `/previews/:name`: the server's diff of a preview's lineage against production's. */
export function PreviewDiffPage() {
  const name = fromParam(useParams().name);
  const state = useApi(`preview-diff:${name}`, async (signal) => {
    const [preview, diff] = await Promise.all([api.preview(name, signal), api.previewDiff(name, signal)]);
    return { preview, diff };
  });
  return (
    <div className="page">
      <Async
        state={state}
        what="the preview's changes"
        notFound={<>There is no preview named {name}: it may have been deleted, or have expired.</>}
      >
        {({ preview, diff }) => <PreviewDiffView preview={preview} diff={diff} />}
      </Async>
    </div>
  );
}

function PreviewDiffView({ preview, diff }: { preview: Preview; diff: PreviewDiff }) {
  const { summary } = diff;
  return (
    <>
      <div className="page__header">
        <div>
          <div className="page__kind">Preview against production</div>
          <h1>{diff.preview}</h1>
          <div className="muted">
            {preview.pullRequest !== null && <>Pull request #{preview.pullRequest} · </>}
            {preview.commitSha !== null && <span className="mono">{preview.commitSha.slice(0, 12)} · </span>}
            jobs of <span className="mono">{diff.jobNamespace}</span> standing in for production's{' '}
            <span className="mono">{diff.baseNamespace}</span> · created {formatTime(preview.createdAt)} by{' '}
            {preview.createdBy}
            {preview.expiresAt !== null && <>, expires {formatTime(preview.expiresAt)}</>}
          </div>
        </div>
        <div className="page__actions">
          <Link className="button" to={withPreview(paths.home(), diff.preview)}>
            Browse the preview
          </Link>
        </div>
      </div>
      <section className={`card${summary.breaking > 0 ? ' card--breaking' : ''}`} aria-label="Summary">
        <dl className="counts">
          <div>
            <dt>Breaking</dt>
            <dd className={summary.breaking > 0 ? 'text-failed' : ''}>{summary.breaking}</dd>
          </div>
          <div>
            <dt>Partial</dt>
            <dd>{summary.partial}</dd>
          </div>
          <div>
            <dt>Non-breaking</dt>
            <dd>{summary.nonBreaking}</dd>
          </div>
          <div>
            <dt>Production consumers reached</dt>
            <dd>{summary.consumers}</dd>
          </div>
        </dl>
      </section>
      {diff.changes.length === 0 && <Empty>The preview changes nothing of production's lineage.</Empty>}
      {(Object.keys(categories) as PreviewCategory[]).map((category) => {
        const changes = diff.changes.filter((change) => change.category === category);
        if (changes.length === 0) return null;
        const { mark, title } = categories[category];
        return (
          <section key={category} className="card" aria-label={`${title} changes`}>
            <h2 className={`preview-category preview-category--${category}`}>
              {mark} {title} ({changes.length})
            </h2>
            <ul className="preview-changes">
              {changes.map((change, index) => (
                <ChangeItem key={index} change={change} preview={diff.preview} />
              ))}
            </ul>
          </section>
        );
      })}
      <section className="card" aria-label="Added and removed">
        <h2>Datasets and jobs added and removed</h2>
        {diff.datasets.added.length +
          diff.datasets.removed.length +
          diff.jobs.added.length +
          diff.jobs.removed.length ===
        0 ? (
          <p className="muted">
            The preview has every dataset and job of production's it stands for, and no other.
          </p>
        ) : (
          <div className="two-columns">
            {(['datasets', 'jobs'] as const).map((kind) => (
              <div key={kind}>
                <h3>{kind === 'datasets' ? 'Datasets' : 'Jobs'}</h3>
                <AddedRemoved
                  label={kind === 'datasets' ? 'Datasets added and removed' : 'Jobs added and removed'}
                  added={diff[kind].added}
                  removed={diff[kind].removed}
                  show={(nodeId, side) => (
                    <NodeLink nodeId={nodeId} {...(side === 'added' ? { preview: diff.preview } : {})} />
                  )}
                />
              </div>
            ))}
          </div>
        )}
      </section>
      <MappingCoverage diff={diff} />
    </>
  );
}

/** One change: what it is, where, before and after, and the production consumers it reaches. */
function ChangeItem({ change, preview }: { change: PreviewChange; preview: string }) {
  const added = addedReasons.has(change.reason);
  return (
    <li className="preview-change">
      <div className="preview-change__head">
        <span className="preview-change__reason">{change.reason.replaceAll('-', ' ')}</span>{' '}
        <NodeLink nodeId={change.node} {...(added ? { preview } : {})} />
        {change.column !== null && (
          <>
            {' '}
            column <span className="mono">{change.column}</span>
          </>
        )}
        {(change.from !== null || change.to !== null) && (
          <span className="preview-change__values">
            {' · '}
            <span className="mono">{change.from ?? '—'}</span> →{' '}
            <span className="mono">{change.to ?? '—'}</span>
          </span>
        )}
      </div>
      <p className="muted small">{change.detail}</p>
      {change.consumers.length > 0 && <Consumers consumers={change.consumers} />}
    </li>
  );
}

function Consumers({ consumers }: { consumers: readonly PreviewConsumer[] }) {
  return (
    <table className="table table--compact" aria-label="Production consumers">
      <TableHead columns={['Consumer', 'Distance', 'Owners', 'Breaking columns', 'Column lineage']} />
      <tbody>
        {consumers.map((consumer) => (
          <tr key={consumer.nodeId}>
            <td>
              <span className="muted small">{consumer.kind} </span>
              <NodeLink nodeId={consumer.nodeId} />
            </td>
            <td>{consumer.distance}</td>
            <td>{consumer.owners.map((owner) => owner.name).join(', ') || '—'}</td>
            <td className="mono small">{consumer.breakingColumns.map(nodeLabel).join(', ') || '—'}</td>
            <td className="small">{consumer.coarse ? 'none: it may read what changed' : 'yes'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Which preview datasets stand for which production ones, and those that stand for none. */
function MappingCoverage({ diff }: { diff: PreviewDiff }) {
  const { mapped, unmapped } = diff.mappingCoverage;
  return (
    <section className="card" aria-label="Mapping coverage">
      <h2>Mapping coverage</h2>
      <p className="muted">
        {mapped.length} preview {mapped.length === 1 ? 'dataset stands' : 'datasets stand'} for a production
        one; {unmapped.length} {unmapped.length === 1 ? 'stands' : 'stand'} for none (new, or a gap in the
        preview's mapping).
      </p>
      {unmapped.length > 0 && (
        <>
          <h3>Preview datasets without a production counterpart</h3>
          <ul className="link-list" aria-label="Unmapped preview datasets">
            {unmapped.map((nodeId) => (
              <li key={nodeId}>
                <NodeLink nodeId={nodeId} preview={diff.preview} />
              </li>
            ))}
          </ul>
        </>
      )}
      {mapped.length > 0 && (
        <table className="table table--compact" aria-label="Mapped datasets">
          <TableHead columns={['Preview dataset', 'Production dataset']} />
          <tbody>
            {mapped.map((pair) => (
              <tr key={pair.preview}>
                <td>
                  <NodeLink nodeId={pair.preview} preview={diff.preview} />
                </td>
                <td>
                  <NodeLink nodeId={pair.production} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
