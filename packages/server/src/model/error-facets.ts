/**
 * The error a failed run reported, read the same way everywhere (the run API, root cause): producers put it in
 * different run facets. The spec's `errorMessage` (message, programmingLanguage, stackTrace) first, then the
 * Spark listener's `spark.exception` (message, stackTrace).
 */
import { Closed, Nullable, StringEnum, Type, type Static } from '../core/json-schema.js';

/** Run facets that carry a run's error, in the order they are preferred. */
export const ERROR_FACETS = ['errorMessage', 'spark.exception'] as const;

/** A run's error as Headwater shows it (a Run's `error`, a child run's, root cause's `errorMessage`). */
export const RunErrorSchema = Closed({
  message: Type.String(),
  stackTrace: Nullable(Type.String()),
  programmingLanguage: Nullable(Type.String()),
  /** The facet it was read from. */
  facet: StringEnum(ERROR_FACETS),
});

/** A run's error as Headwater shows it. */
export type RunError = Static<typeof RunErrorSchema>;

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
