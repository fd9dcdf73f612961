/**
 * Data-quality assertions as producers send them: the `dataQualityAssertions` facet, an input dataset facet in the
 * spec and the Python client, a dataset facet from some producers. The one rule for what makes two results the
 * same assertion lives here; the store keeps the identity it returns, and every reader (dataset quality, root
 * cause, diffs, the Marquez-compatible facets) groups by it.
 */
import type { FacetMap } from './normalize.js';

/** One assertion result of one event. */
export interface AssertionResult {
  /** Stable text identifying the assertion across runs (see {@link assertionIdentity}). */
  readonly identity: string;
  /** The assertion's type (`not_null`, `unique`, ...: the spec's `assertion`). */
  readonly assertion: string;
  /** '' when the assertion is about the whole dataset. */
  readonly column: string;
  readonly name: string | null;
  readonly description: string | null;
  readonly success: boolean;
  /**
   * The producer says the check did not run (see {@link readAssertions}'s `unevaluated`): not a failure, and not
   * a result that says anything about the data.
   */
  readonly skipped: boolean;
  readonly severity: string | null;
  readonly expected: string | null;
  readonly actual: string | null;
}

const escape = (text: string) => text.replaceAll('\\', '\\\\').replaceAll(':', '\\:');

/**
 * What identifies an assertion: its `name` where the producer gives one (dbt's test name: two `accepted_values`
 * tests on one column are two assertions), else its type and column. Migration 110 writes the unnamed form in
 * SQL for the rows stored before it; keep the two alike.
 * @example assertionIdentity(null, 'not_null', 'id') // 't:not_null:id'
 */
export function assertionIdentity(name: string | null, assertion: string, column: string): string {
  return name ? `n:${name}` : `t:${escape(assertion)}:${escape(column)}`;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const textOf = (value: unknown): string | null =>
  value === undefined || value === null ? null : typeof value === 'string' ? value : JSON.stringify(value);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** How a producer reports a check that did not run. */
export type Unevaluated =
  /** As a result like any other: every result is taken as sent. */
  | 'none'
  /**
   * dbt-ol's way: an unsuccessful result with neither `actual` nor `expected`. dbt-ol fills both from the failure
   * count dbt gives every test it ran (pass, fail or warn), and sends the tests dbt skipped (their model failed or
   * was skipped) or could not run (an error in the test's SQL) as `success: false` without them.
   */
  | 'withoutCounts'
  /** The run says it did not execute (a `headwater_execution` facet): none of its results was evaluated. */
  | 'all';

/**
 * The assertions of the `dataQualityAssertions` facets in `sources` (a mention's input or output facets first,
 * then its dataset facets), one per identity: the first source that names it wins, and within one facet the
 * last item. Items without a string `assertion` and a boolean `success` are left out. `unevaluated` says which
 * results are checks that did not run ({@link AssertionResult.skipped}).
 */
export function readAssertions(
  sources: readonly FacetMap[],
  unevaluated: Unevaluated = 'none',
): AssertionResult[] {
  const found = new Map<string, AssertionResult>();
  for (const facets of sources) {
    const facet = facets.dataQualityAssertions;
    if (!isObject(facet) || !Array.isArray(facet.assertions)) continue;
    const fromThis = new Map<string, AssertionResult>();
    for (const item of facet.assertions as unknown[]) {
      if (!isObject(item) || typeof item.assertion !== 'string' || typeof item.success !== 'boolean')
        continue;
      const column = str(item.column) ?? '';
      const name = str(item.name) || null;
      const identity = assertionIdentity(name, item.assertion, column);
      if (found.has(identity)) continue;
      const expected = textOf(item.expected);
      const actual = textOf(item.actual);
      const skipped =
        unevaluated === 'all' ||
        (unevaluated === 'withoutCounts' && !item.success && expected === null && actual === null);
      fromThis.set(identity, {
        identity,
        assertion: item.assertion,
        column,
        name,
        description: str(item.description),
        success: item.success,
        skipped,
        severity: str(item.severity),
        expected,
        actual,
      });
    }
    for (const [identity, result] of fromThis) found.set(identity, result);
  }
  return [...found.values()];
}
