/**
 * JSON paths for error reports, in the dotted form people read and `jq`-like tools accept:
 * `$.run.runId`, `$.inputs[2].facets.schema.fields[0].name`, `$.run.facets['spark.logicalPlan']`.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The path of the document root. */
export const ROOT_PATH = '$';

/**
 * Appends one step to a JSON path: a number is an array index, a string an object key. Keys that are not
 * identifiers (`spark.logicalPlan`, `environment-properties`, `""`) use bracket notation, so a path never
 * becomes ambiguous.
 *
 * @example
 * appendPath('$.inputs', 2); // '$.inputs[2]'
 * appendPath('$.run.facets', 'spark.logicalPlan'); // "$.run.facets['spark.logicalPlan']"
 */
export function appendPath(path: string, step: string | number): string {
  if (typeof step === 'number') return `${path}[${step}]`;
  if (IDENTIFIER.test(step)) return `${path}.${step}`;
  return `${path}['${step.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}

/**
 * Formats a list of steps as a JSON path starting at `$`.
 *
 * @example
 * formatPath(['inputs', 0, 'name']); // '$.inputs[0].name'
 */
export function formatPath(steps: readonly (string | number)[], base: string = ROOT_PATH): string {
  let path = base;
  for (const step of steps) path = appendPath(path, step);
  return path;
}

/** The result of following a JSON Pointer through a value. */
export interface ResolvedPointer {
  /** The steps, with numbers where the pointer walked through an array. */
  readonly steps: readonly (string | number)[];
  /** The value the pointer designates, or `undefined` when it points past the data. */
  readonly value: unknown;
}

/**
 * Follows an RFC 6901 JSON Pointer (as in AJV's `instancePath`, e.g. `/inputs/0/facets`) through `root`.
 * The data decides whether a step such as `0` is an array index or an object key, which the pointer alone
 * cannot tell.
 */
export function resolvePointer(root: unknown, pointer: string): ResolvedPointer {
  if (pointer === '') return { steps: [], value: root };
  const steps: (string | number)[] = [];
  let value: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value) && /^(?:0|[1-9][0-9]*)$/.test(token)) {
      const index = Number(token);
      steps.push(index);
      value = value[index];
    } else {
      steps.push(token);
      value =
        value !== null && typeof value === 'object' && Object.hasOwn(value, token)
          ? (value as Record<string, unknown>)[token]
          : undefined;
    }
  }
  return { steps, value };
}
