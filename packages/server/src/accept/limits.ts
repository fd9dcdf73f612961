/**
 * What one event may hold. Every limit protects the store or the other events of a batch: nesting deeper than
 * the limit overflows recursive JSON handling; a lone surrogate cannot be stored as PostgreSQL text or jsonb; a
 * name longer than the limit does not fit a btree index entry (about 2,700 bytes); and an event with a hundred
 * thousand datasets costs the writer tens of seconds that every other producer would wait for. An event over a
 * limit is rejected alone with the JSON path and the limit, and the rest of its batch is stored.
 */
import { appendPath, ROOT_PATH } from '../core/json-path.js';
import type { ValidationIssue } from './validate.js';

/** The limits an event must keep, documented in the README ("Limits"). */
export interface EventLimits {
  /** Deepest nesting of objects and arrays. @default 64 */
  readonly maxDepth: number;
  /** Longest namespace or job, dataset or field name, in UTF-8 bytes. @default 1024 */
  readonly maxNameBytes: number;
  /** Most inputs plus outputs of one event. @default 5000 */
  readonly maxDatasets: number;
  /** Most schema fields (or column-lineage outputs) of one dataset. @default 10000 */
  readonly maxFields: number;
  /** Largest facet, serialised as JSON, in UTF-16 code units (about bytes for ASCII). @default 1 MiB */
  readonly maxFacetBytes: number;
}

/** The defaults of {@link EventLimits}. */
export const DEFAULT_EVENT_LIMITS: EventLimits = Object.freeze({
  maxDepth: 64,
  maxNameBytes: 1024,
  maxDatasets: 5000,
  maxFields: 10_000,
  maxFacetBytes: 1024 * 1024,
});

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A lone (unpaired) UTF-16 surrogate: not a character, and not storable as UTF-8. */
const LONE_SURROGATE = /\p{Surrogate}/u;

declare global {
  interface String {
    /** ES2024 (Node 20): false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** The most characters one number, `true`, `false` or `null` takes in JSON, with its comma. */
const SCALAR_JSON_BOUND = 25;

/**
 * Whether `value` (a decoded JSON value) surely keeps the structural limits, nesting within `maxDepth` and no
 * lone surrogate in any key or string, counting into `size` an upper bound of the length of its JSON text (a
 * character of a string takes at most 6 in JSON). Recursive, but never deeper than `maxDepth`. It allocates
 * nothing, so the common case, a well-formed event, costs one plain walk; the paths of problems are found by the
 * slower walk of {@link checkEventLimits} only when this one says there may be some.
 */
function surelyWellFormed(value: unknown, depth: number, maxDepth: number, size: { bound: number }): boolean {
  if (typeof value === 'string') {
    size.bound += 6 * value.length + 3;
    return value.isWellFormed();
  }
  if (typeof value !== 'object' || value === null) {
    size.bound += SCALAR_JSON_BOUND;
    return true;
  }
  if (depth >= maxDepth) return false;
  size.bound += 2;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (!surelyWellFormed(value[index], depth + 1, maxDepth, size)) return false;
    }
    return true;
  }
  for (const key in value) {
    size.bound += 6 * key.length + 4;
    if (!key.isWellFormed()) return false;
    if (!surelyWellFormed((value as Json)[key], depth + 1, maxDepth, size)) return false;
  }
  return true;
}

/**
 * The ways `event` breaks `limits`, or an empty list; stops at the first few problems. A well-formed event is
 * walked once, without building a path; only an event that may break the nesting or Unicode limits is walked
 * again, without recursion (so no nesting can overflow the stack), to say where.
 */
export function checkEventLimits(
  event: unknown,
  limits: EventLimits = DEFAULT_EVENT_LIMITS,
  textLength?: number,
): ValidationIssue[] {
  const size = { bound: 0 };
  const wellFormed = surelyWellFormed(event, 0, limits.maxDepth, size);
  // Measuring facets serialises them again: skipped when the event's own text, or the bound on it, shows that
  // none can be too large.
  const measureFacets = !wellFormed || Math.min(textLength ?? Infinity, size.bound) > limits.maxFacetBytes;
  const issues: ValidationIssue[] = [];
  const text = (value: string, path: string, what: string) => {
    // (NUL, which PostgreSQL cannot store either, is kept as U+FFFD by the writer, as it always was.)
    if (LONE_SURROGATE.test(value))
      issues.push({
        path,
        message: `${what} contains an unpaired UTF-16 surrogate (invalid Unicode); send well-formed UTF-8`,
      });
  };
  // Structure and text, iteratively.
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: event, path: ROOT_PATH, depth: 0 },
  ];
  while (!wellFormed && stack.length > 0 && issues.length < 5) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      text(value, path, 'the text');
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= limits.maxDepth) {
      issues.push({ path: path, message: `is nested deeper than ${limits.maxDepth} levels; flatten it` });
      break;
    }
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        stack.push({ value: value[index], path: appendPath(path, index), depth: depth + 1 });
      }
    } else {
      for (const [key, child] of Object.entries(value as Json)) {
        const childPath = appendPath(path, key);
        text(key, childPath, 'the key');
        stack.push({ value: child, path: childPath, depth: depth + 1 });
      }
    }
  }
  if (issues.length > 0 || !isObject(event)) return issues;

  // A UTF-16 code unit takes at most 3 bytes of UTF-8: short names need no counting.
  const tooLong = (value: unknown): value is string =>
    typeof value === 'string' &&
    value.length * 3 > limits.maxNameBytes &&
    Buffer.byteLength(value, 'utf8') > limits.maxNameBytes;
  const name = (value: unknown, path: string) => {
    if (tooLong(value)) {
      issues.push({
        path: path,
        message: `is ${Buffer.byteLength(value, 'utf8')} bytes long; names may have at most ${limits.maxNameBytes} bytes (UTF-8)`,
      });
    }
  };
  const facets = (container: unknown, path: string) => {
    if (!measureFacets || !isObject(container)) return;
    for (const [key, facet] of Object.entries(container)) {
      const size = JSON.stringify(facet)?.length ?? 0;
      if (size > limits.maxFacetBytes) {
        issues.push({
          path: appendPath(path, key),
          message: `is ${size} bytes of JSON; a facet may have at most ${limits.maxFacetBytes} bytes`,
        });
      }
    }
  };
  const entity = (value: unknown, path: string) => {
    if (!isObject(value)) return;
    name(value.namespace, appendPath(path, 'namespace'));
    name(value.name, appendPath(path, 'name'));
  };
  const dataset = (value: unknown, path: string) => {
    entity(value, path);
    if (!isObject(value)) return;
    for (const key of ['facets', 'inputFacets', 'outputFacets']) facets(value[key], appendPath(path, key));
    const datasetFacets = isObject(value.facets) ? value.facets : {};
    const fields = isObject(datasetFacets.schema) ? datasetFacets.schema.fields : undefined;
    if (Array.isArray(fields) && fields.length > limits.maxFields) {
      issues.push({
        path: appendPath(appendPath(appendPath(path, 'facets'), 'schema'), 'fields'),
        message: `has ${fields.length} fields; a dataset may have at most ${limits.maxFields}`,
      });
    }
    const columns = isObject(datasetFacets.columnLineage) ? datasetFacets.columnLineage.fields : undefined;
    if (isObject(columns) && Object.keys(columns).length > limits.maxFields) {
      issues.push({
        path: appendPath(appendPath(appendPath(path, 'facets'), 'columnLineage'), 'fields'),
        message: `has ${Object.keys(columns).length} output columns; at most ${limits.maxFields} are taken`,
      });
    }
    if (Array.isArray(fields)) {
      fields.forEach((field, index) => {
        // (The path is built only for a name that is too long: most events have many fields.)
        if (isObject(field) && tooLong(field.name)) {
          const fieldPath = appendPath(
            appendPath(appendPath(appendPath(path, 'facets'), 'schema'), 'fields'),
            index,
          );
          name(field.name, appendPath(fieldPath, 'name'));
        }
      });
    }
  };

  const inputs = Array.isArray(event.inputs) ? event.inputs : [];
  const outputs = Array.isArray(event.outputs) ? event.outputs : [];
  if (inputs.length + outputs.length > limits.maxDatasets) {
    issues.push({
      path: appendPath(ROOT_PATH, inputs.length >= outputs.length ? 'inputs' : 'outputs'),
      message: `the event names ${inputs.length} inputs and ${outputs.length} outputs; at most ${limits.maxDatasets} datasets in all are taken from one event: split it`,
    });
    return issues;
  }
  entity(event.job, appendPath(ROOT_PATH, 'job'));
  if (isObject(event.job)) facets(event.job.facets, appendPath(appendPath(ROOT_PATH, 'job'), 'facets'));
  if (isObject(event.run)) facets(event.run.facets, appendPath(appendPath(ROOT_PATH, 'run'), 'facets'));
  dataset(event.dataset, appendPath(ROOT_PATH, 'dataset'));
  inputs.forEach((input, index) => dataset(input, appendPath(appendPath(ROOT_PATH, 'inputs'), index)));
  outputs.forEach((output, index) => dataset(output, appendPath(appendPath(ROOT_PATH, 'outputs'), index)));
  return issues.slice(0, 5);
}
