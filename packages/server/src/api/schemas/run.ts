/** Marquez's Run, with what Headwater adds to it (the run's error, stale and contradictory runs, execution). */
import {
  Nullable,
  RecordOf,
  Ref,
  Shared,
  StringEnum,
  Time,
  TrueFlag,
  Type,
  Uuid,
  type Static,
} from '../../core/json-schema.js';
import { EXECUTION_OUTCOMES, type ExecutionOutcome } from '../../model/execution.js';
import { RunErrorSchema } from '../../model/error-facets.js';
import { RUN_STATES, TERMINAL_STATES } from '../../model/run-state.js';
import { Facets, VersionIdSchema } from './common.js';

/** A dataset version a run read or wrote, with the run's input or output facets for it. */
export const DatasetVersionRefSchema = Shared('DatasetVersionRef', {
  datasetVersionId: Ref(VersionIdSchema),
  facets: Facets(),
});
export type DatasetVersionRefJson = Static<typeof DatasetVersionRefSchema>;

/** A run's `error` (see runErrorOf): null unless its producer reported one. */
export const RunErrorField = () =>
  Nullable(RunErrorSchema, {
    description:
      "Beyond Marquez: the error of a failed run, from the errorMessage facet, else the Spark listener's spark.exception",
  });

/** A run's `stale` flag: left out unless the run is stale. */
export const StaleFlag = () =>
  TrueFlag({
    description:
      'Headwater: present on a RUNNING run with no event for longer than --stale-run-after ' +
      '(HEADWATER_STALE_RUN_AFTER, default 24h); the stored events are unchanged',
  });

/** A run's `contradictoryStates`: left out unless its events reported more than one terminal state. */
export const ContradictoryStates = () =>
  Type.Array(StringEnum(TERMINAL_STATES), {
    description:
      "Headwater: present when the run's events reported contradictory terminal states (the Spark " +
      'listener sends FAIL, then COMPLETE): each of them, most severe first; `state` is the first',
  });

const NOT_EXECUTED = EXECUTION_OUTCOMES.filter(
  (outcome): outcome is Exclude<ExecutionOutcome, 'executed'> => outcome !== 'executed',
);

/** A run's state and times, as every Run shows them. */
export const runTimesProperties = {
  startedAt: Nullable(Time(), { description: 'The earliest START, else the earliest RUNNING' }),
  endedAt: Nullable(Time(), { description: 'The terminal event' }),
  durationMs: Nullable(Type.Integer(), { description: 'endedAt - startedAt' }),
};

/** Marquez's Run. */
export const RunSchema = Shared('Run', {
  id: Uuid(),
  createdAt: Time({ description: 'eventTime of the first event of the run' }),
  updatedAt: Time({ description: 'eventTime of the last event of the run' }),
  nominalStartTime: Nullable(Time()),
  nominalEndTime: Nullable(Time()),
  state: StringEnum(RUN_STATES),
  ...runTimesProperties,
  args: RecordOf(Type.String(), { description: 'From the nominalTime and parent facets' }),
  jobVersion: Type.Optional(Ref(VersionIdSchema)),
  inputDatasetVersions: Type.Array(Ref(DatasetVersionRefSchema)),
  outputDatasetVersions: Type.Array(Ref(DatasetVersionRefSchema)),
  facets: Facets(),
  error: RunErrorField(),
  stale: Type.Optional(StaleFlag()),
  contradictoryStates: Type.Optional(ContradictoryStates()),
  execution: Type.Optional(
    StringEnum(NOT_EXECUTED, {
      description:
        'Headwater: present when the run did not execute (skipped, reused or no-op, as its producer said): ' +
        'neither a failure nor a completion, and it refreshed no data',
    }),
  ),
});
/** Marquez's Run: `jobVersion` is left out until the run reaches a terminal state (or for a job event's run). */
export type RunJson = Static<typeof RunSchema>;
