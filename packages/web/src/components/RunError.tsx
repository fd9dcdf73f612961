import type { RunErrorInfo } from '../api/types.js';

/**
 * The error message and stack trace a failed run reported, as the server reads them from whichever error facet
 * the producer sent (`errorMessage`, the Spark listener's `spark.exception`).
 */
export function RunError({ error }: { error: RunErrorInfo | null | undefined }) {
  if (!error?.message) return null;
  return (
    <div className="run-error" aria-label="Error">
      <h3>Error</h3>
      <pre className="code code--error">{error.message}</pre>
      {error.stackTrace && (
        <details open>
          <summary>
            Stack trace{error.programmingLanguage ? ` (${error.programmingLanguage})` : ''}
            {error.facet !== 'errorMessage' ? ` from ${error.facet}` : ''}
          </summary>
          <pre className="code">{error.stackTrace}</pre>
        </details>
      )}
    </div>
  );
}
