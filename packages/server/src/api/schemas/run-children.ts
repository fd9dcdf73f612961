/** A run's child runs (GET /jobs/runs/{id}/children, beyond Marquez): the explorer's workflow view. */
import {
  Closed,
  Nullable,
  RecordOf,
  Ref,
  StringEnum,
  Type,
  Uuid,
  type Static,
} from '../../core/json-schema.js';
import { RUN_STATES } from '../../model/run-state.js';
import { EntityIdSchema } from './common.js';
import { ContradictoryStates, RunErrorField, StaleFlag, runTimesProperties } from './run.js';

/** A dataset a child read or wrote, with the counts it reported (inputStatistics or outputStatistics). */
export const ChildDatasetSchema = Closed({
  namespace: Type.String(),
  name: Type.String(),
  version: Type.String({ description: 'The dataset version the child read or wrote' }),
  rowCount: Nullable(Type.Number(), {
    description: 'From the inputStatistics (inputs) or outputStatistics (outputs) facet',
  }),
  bytes: Nullable(Type.Number(), { description: 'size from the same facet' }),
  fileCount: Nullable(Type.Number()),
});
export type ChildDatasetJson = Static<typeof ChildDatasetSchema>;

/** One child run: every property is always there but `stale` and `contradictoryStates`, as on a Run. */
export const ChildRunSchema = Closed({
  runId: Uuid(),
  job: Ref(EntityIdSchema),
  state: StringEnum(RUN_STATES),
  ...runTimesProperties,
  ran: Type.Boolean({
    description:
      'false for a child that never started: ABORTED without START or RUNNING (a failure elsewhere stopped it), or NEW',
  }),
  error: RunErrorField(),
  inputs: Type.Array(ChildDatasetSchema),
  outputs: Type.Array(ChildDatasetSchema),
  stale: Type.Optional(StaleFlag()),
  contradictoryStates: Type.Optional(ContradictoryStates()),
});
export type ChildRunJson = Static<typeof ChildRunSchema>;

/** `from` wrote each of `datasets` and `to` read it. */
export const ChildEdgeSchema = Closed({
  from: Uuid({ description: 'The child that wrote the datasets' }),
  to: Uuid({ description: 'The child that read them' }),
  datasets: Type.Array(Ref(EntityIdSchema)),
});
export type ChildEdgeJson = Static<typeof ChildEdgeSchema>;

/** GET /api/v1/jobs/runs/{id}/children. */
export const RunChildrenSchema = Closed({
  runId: Uuid(),
  totalCount: Type.Integer({ description: 'Children on all pages' }),
  states: RecordOf(Type.Integer(), {
    description: 'Children on all pages by state (only states that occur)',
  }),
  neverRanCount: Type.Integer({ description: 'Children on all pages that never ran (ran: false)' }),
  children: Type.Array(ChildRunSchema, {
    description: 'In the order they ran: by start, else end; children with neither last',
  }),
  edges: Type.Array(ChildEdgeSchema, {
    description: 'Between the children of this page: one per writer and reader pair',
  }),
});
export type RunChildrenJson = Static<typeof RunChildrenSchema>;
