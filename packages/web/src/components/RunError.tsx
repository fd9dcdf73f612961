/** The error message and stack trace a failed run reported (OpenLineage `errorMessage` run facet). */
export function RunError({ facets }: { facets: Record<string, unknown> }) {
  const error = facets.errorMessage as
    { message?: string; stackTrace?: string; programmingLanguage?: string } | undefined;
  if (!error?.message) return null;
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
