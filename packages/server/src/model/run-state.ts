/**
 * Run state from OpenLineage eventTypes, independent of the order in which events arrive.
 *
 * The aggregate is a join-semilattice: {@link applyRunEvent} is commutative, associative and idempotent, so any
 * permutation (and any duplication) of a run's events gives the same result. This is what fixes Marquez's
 * arrival-order bug, where a COMPLETE followed by a late START leaves the run RUNNING.
 */

/** The spec's event types. */
export type EventType = 'START' | 'RUNNING' | 'COMPLETE' | 'ABORT' | 'FAIL' | 'OTHER';

/** Run states as the Marquez API names them. */
export const RUN_STATES = ['NEW', 'RUNNING', 'COMPLETED', 'ABORTED', 'FAILED'] as const;
export type RunState = (typeof RUN_STATES)[number];

/** The terminal states, most severe first (the order a contradiction lists them in). */
export const TERMINAL_STATES = ['FAILED', 'ABORTED', 'COMPLETED'] as const;

/** A terminal state and the eventTime (ms) of the event that set it. */
export interface TerminalState {
  readonly state: (typeof TERMINAL_STATES)[number];
  readonly at: number;
}

/** What is known about a run's lifecycle; times are eventTimes in ms since the epoch. */
export interface RunStateAggregate {
  /** Earliest START. */
  readonly startedAt: number | null;
  /** Earliest RUNNING, used as the start when no START was seen. */
  readonly firstRunningAt: number | null;
  /**
   * The most severe terminal event (FAILED over ABORTED over COMPLETED), the latest of that severity, if any. A
   * run that reported a failure stays failed whatever terminal event follows: the Spark listener sends FAIL and
   * then, milliseconds later, COMPLETE for an execution that failed.
   */
  readonly terminal: TerminalState | null;
  /**
   * Every terminal state the run's events reported, as bits ({@link TERMINAL_BITS}). More than one is a
   * contradiction worth showing (the Spark listener's FAIL then COMPLETE); `terminal` says which one counts.
   */
  readonly terminalsSeen: number;
  /** Earliest and latest eventTime of any event of the run. */
  readonly firstEventAt: number;
  readonly lastEventAt: number;
}

/** The bit of each terminal state in {@link RunStateAggregate.terminalsSeen}. */
export const TERMINAL_BITS: Readonly<Record<TerminalState['state'], number>> = {
  COMPLETED: 1,
  ABORTED: 2,
  FAILED: 4,
};

/**
 * The terminal states a run reported when they contradict each other (more than one kind), most severe first;
 * empty when the run reported one terminal state or none.
 */
export function contradictoryStates(terminalsSeen: number): TerminalState['state'][] {
  const states = TERMINAL_STATES.filter((state) => (terminalsSeen & TERMINAL_BITS[state]) !== 0);
  return states.length > 1 ? states : [];
}

const terminalOf: Partial<Record<EventType, TerminalState['state']>> = {
  COMPLETE: 'COMPLETED',
  ABORT: 'ABORTED',
  FAIL: 'FAILED',
};

// A more severe terminal state wins over a later, milder one; at equal severity the later event wins.
const severity: Record<TerminalState['state'], number> = { COMPLETED: 0, ABORTED: 1, FAILED: 2 };

const minOf = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);

/** The aggregate of a run whose first known event is of `eventType` (or has none) at `at`. */
export function initialRunState(eventType: EventType | undefined, at: number): RunStateAggregate {
  return applyRunEvent(
    {
      startedAt: null,
      firstRunningAt: null,
      terminal: null,
      terminalsSeen: 0,
      firstEventAt: at,
      lastEventAt: at,
    },
    eventType,
    at,
  );
}

/** Folds one event into the aggregate. An event without eventType only widens the event-time range. */
export function applyRunEvent(
  aggregate: RunStateAggregate,
  eventType: EventType | undefined,
  at: number,
): RunStateAggregate {
  let { startedAt, firstRunningAt, terminal, terminalsSeen } = aggregate;
  if (eventType === 'START') startedAt = minOf(startedAt, at);
  else if (eventType === 'RUNNING') firstRunningAt = minOf(firstRunningAt, at);
  else if (eventType !== undefined) {
    const state = terminalOf[eventType];
    if (state !== undefined) terminalsSeen |= TERMINAL_BITS[state];
    if (
      state !== undefined &&
      (terminal === null ||
        severity[state] > severity[terminal.state] ||
        (severity[state] === severity[terminal.state] && at > terminal.at))
    ) {
      terminal = { state, at };
    }
  }
  return {
    startedAt,
    firstRunningAt,
    terminal,
    terminalsSeen,
    firstEventAt: Math.min(aggregate.firstEventAt, at),
    lastEventAt: Math.max(aggregate.lastEventAt, at),
  };
}

/** The state to report: a terminal state wins over RUNNING whatever the order the events came in. */
export function runStateOf(aggregate: RunStateAggregate): RunState {
  if (aggregate.terminal !== null) return aggregate.terminal.state;
  if (aggregate.startedAt !== null || aggregate.firstRunningAt !== null) return 'RUNNING';
  return 'NEW';
}

/** When the run started: the earliest START, else the earliest RUNNING. */
export function runStartedAt(aggregate: RunStateAggregate): number | null {
  return aggregate.startedAt ?? aggregate.firstRunningAt;
}

/** When the state last changed: the terminal event, else the start. */
export function runTransitionedAt(aggregate: RunStateAggregate): number | null {
  return aggregate.terminal?.at ?? runStartedAt(aggregate);
}

/** True when both aggregates describe the same lifecycle. */
export function sameRunState(a: RunStateAggregate, b: RunStateAggregate): boolean {
  return (
    a.startedAt === b.startedAt &&
    a.firstRunningAt === b.firstRunningAt &&
    a.terminal?.state === b.terminal?.state &&
    a.terminal?.at === b.terminal?.at &&
    a.terminalsSeen === b.terminalsSeen &&
    a.firstEventAt === b.firstEventAt &&
    a.lastEventAt === b.lastEventAt
  );
}
