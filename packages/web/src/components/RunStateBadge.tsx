import type { RunState } from '../api/types.js';

/**
 * A run's state as a coloured pill; the colour classes are shared with the graph's job nodes. A `stale` run (the
 * server flags a RUNNING run that has sent nothing for long) says so beside its state.
 */
export function RunStateBadge({ state, stale }: { state: RunState | null | undefined; stale?: boolean }) {
  const value = state ?? 'NEW';
  return (
    <>
      <span className={`badge badge--${value.toLowerCase()}`}>{state ?? 'never ran'}</span>
      {stale === true && (
        <span className="badge badge--stale" title="No event for longer than the server's --stale-run-after">
          STALE
        </span>
      )}
    </>
  );
}
