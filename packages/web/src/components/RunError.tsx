import type { Run } from '../api/types.js';

/**
 * The error and stack trace a failed run reported, as the server reads it from the facets producers really use
 * (errorMessage, Spark's spark.exception): the same reader as root cause.
 */
export function RunError({ run }: { run: Pick<Run, 'error'> }) {
  const { error } = run;
  if (!error) return null;
  return (
    <div className="run-error" aria-label="Error">
      <h3>Error</h3>
      <pre className="code code--error">{error.message}</pre>
      {error.stackTrace && (
        <details open>
          <summary>Stack trace{error.programmingLanguage ? ` (${error.programmingLanguage})` : ''}</summary>
          <pre className="code">{error.stackTrace}</pre>
        </details>
      )}
    </div>
  );
}
