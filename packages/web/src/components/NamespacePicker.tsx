import { useMemo, useState } from 'react';
import type { Namespace } from '../api/types.js';

/** How many matches to show; a typeahead filters, it does not list thousands of rows. */
const shown = 12;

/**
 * A typeahead over namespaces: type to filter, click or Enter to choose. Unlike a dropdown it stays usable with
 * thousands of namespaces, since only the best matches are rendered.
 */
export function NamespacePicker({
  namespaces,
  selected,
  onSelect,
}: {
  namespaces: readonly Namespace[];
  selected: string | undefined;
  onSelect: (name: string) => void;
}) {
  const [q, setQ] = useState('');
  const matches = useMemo(() => {
    const needle = q.trim().toLowerCase();
    const all = needle ? namespaces.filter((n) => n.name.toLowerCase().includes(needle)) : namespaces;
    // Names that start with the query first: what a person typing a prefix expects.
    return [...all]
      .sort(
        (a, b) =>
          Number(!a.name.toLowerCase().startsWith(needle)) - Number(!b.name.toLowerCase().startsWith(needle)),
      )
      .slice(0, shown);
  }, [namespaces, q]);
  const hidden =
    (q
      ? namespaces.filter((n) => n.name.toLowerCase().includes(q.trim().toLowerCase())).length
      : namespaces.length) - matches.length;
  return (
    <div className="ns-picker">
      <input
        className="ns-picker__input"
        placeholder={`Filter ${namespaces.length} namespaces…`}
        aria-label="Filter namespaces"
        value={q}
        onChange={(event) => setQ(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && matches[0]) onSelect(matches[0].name);
        }}
      />
      <ul className="ns-picker__list" aria-label="Namespaces">
        {matches.map((n) => (
          <li key={n.name}>
            <button
              type="button"
              className="ns-picker__item"
              aria-current={n.name === selected ? 'true' : undefined}
              onClick={() => onSelect(n.name)}
            >
              {n.name}
            </button>
          </li>
        ))}
      </ul>
      {hidden > 0 && <p className="muted small">{hidden} more: type to narrow down.</p>}
      {matches.length === 0 && <p className="muted small">No namespace matches “{q}”.</p>}
    </div>
  );
}
