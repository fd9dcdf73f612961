/** One assertion of an OpenLineage `dataQualityAssertions` facet; severity, expected and actual are optional. */
interface Assertion {
  assertion?: string;
  success?: boolean;
  column?: string;
  severity?: string;
  expected?: unknown;
  actual?: unknown;
}

const show = (value: unknown) =>
  value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value);

/** The data-quality assertions a run reported for a dataset, failures first. */
export function QualityAssertions({ facet }: { facet: unknown }) {
  const list = (facet as { assertions?: Assertion[] } | undefined)?.assertions ?? [];
  if (list.length === 0)
    return <p className="muted">No data-quality assertions were reported for this dataset.</p>;
  const sorted = [...list].sort((a, b) => Number(a.success ?? true) - Number(b.success ?? true));
  return (
    <table className="table" aria-label="Data-quality assertions">
      <thead>
        <tr>
          <th>Result</th>
          <th>Assertion</th>
          <th>Column</th>
          <th>Severity</th>
          <th>Expected</th>
          <th>Actual</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((a, i) => (
          <tr key={i}>
            <td>
              <span className={`badge badge--${a.success === false ? 'failed' : 'completed'}`}>
                {a.success === false ? 'FAILED' : 'PASSED'}
              </span>
            </td>
            <td className="mono">{a.assertion ?? '—'}</td>
            <td className="mono">{a.column ?? '—'}</td>
            <td>{a.severity ?? '—'}</td>
            <td className="mono">{show(a.expected)}</td>
            <td className="mono">{show(a.actual)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
