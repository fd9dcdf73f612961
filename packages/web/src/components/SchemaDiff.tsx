import type { Field } from '../api/types.js';

/** One line of a schema comparison. */
interface FieldChange {
  name: string;
  change: 'added' | 'removed' | 'changed' | 'same';
  before?: Field;
  after?: Field;
}

/** Compares two schemas by column name, in the newer schema's order, removed columns last. */
export function diffFields(before: readonly Field[], after: readonly Field[]): FieldChange[] {
  const old = new Map(before.map((f) => [f.name, f]));
  const changes: FieldChange[] = after.map((f) => {
    const previous = old.get(f.name);
    old.delete(f.name);
    if (!previous) return { name: f.name, change: 'added', after: f };
    const same = previous.type === f.type && (previous.description ?? '') === (f.description ?? '');
    return { name: f.name, change: same ? 'same' : 'changed', before: previous, after: f };
  });
  for (const f of old.values()) changes.push({ name: f.name, change: 'removed', before: f });
  return changes;
}

const marks = { added: '+', removed: '−', changed: '~', same: '' } as const;

/** The schema difference between two dataset versions, as a table a person can scan. */
export function SchemaDiff({ before, after }: { before: readonly Field[]; after: readonly Field[] }) {
  const changes = diffFields(before, after);
  const changed = changes.filter((c) => c.change !== 'same').length;
  return (
    <div>
      <p className="muted">
        {changed === 0 ? 'The two schemas are identical.' : `${changed} column(s) differ.`}
      </p>
      <table className="table" aria-label="Schema diff">
        <thead>
          <tr>
            <th />
            <th>Column</th>
            <th>Before</th>
            <th>After</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.name} className={`diff--${c.change}`}>
              <td className="diff__mark">{marks[c.change]}</td>
              <td className="mono">{c.name}</td>
              <td className="mono">{c.before?.type ?? ''}</td>
              <td className="mono">{c.after?.type ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
