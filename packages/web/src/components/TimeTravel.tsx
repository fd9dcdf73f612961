import { useEffect, useId, useState } from 'react';
import type { LineageGraphResponse } from '../api/types.js';
import { formatTime } from '../format.js';

const minuteMs = 60_000;

/** The span of time a graph covers: its oldest node's creation to its newest update or run end. */
export function timeBounds(graph: LineageGraphResponse): { from: number; to: number; marks: number[] } {
  const times = new Set<number>();
  let from = Infinity;
  let to = -Infinity;
  for (const node of graph.graph) {
    const created = Date.parse(node.data.createdAt);
    if (Number.isFinite(created)) from = Math.min(from, created);
    const updated: (string | null)[] = [node.data.updatedAt];
    if (node.type === 'JOB')
      updated.push(node.data.latestRun?.endedAt ?? null, node.data.latestRun?.startedAt ?? null);
    for (const iso of updated) {
      const t = iso ? Date.parse(iso) : NaN;
      if (Number.isFinite(t)) {
        to = Math.max(to, t);
        times.add(t);
      }
    }
  }
  if (!Number.isFinite(from) || !Number.isFinite(to)) return { from: 0, to: 0, marks: [] };
  return { from, to: Math.max(from, to), marks: [...times].sort((a, b) => a - b) };
}

/**
 * The lineage page's timeline: a slider from the graph's oldest node to its newest event that sets `asOf` (the
 * graph as it was then, from the server's per-event history), "Now" to come back, and a switch for the
 * graph diff between that time and now. Keyboard: the slider moves a minute per arrow key, an hour per Page key.
 */
export function TimeTravel({
  graph,
  asOf,
  compare,
  onChange,
  onCompare,
}: {
  graph: LineageGraphResponse;
  asOf: string | undefined;
  compare: boolean;
  onChange: (asOf: string | undefined) => void;
  onCompare: (on: boolean) => void;
}) {
  const bounds = timeBounds(graph);
  const { from, marks } = bounds;
  // The slider's last step reaches the newest event (a range snaps to min + k × step), so End is "now".
  const to = from + Math.ceil((bounds.to - from) / minuteMs) * minuteMs;
  const listId = useId();
  const committed = asOf ? Date.parse(asOf) : to;
  const [draft, setDraft] = useState(committed);
  useEffect(() => setDraft(committed), [committed]);
  // The URL (and a request) follows the slider once it rests, not at every pixel of a drag.
  useEffect(() => {
    if (draft === committed) return;
    const timer = setTimeout(() => onChange(draft >= to ? undefined : new Date(draft).toISOString()), 250);
    return () => clearTimeout(timer);
  }, [draft, committed, to, onChange]);
  if (to <= from) return null;
  return (
    <div className="time-travel" role="group" aria-label="Time travel">
      <label className="time-travel__slider">
        <span>{asOf ? `As of ${formatTime(asOf)}` : 'Now'}</span>
        <input
          type="range"
          min={from}
          max={to}
          step={minuteMs}
          value={Math.min(to, Math.max(from, draft))}
          list={listId}
          aria-label="Show the lineage as of"
          aria-valuetext={draft >= to ? 'now' : new Date(draft).toISOString()}
          onChange={(event) => setDraft(Number(event.target.value))}
        />
        <datalist id={listId}>
          {marks.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
      </label>
      <button
        type="button"
        className="button button--quiet"
        disabled={!asOf}
        onClick={() => onChange(undefined)}
      >
        Now
      </button>
      <button
        type="button"
        className="button button--quiet"
        aria-pressed={compare}
        disabled={!asOf}
        onClick={() => onCompare(!compare)}
      >
        {compare ? 'Hide changes since then' : 'Changes since then'}
      </button>
    </div>
  );
}
