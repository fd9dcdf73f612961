import type { RunState } from '../api/types.js';

/** A run's state as a coloured pill; the colour classes are shared with the graph's job nodes. */
export function RunStateBadge({ state }: { state: RunState | null | undefined }) {
  const value = state ?? 'NEW';
  return <span className={`badge badge--${value.toLowerCase()}`}>{state ?? 'never ran'}</span>;
}
