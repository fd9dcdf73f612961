/**
 * The event validator behind `POST /api/v1/lineage` and the batch endpoint.
 *
 * Lenient mode checks only what the server cannot work without, so that real producer output that Marquez
 * accepts is accepted here too. Strict mode additionally rejects what the official JSON Schemas reject: the
 * core schema of the event's kind, then every standard facet against its own schema. The schemas and the rules
 * that apply them are the client package's (`@headwater/openlineage/validation`), bundled with it; this module
 * adds the lenient stage in front and says what is wrong in the server's words, with JSON paths.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import {
  createValidator as createSchemaValidator,
  type EventValidator as SchemaValidator,
  type SchemaDocument,
  type ValidationIssue as SchemaIssue,
} from '@headwater/openlineage/validation';
import { appendPath, formatPath, resolvePointer, ROOT_PATH } from '../core/json-path.js';
import type { EventKind } from '../model/normalize.js';

/** One thing wrong with an event. */
export interface ValidationIssue {
  /** JSON path of the offending value, e.g. `$.run.runId` or `$.inputs[2].facets.schema.fields[0].name`. */
  readonly path: string;
  /** What is wrong and what is expected, to be read after the path, e.g. `is required: a run needs a runId`. */
  readonly message: string;
}

/** The outcome of validating one event. A failure lists every issue found, not just the first. */
export type ValidationResult =
  | { readonly ok: true; readonly kind: EventKind }
  | { readonly ok: false; readonly kind: EventKind | undefined; readonly issues: readonly ValidationIssue[] };

/** Validates decoded JSON bodies as OpenLineage events. */
export interface Validator {
  /** Validates one event (one element of a batch). Never throws, whatever `event` is. */
  validate(event: unknown): ValidationResult;
}

/**
 * What strict mode asserts beyond the lenient checks.
 * - `structure`: the official OpenLineage 2-0-2 core schema and the standard facet schemas, for structure,
 *   required fields, types, enums and constants, but not `format`, so the `dataSource.uri: "file"` real Spark
 *   listeners send passes.
 * - `formats`: the same, and the `date-time`, `uuid` and `uri` formats too (what the spec's own tests assert).
 */
export type StrictLevel = 'structure' | 'formats';

/** The strict levels, in order of what they reject. */
export const STRICT_LEVELS: readonly StrictLevel[] = ['structure', 'formats'];

/** Options of {@link createValidator}. */
export interface ValidatorOptions {
  /**
   * `false` (the server's default, like Marquez): require only what the server needs to store the event.
   * A {@link StrictLevel}: also reject what the official schemas (bundled with `@headwater/openlineage`) reject.
   */
  readonly strict: false | StrictLevel;
  /**
   * A folder of more OpenLineage schemas for strict mode, e.g. newer facet versions, registered by `$id` beside
   * the bundled ones (a schema with the `$id` of a bundled one replaces it; the newest version of each facet
   * schema validates its facets). Laid out like `https://openlineage.io/spec/`, e.g.
   * `<specDir>/facets/1-3-0/ParentRunFacet.json`. Optional; ignored when `strict` is false.
   */
  readonly specDir?: string | undefined;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(['START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER']);

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The kind of an event chosen by shape, as the spec's OpenAPI does: `run` present -> `'run'`; else `dataset`
 * -> `'dataset'`; else `job` -> `'job'`; else (or when `event` is not an object) `undefined`.
 *
 * @example
 * eventKindOf({ run: { runId: '…' }, job: { namespace: 'ns', name: 'j' } }); // 'run'
 */
export function eventKindOf(event: unknown): EventKind | undefined {
  if (!isObject(event)) return undefined;
  if (event.run !== undefined) return 'run';
  if (event.dataset !== undefined) return 'dataset';
  if (event.job !== undefined) return 'job';
  return undefined;
}

/**
 * Creates a validator. Everything (schema loading and compilation) happens here, once; `validate` only runs
 * compiled code. Throws when `specDir` is given for strict mode and cannot be read or its schemas do not compile.
 *
 * @example
 * const validator = createValidator({ strict: 'structure' });
 * const result = validator.validate(JSON.parse(body));
 * if (!result.ok) for (const issue of result.issues) console.log(`${issue.path} ${issue.message}`);
 */
export function createValidator(options: ValidatorOptions): Validator {
  if (options.strict === false) return { validate: validateLenient };
  return createStrictValidator(options.strict, options.specDir === '' ? undefined : options.specDir);
}

// ---------------------------------------------------------------------------------------------------------
// Lenient checks (also the first stage of strict mode)
// ---------------------------------------------------------------------------------------------------------

const OK: Readonly<Record<EventKind, ValidationResult>> = {
  run: Object.freeze({ ok: true, kind: 'run' }),
  dataset: Object.freeze({ ok: true, kind: 'dataset' }),
  job: Object.freeze({ ok: true, kind: 'job' }),
};

function validateLenient(event: unknown): ValidationResult {
  const issues: ValidationIssue[] = [];
  const kind = checkEnvelope(event, issues);
  return issues.length === 0 && kind !== undefined ? OK[kind] : { ok: false, kind, issues };
}

/** A schemaURL that names the JobEvent definition (`.../OpenLineage.json#/$defs/JobEvent`, or `definitions`). */
const JOB_EVENT_URL = /\/JobEvent$/;

/** Runs the lenient checks, pushing every issue found; returns the kind by shape. */
function checkEnvelope(event: unknown, issues: ValidationIssue[]): EventKind | undefined {
  if (!isObject(event)) {
    issues.push({
      path: ROOT_PATH,
      message: `must be a JSON object (an OpenLineage RunEvent, DatasetEvent or JobEvent), got ${describe(event)}`,
    });
    return undefined;
  }
  checkEventTime(event.eventTime, issues);
  checkText(
    event.producer,
    '$.producer',
    'an event needs a producer, a URI naming the code that emitted it',
    'a URI naming the code that emitted the event',
    issues,
  );
  const eventType = event.eventType;
  // null counts as absent here, as for every optional member (see checkDatasets).
  if (eventType != null && (typeof eventType !== 'string' || !EVENT_TYPES.has(eventType))) {
    issues.push({
      path: '$.eventType',
      message: `must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER, got ${describe(eventType)}`,
    });
  }
  const kind = eventKindOf(event);
  switch (kind) {
    case 'run':
      if (checkObject(event.run, '$.run', 'an object with a runId (a UUID)', issues)) {
        checkText(event.run.runId, '$.run.runId', 'a run needs a runId (a UUID)', 'a UUID', issues);
        checkFacets(event.run.facets, '$.run.facets', issues);
      }
      checkJob(event.job, 'a run event needs the job it is a run of: { namespace, name }', issues);
      checkDatasets(event.inputs, 'input', issues);
      checkDatasets(event.outputs, 'output', issues);
      break;
    case 'job':
      // eventType is a run's state: the spec's RunEvent has it, its JobEvent does not. Stored as a JobEvent, such
      // an event would silently lose the run it reports on. A schemaURL naming JobEvent says what it is (Marquez
      // dispatches on it too, and ignores the eventType, as its own test event does).
      if (
        eventType != null &&
        !(typeof event.schemaURL === 'string' && JOB_EVENT_URL.test(event.schemaURL))
      ) {
        issues.push({
          path: '$.run',
          message:
            'is required: an event with an eventType is a RunEvent, which needs the run it reports on ' +
            '({ "runId": "<a UUID>" }); add the run, or remove eventType (or give the JobEvent schemaURL) ' +
            'to send a JobEvent',
        });
      }
      checkJob(event.job, '', issues);
      checkDatasets(event.inputs, 'input', issues);
      checkDatasets(event.outputs, 'output', issues);
      break;
    case 'dataset':
      if (checkObject(event.dataset, '$.dataset', 'a dataset object with a namespace and a name', issues)) {
        checkDatasetName(event.dataset, '$.dataset', 'a dataset', issues);
        checkFacets(event.dataset.facets, '$.dataset.facets', issues);
      }
      break;
    case undefined:
      issues.push({
        path: ROOT_PATH,
        message:
          'must be an OpenLineage event: a RunEvent (with "run" and "job"), a DatasetEvent (with "dataset") ' +
          'or a JobEvent (with "job"), but it has none of run, dataset and job',
      });
      break;
  }
  return kind;
}

// Date part, time with optional seconds and fraction (any number of digits: nanoseconds occur in practice),
// optional offset: Python's isoparse and Marquez both accept a missing offset, so a lenient server must too.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)?$/;

function isIsoDateTime(text: string): boolean {
  const match = ISO_DATE_TIME.exec(text);
  if (match === null) return false;
  const part = (index: number): number => Number(match[index] ?? 0);
  const year = part(1);
  const month = part(2);
  const day = part(3);
  const leapYear = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leapYear ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    part(4) <= 23 &&
    part(5) <= 59 &&
    part(6) <= 60 && // 60: a leap second
    part(7) <= 23 &&
    part(8) <= 59
  );
}

const EVENT_TIME_EXAMPLE = '"2024-05-01T12:30:00.000Z"';

function checkEventTime(value: unknown, issues: ValidationIssue[]): void {
  if (value === undefined) {
    issues.push({
      path: '$.eventTime',
      message: `is required: the time the event occurred, an ISO-8601 date-time such as ${EVENT_TIME_EXAMPLE}`,
    });
  } else if (typeof value !== 'string' || !isIsoDateTime(value)) {
    issues.push({
      path: '$.eventTime',
      message: `must be an ISO-8601 date-time with at least hours and minutes, such as ${EVENT_TIME_EXAMPLE}, got ${describe(value)}`,
    });
  }
}

function checkText(
  value: unknown,
  path: string,
  whyRequired: string,
  expected: string,
  issues: ValidationIssue[],
): void {
  if (value === undefined) {
    issues.push({ path, message: `is required: ${whyRequired}` });
  } else if (typeof value !== 'string' || value === '') {
    issues.push({ path, message: `must be a non-empty string (${expected}), got ${describe(value)}` });
  }
}

function checkObject(
  value: unknown,
  path: string,
  expected: string,
  issues: ValidationIssue[],
): value is JsonObject {
  if (isObject(value)) return true;
  issues.push({
    path,
    message: value === undefined ? `is required: ${expected}` : `must be ${expected}, got ${describe(value)}`,
  });
  return false;
}

function checkJob(value: unknown, whyRequired: string, issues: ValidationIssue[]): void {
  const expected = 'a job object with a namespace and a name';
  if (value === undefined && whyRequired !== '') {
    issues.push({ path: '$.job', message: `is required: ${whyRequired}` });
    return;
  }
  if (!checkObject(value, '$.job', expected, issues)) return;
  checkText(value.namespace, '$.job.namespace', 'a job needs a namespace', 'the job namespace', issues);
  checkText(value.name, '$.job.name', 'a job needs a name', 'the job name', issues);
  checkFacets(value.facets, '$.job.facets', issues);
}

function checkDatasetName(dataset: JsonObject, path: string, what: string, issues: ValidationIssue[]): void {
  checkText(
    dataset.namespace,
    `${path}.namespace`,
    `${what} needs a namespace`,
    'the dataset namespace',
    issues,
  );
  checkText(dataset.name, `${path}.name`, `${what} needs a name`, 'the dataset name', issues);
}

// Optional members are also accepted as null: some client serialisers write unset fields as null, and
// Marquez treats them as absent.
function checkDatasets(value: unknown, role: 'input' | 'output', issues: ValidationIssue[]): void {
  if (value == null) return;
  const listPath = role === 'input' ? '$.inputs' : '$.outputs';
  if (!Array.isArray(value)) {
    issues.push({
      path: listPath,
      message: `must be an array of ${role} datasets ({ namespace, name }), got ${describe(value)}`,
    });
    return;
  }
  const roleFacets = role === 'input' ? 'inputFacets' : 'outputFacets';
  for (let index = 0; index < value.length; index++) {
    const dataset: unknown = value[index];
    const path = `${listPath}[${index}]`;
    if (!checkObject(dataset, path, `an ${role} dataset object with a namespace and a name`, issues))
      continue;
    checkDatasetName(dataset, path, `an ${role} dataset`, issues);
    checkFacets(dataset.facets, `${path}.facets`, issues);
    checkFacets(dataset[roleFacets], `${path}.${roleFacets}`, issues);
  }
}

function checkFacets(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (value == null || isObject(value)) return;
  issues.push({ path, message: `must be an object mapping facet names to facets, got ${describe(value)}` });
}

/** A short description of a value for messages; never throws, whatever the value. */
function describe(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value.length > 60 ? `${JSON.stringify(value.slice(0, 57))}…` : JSON.stringify(value);
    case 'undefined':
      return 'nothing';
    case 'object':
      if (value === null) return 'null';
      return Array.isArray(value) ? 'an array' : 'an object';
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      return `a ${typeof value}`;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Strict mode
// ---------------------------------------------------------------------------------------------------------

function createStrictValidator(level: StrictLevel, specDir: string | undefined): Validator {
  const added = specDir === undefined ? [] : loadSchemas(specDir);
  let schemas: SchemaValidator;
  try {
    schemas = createSchemaValidator({ formats: level === 'formats', schemas: added });
  } catch (cause) {
    throw new Error(
      `createValidator: the OpenLineage schemas in specDir ${String(specDir)} do not compile with the bundled ` +
        'ones; check the files (a facet schema must refer to the core schema by its $id)',
      { cause },
    );
  }
  return {
    validate(event: unknown): ValidationResult {
      const issues: ValidationIssue[] = [];
      const kind = checkEnvelope(event, issues);
      // Without an object of a known kind there is no schema to pick; the lenient issue says why.
      if (kind === undefined || !isObject(event)) return { ok: false, kind, issues };
      const result = schemas.validate(event);
      if (issues.length === 0 && result.valid) return OK[kind];
      return { ok: false, kind, issues: mergeIssues(issues, describeIssues(result.errors, event)) };
    },
  };
}

/** The schema documents (JSON files with an `$id`) in a folder and its subfolders. */
function loadSchemas(specDir: string): SchemaDocument[] {
  let names: string[];
  try {
    names = readdirSync(specDir, { recursive: true, encoding: 'utf8' });
  } catch (cause) {
    throw new Error(
      `createValidator: cannot read specDir ${specDir}; it must be the folder of the published OpenLineage schemas`,
      { cause },
    );
  }
  const schemas: SchemaDocument[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const file = path.join(specDir, name);
    let schema: unknown;
    try {
      schema = JSON.parse(readFileSync(file, 'utf8'));
    } catch (cause) {
      throw new Error(`createValidator: cannot read the JSON Schema ${file}; check the file`, { cause });
    }
    // A file without $id cannot be the target of a $ref, so it plays no part in validation.
    if (isObject(schema) && typeof schema.$id === 'string') schemas.push(schema as SchemaDocument);
  }
  return schemas;
}

/** The schema issues in the server's words: JSON paths from `$`, the offending value, the schema's name. */
function describeIssues(errors: readonly SchemaIssue[], event: JsonObject): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const error of errors) {
    // anyOf/oneOf only summarise the failures of their branches, which are reported with better paths.
    if (
      (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') &&
      errors.some((other) => other !== error && isAtOrBelow(other.path, error.path))
    ) {
      continue;
    }
    // A `required` issue's path already names the missing member (the client appends it).
    const { steps, value } = resolvePointer(event, error.path);
    const { params } = error;
    let issuePath = formatPath(steps);
    let message: string;
    switch (error.keyword) {
      case 'required':
        message = 'is required';
        break;
      case 'additionalProperties':
        issuePath = appendPath(issuePath, String(params.additionalProperty));
        message = 'is not allowed here';
        break;
      case 'format':
        message = `must be a valid ${String(params.format)}, got ${describe(value)}`;
        break;
      case 'type':
        message = `must be of type ${String(params.type)}, got ${describe(value)}`;
        break;
      case 'enum':
        message = `must be one of ${(params.allowedValues as unknown[]).map(describe).join(', ')}, got ${describe(value)}`;
        break;
      case 'const':
        message = `must be ${describe(params.allowedValue)}, got ${describe(value)}`;
        break;
      default:
        message = error.message;
    }
    out.push({ path: issuePath, message: `${message} (per ${schemaLabel(error.schemaURL)})` });
  }
  return out;
}

const CORE_SCHEMA_URL = /\/spec\/(\d+-\d+-\d+)\/OpenLineage\.json#\/\$defs\/([^/]+)$/;
const FACET_SCHEMA_URL = /\/spec\/facets\/(\d+-\d+-\d+)\/[^/]+\.json#\/\$defs\/([^/]+)$/;

/** Names a schema in messages: `OpenLineage 2-0-2 RunEvent`, `ParentRunFacet 1-2-0`, else its URL. */
function schemaLabel(schemaURL: string): string {
  const core = CORE_SCHEMA_URL.exec(schemaURL);
  if (core !== null) return `OpenLineage ${core[1]} ${core[2]}`;
  const facet = FACET_SCHEMA_URL.exec(schemaURL);
  return facet === null ? schemaURL : `${facet[2]} ${facet[1]}`;
}

function isAtOrBelow(pointer: string, ancestor: string): boolean {
  return pointer === ancestor || pointer.startsWith(`${ancestor}/`);
}

/**
 * Lenient issues first; schema issues at or under a path the lenient stage already reported are dropped, as
 * are repeats of the same complaint from another schema (the core and a facet schema both require `_producer`).
 */
function mergeIssues(
  lenient: readonly ValidationIssue[],
  fromSchemas: readonly ValidationIssue[],
): ValidationIssue[] {
  const merged = [...lenient];
  const seen = new Set<string>();
  for (const issue of fromSchemas) {
    if (lenient.some(({ path }) => isPathAtOrBelow(issue.path, path))) continue;
    const complaint = `${issue.path}\u0000${issue.message.replace(/ \(per [^)]*\)$/, '')}`;
    if (seen.has(complaint)) continue;
    seen.add(complaint);
    merged.push(issue);
  }
  return merged;
}

function isPathAtOrBelow(candidate: string, ancestor: string): boolean {
  if (!candidate.startsWith(ancestor)) return false;
  const next = candidate.charAt(ancestor.length);
  return next === '' || next === '.' || next === '[';
}
