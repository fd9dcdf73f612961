import type { RunState } from '../api/types.js';

/**
 * A run's state as a coloured pill; the colour classes are shared with the graph's job nodes. A `stale` run (the
 * server flags a RUNNING run that has sent nothing for long) says so beside its state, and so does a run whose
 * events contradicted each other (`contradictory`: the server's contradictoryStates, the shown state first).
 */
export function RunStateBadge({
  state,
  stale,
  contradictory,
  execution,
}: {
  state: RunState | null | undefined;
  stale?: boolean;
  contradictory?: readonly string[] | undefined;
  /** The server's `execution` of a run that did not execute: shown instead of the state its producer reported. */
  execution?: string | undefined;
}) {
  const value = state ?? 'NEW';
  const others = (contradictory ?? []).slice(1);
  if (execution !== undefined) {
    return (
      <span
        className="badge badge--new"
        title={`The run did not execute (${execution}); its producer reported ${value}, which is neither a failure nor a completion`}
      >
        {execution.toUpperCase()}
      </span>
    );
  }
  return (
    <>
      <span className={`badge badge--${value.toLowerCase()}`}>{state ?? 'never ran'}</span>
      {stale === true && (
        <span className="badge badge--stale" title="No event for longer than the server's --stale-run-after">
          STALE
        </span>
      )}
      {others.length > 0 && (
        <span
          className="badge badge--contradictory"
          title={`The run's events also reported ${others.join(', ')}; the most severe state counts`}
        >
          ALSO {others.join(', ')}
        </span>
      )}
    </>
  );
}
