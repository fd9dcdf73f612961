/** Facets as collapsible JSON, one per facet, with the spec URL a reader can follow. */
export function FacetsViewer({
  facets,
  label,
}: {
  facets: Record<string, unknown> | undefined;
  label: string;
}) {
  const entries = Object.entries(facets ?? {});
  if (entries.length === 0) return <p className="muted">No {label}.</p>;
  return (
    <div className="facets" aria-label={label}>
      {entries.map(([name, value]) => (
        <details key={name} className="facet">
          <summary>
            <span className="mono">{name}</span>
          </summary>
          <pre className="code">{JSON.stringify(value, null, 2)}</pre>
        </details>
      ))}
    </div>
  );
}
