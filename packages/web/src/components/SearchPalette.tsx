import { useEffect, useRef, useState } from 'react';
import { useNavigate } from 'react-router';
import { api } from '../api/client.js';
import { datasetsForColumnSearch } from '../api/column-index.js';
import { paths } from '../paths.js';

/** One line of the palette: a dataset, a job, or a column of a dataset. */
interface Hit {
  key: string;
  kind: 'Dataset' | 'Job' | 'Column';
  label: string;
  detail: string;
  url: string;
}

const debounceMs = 120;

/** Columns whose name contains the query, at most `limit` of them. */
async function columnHits(q: string, limit: number): Promise<Hit[]> {
  const needle = q.toLowerCase();
  const hits: Hit[] = [];
  for (const d of await datasetsForColumnSearch()) {
    for (const f of d.fields) {
      if (!f.name.toLowerCase().includes(needle)) continue;
      hits.push({
        key: `col:${d.namespace}:${d.name}:${f.name}`,
        kind: 'Column',
        label: f.name,
        detail: `${d.name} · ${f.type ?? ''} · ${d.namespace}`,
        url: `${paths.dataset(d.namespace, d.name)}#column-${encodeURIComponent(f.name)}`,
      });
      if (hits.length >= limit) return hits;
    }
  }
  return hits;
}

/**
 * The ⌘K palette: type to search datasets, jobs and columns; ↑/↓ to move, Enter to open, Escape to close.
 */
export function SearchPalette({ onClose }: { onClose: () => void }) {
  const [q, setQ] = useState('');
  const [hits, setHits] = useState<Hit[]>([]);
  const [active, setActive] = useState(0);
  const [status, setStatus] = useState<'idle' | 'loading' | 'error'>('idle');
  const navigate = useNavigate();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  useEffect(() => {
    if (q.trim() === '') {
      setHits([]);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      setStatus('loading');
      api
        .search(q.trim(), 20, controller.signal)
        .then(async ({ results }) => {
          const entities: Hit[] = results.map((r) => ({
            key: r.nodeId,
            kind: r.type === 'DATASET' ? 'Dataset' : 'Job',
            label: r.name,
            detail: r.namespace,
            url: r.type === 'DATASET' ? paths.dataset(r.namespace, r.name) : paths.job(r.namespace, r.name),
          }));
          const columns = await columnHits(q.trim(), 20);
          if (controller.signal.aborted) return;
          setHits([...entities, ...columns]);
          setActive(0);
          setStatus('idle');
        })
        .catch(() => {
          if (!controller.signal.aborted) setStatus('error');
        });
    }, debounceMs);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [q]);

  const open = (hit: Hit | undefined) => {
    if (!hit) return;
    onClose();
    void navigate(hit.url);
  };
  const onKeyDown = (event: React.KeyboardEvent) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      setActive((a) => Math.min(hits.length - 1, a + 1));
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (event.key === 'Enter') {
      open(hits[active]);
    } else if (event.key === 'Escape') {
      onClose();
    }
  };

  return (
    <div className="palette-backdrop" onMouseDown={onClose}>
      <div
        className="palette"
        role="dialog"
        aria-modal="true"
        aria-label="Search"
        onMouseDown={(event) => event.stopPropagation()}
      >
        <input
          ref={input}
          className="palette__input"
          placeholder="Search datasets, jobs and columns…"
          aria-label="Search datasets, jobs and columns"
          role="combobox"
          aria-expanded={hits.length > 0}
          aria-controls="palette-results"
          aria-activedescendant={hits[active] ? `hit-${active}` : undefined}
          value={q}
          onChange={(event) => setQ(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <ul id="palette-results" className="palette__results" role="listbox" aria-label="Results">
          {hits.map((hit, index) => (
            <li
              key={hit.key}
              id={`hit-${index}`}
              role="option"
              aria-selected={index === active}
              className="palette__hit"
              onMouseEnter={() => setActive(index)}
              onClick={() => open(hit)}
            >
              <span className={`kind kind--${hit.kind.toLowerCase()}`}>{hit.kind}</span>
              <span className="palette__label">{hit.label}</span>
              <span className="palette__detail">{hit.detail}</span>
            </li>
          ))}
        </ul>
        {q.trim() !== '' && hits.length === 0 && status === 'idle' && (
          <p className="palette__empty">Nothing matches “{q}”.</p>
        )}
        {status === 'error' && <p className="palette__empty">Search failed: is the server running?</p>}
        <p className="palette__help">↑ ↓ to move · Enter to open · Esc to close</p>
      </div>
    </div>
  );
}
