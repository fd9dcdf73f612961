import { Link, useLocation, useNavigate } from 'react-router';
import type { Preview } from '../api/types.js';
import { paths } from '../paths.js';
import { TO_PRODUCTION, withPreview } from '../preview.js';

/** How a preview is named to a person: its name and, when it has one, its pull request. */
const previewLabel = (preview: Preview) =>
  preview.pullRequest === null ? preview.name : `${preview.name} (#${preview.pullRequest})`;

/** Goes to the same view in `preview`, or in production when it is undefined. */
function useSwitchPreview(): (preview: string | undefined) => void {
  const location = useLocation();
  const navigate = useNavigate();
  return (preview) =>
    void navigate(
      withPreview(`${location.pathname}${location.search}${location.hash}`, preview),
      preview === undefined ? { state: TO_PRODUCTION } : {},
    );
}

/**
 * The header's choice of whose lineage the explorer shows: production's, or a preview's. Hidden while the server
 * has no previews (unless the address names one, so that it can be left).
 */
export function PreviewSwitcher({
  previews,
  shown,
}: {
  /** Undefined while they load. */
  previews: readonly Preview[] | undefined;
  shown: string | undefined;
}) {
  const switchTo = useSwitchPreview();
  const listed = previews ?? [];
  if (listed.length === 0 && shown === undefined) return null;
  const known = listed.some((preview) => preview.name === shown);
  return (
    <label className="header__preview">
      Lineage of{' '}
      <select value={shown ?? ''} onChange={(event) => switchTo(event.target.value || undefined)}>
        <option value="">Production</option>
        {shown !== undefined && !known && (
          <option value={shown}>{previews === undefined ? shown : `${shown} (unknown)`}</option>
        )}
        {listed.map((preview) => (
          <option key={preview.name} value={preview.name}>
            {previewLabel(preview)}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * Said above every view while a preview is shown: which one, its pull request, a link to its changes against
 * production, and the way back.
 */
export function PreviewBanner({
  previews,
  shown,
}: {
  /** Undefined while they load. */
  previews: readonly Preview[] | undefined;
  shown: string;
}) {
  const switchTo = useSwitchPreview();
  const preview = previews?.find((p) => p.name === shown);
  return (
    <section className="preview-banner" aria-label="Preview">
      <p>
        <span className="badge preview-banner__badge">Preview</span> You are looking at{' '}
        <strong>{shown}</strong>
        {preview?.pullRequest != null && <>, pull request #{preview.pullRequest}</>}
        {preview ? (
          <span className="muted">
            : the lineage of <span className="mono">{preview.jobNamespace}</span>, standing in for
            production's <span className="mono">{preview.baseNamespace}</span>.
          </span>
        ) : previews === undefined ? (
          '.'
        ) : (
          <>
            , which the server does not have: it may have been deleted, or have expired. Go back to production
            to go on.
          </>
        )}
      </p>
      <div className="preview-banner__actions">
        <Link className="button button--quiet" to={paths.preview(shown)}>
          Changes against production
        </Link>
        <button type="button" className="button" onClick={() => switchTo(undefined)}>
          Back to production
        </button>
      </div>
    </section>
  );
}
