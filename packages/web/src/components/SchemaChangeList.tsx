import type { SchemaChange } from '../api/analysis.js';

/**
 * A schema change as the server computed it (nested columns as `parent.child`): added, removed and
 * type-changed columns, each line marked with a sign and a word so it does not rest on colour.
 */
export function SchemaChangeList({
  change,
  label = 'Schema changes',
}: {
  change: SchemaChange;
  label?: string;
}) {
  const rows = [
    ...change.removed.map((c) => ({ mark: '−', kind: 'removed', name: c.name, detail: c.type ?? '' })),
    ...change.typeChanged.map((c) => ({
      mark: '~',
      kind: 'type changed',
      name: c.name,
      detail: `${c.fromType ?? '?'} → ${c.toType ?? '?'}`,
    })),
    ...change.added.map((c) => ({ mark: '+', kind: 'added', name: c.name, detail: c.type ?? '' })),
  ];
  if (rows.length === 0) return <p className="muted">No column was added, removed or changed type.</p>;
  return (
    <div>
      <p className={change.breaking ? 'text-failed' : 'muted'}>
        {change.breaking
          ? `Breaking: ${change.removed.length} removed, ${change.typeChanged.length} changed type, ${change.added.length} added.`
          : `Not breaking: ${change.added.length} added.`}
      </p>
      <table className="table table--compact" aria-label={label}>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.kind}:${row.name}`} className={`diff--${row.kind.replace(' ', '-')}`}>
              <td className="diff__mark" aria-hidden="true">
                {row.mark}
              </td>
              <td>{row.kind}</td>
              <td className="mono">{row.name}</td>
              <td className="mono">{row.detail}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
