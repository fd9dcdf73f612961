/**
 * The error a failed run reported, read the same way everywhere (the run API, root cause): producers put it in
 * different run facets. The spec's `errorMessage` (message, programmingLanguage, stackTrace) first, then the
 * Spark listener's `spark.exception` (message, stackTrace).
 */

/** Run facets that carry a run's error, in the order they are preferred. */
export const ERROR_FACETS = ['errorMessage', 'spark.exception'] as const;

/** A run's error as Headwater shows it. */
export interface RunError {
  readonly message: string;
  readonly stackTrace: string | null;
  readonly programmingLanguage: string | null;
  /** The facet it was read from. */
  readonly facet: (typeof ERROR_FACETS)[number];
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** The error of a run's merged facets (or of a subset holding the error facets), else null. */
export function runErrorOf(facets: Readonly<Record<string, unknown>> | null | undefined): RunError | null {
  for (const name of ERROR_FACETS) {
    const facet = facets?.[name];
    if (typeof facet !== 'object' || facet === null) continue;
    const { message, stackTrace, programmingLanguage } = facet as Record<string, unknown>;
    const first = text(message) ?? text(stackTrace)?.split('\n')[0] ?? null;
    if (first === null) continue;
    return {
      message: first,
      stackTrace: text(stackTrace),
      programmingLanguage: text(programmingLanguage) ?? (name === 'spark.exception' ? 'Java' : null),
      facet: name,
    };
  }
  return null;
}
