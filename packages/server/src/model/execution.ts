/**
 * Whether a run really executed: a run that was skipped (its upstream failed, a branch was not taken), reused
 * (a cached or cloned result stood in for it) or a no-op (nothing to do) is neither a failure nor a completion,
 * whatever its eventType says, and the data it names was not refreshed by it. Producers say so in different
 * ways; this module is the one place that reads them.
 */
import { readAssertions, type Unevaluated } from './assertions.js';
import type { FacetMap, NormalizedEvent } from './normalize.js';

/** What a run did: executed, or why it did not. */
export const EXECUTION_OUTCOMES = ['executed', 'skipped', 'reused', 'no-op'] as const;
export type ExecutionOutcome = (typeof EXECUTION_OUTCOMES)[number];

/** The run facet a producer without its own word for it sends: `{"outcome": "skipped", "reason": "..."}`. */
export const EXECUTION_FACET = 'headwater_execution';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Airflow task-instance states that mean the task's code did not run. */
const AIRFLOW_NOT_RUN: Readonly<Record<string, ExecutionOutcome>> = {
  skipped: 'skipped',
  upstream_failed: 'skipped',
  removed: 'skipped',
};

/** True when the event comes from dbt-ol (its run facets or its job type say so). */
function fromDbt(runFacets: FacetMap, jobFacets: FacetMap): boolean {
  const engine = runFacets.processing_engine;
  return (
    isObject(runFacets.dbt_version) ||
    (isObject(engine) && engine.name === 'dbt') ||
    (isObject(jobFacets.jobType) && jobFacets.jobType.integration === 'DBT')
  );
}

/** How the producer of `event` reports checks that did not run (see {@link Unevaluated}). */
export function unevaluatedOf(event: NormalizedEvent): Unevaluated {
  const runFacets = event.run?.facets ?? {};
  const reported = reportedOutcome(runFacets);
  if (reported !== undefined && reported !== 'executed') return 'all';
  return fromDbt(runFacets, event.job?.facets ?? {}) ? 'withoutCounts' : 'none';
}

/** The outcome a run facet names outright: `headwater_execution`, else Airflow's task-instance state. */
function reportedOutcome(runFacets: FacetMap): ExecutionOutcome | undefined {
  const facet = runFacets[EXECUTION_FACET];
  if (isObject(facet) && (EXECUTION_OUTCOMES as readonly unknown[]).includes(facet.outcome)) {
    return facet.outcome as ExecutionOutcome;
  }
  const airflow = runFacets.airflow;
  const state = isObject(airflow) && isObject(airflow.taskInstance) ? airflow.taskInstance.state : undefined;
  return typeof state === 'string' ? AIRFLOW_NOT_RUN[state.toLowerCase()] : undefined;
}

/**
 * What one event says about whether its run executed, or undefined when it says nothing (most events: a run is
 * executed unless told otherwise):
 * - the `headwater_execution` run facet's `outcome`;
 * - Airflow's `airflow` run facet, whose `taskInstance.state` is `skipped`, `upstream_failed` or `removed`;
 * - dbt-ol's test runs: a run whose tests include at least one dbt did not run and none that failed (at error
 *   severity) is skipped (dbt-ol sends FAIL for it, having counted the skipped tests as failures).
 */
export function executionOf(event: NormalizedEvent): ExecutionOutcome | undefined {
  const runFacets = event.run?.facets ?? {};
  const reported = reportedOutcome(runFacets);
  if (reported !== undefined) return reported;
  if (!fromDbt(runFacets, event.job?.facets ?? {})) return undefined;
  let skipped = false;
  for (const mention of [...event.inputs, ...event.outputs]) {
    for (const result of readAssertions([mention.ioFacets, mention.facets], 'withoutCounts')) {
      if (result.skipped) skipped = true;
      // dbt-ol does not fail a run for a warn-severity test, so neither does this rule.
      else if (!result.success && result.severity?.toLowerCase() !== 'warn') return undefined;
    }
  }
  return skipped ? 'skipped' : undefined;
}
