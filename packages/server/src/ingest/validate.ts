/**
 * The event validator behind `POST /api/v1/lineage` and the batch endpoint.
 *
 * Lenient mode checks only what the server cannot work without, so that real producer output that Marquez
 * accepts is accepted here too. Strict mode additionally rejects what the official JSON Schemas reject: the
 * core schema of the event's kind, then every standard facet against its own schema.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { appendPath, formatPath, resolvePointer, ROOT_PATH } from './json-path.js';

/** The three OpenLineage event kinds: RunEvent, DatasetEvent and JobEvent. */
export type EventKind = 'run' | 'dataset' | 'job';

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

/** Options of {@link createValidator}. */
export interface ValidatorOptions {
  /**
   * `false` (the server's default, like Marquez): require only what the server needs to store the event.
   * `true`: also reject whatever the official OpenLineage 2-0-2 schemas and standard facet schemas reject,
   * with the formats `date-time`, `uuid` and `uri` asserted.
   */
  readonly strict: boolean;
  /**
   * Folder of the published OpenLineage schemas, laid out like `https://openlineage.io/spec/`: the schema whose
   * `$id` is `https://openlineage.io/spec/<rel>` lives at `<specDir>/<rel>` (e.g. `2-0-2/OpenLineage.json`,
   * `facets/1-2-0/ParentRunFacet.json`). Required when `strict` is true; ignored otherwise.
   */
  readonly specDir?: string;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(['START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER']);

/** `$id` of the core schema strict mode validates against. */
const CORE_SCHEMA_ID = 'https://openlineage.io/spec/2-0-2/OpenLineage.json';

const CORE_DEFS: Readonly<Record<EventKind, string>> = {
  run: 'RunEvent',
  dataset: 'DatasetEvent',
  job: 'JobEvent',
};

/** The base facet a standard facet extends decides which facet container it belongs in. */
type FacetBase = 'RunFacet' | 'JobFacet' | 'DatasetFacet' | 'InputDatasetFacet' | 'OutputDatasetFacet';

const FACET_BASE_REF =
  /#\/(?:\$defs|definitions)\/(RunFacet|JobFacet|DatasetFacet|InputDatasetFacet|OutputDatasetFacet)$/;
const LOCAL_DEF_REF = /^#\/(?:\$defs|definitions)\/([^/]+)$/;
const FACET_SCHEMA_ID = /^https:\/\/openlineage\.io\/spec\/facets\/(\d+)-(\d+)-(\d+)\/([^/]+)\.json$/;

/** The facet bases that define `_deleted: true` as "delete this facet" (JobFacet and DatasetFacet). */
const DELETABLE: ReadonlySet<FacetBase> = new Set(['JobFacet', 'DatasetFacet']);

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
 * compiled code. Throws when `strict` is true and `specDir` is missing or does not hold the schemas.
 *
 * @example
 * const validator = createValidator({ strict: true, specDir: '/srv/headwater/spec' });
 * const result = validator.validate(JSON.parse(body));
 * if (!result.ok) for (const issue of result.issues) console.log(`${issue.path} ${issue.message}`);
 */
export function createValidator(options: ValidatorOptions): Validator {
  if (!options.strict) return { validate: validateLenient };
  if (options.specDir === undefined || options.specDir === '') {
    throw new Error(
      'createValidator: strict validation needs specDir, the folder of the published OpenLineage schemas ' +
        '(laid out like https://openlineage.io/spec/, e.g. <specDir>/2-0-2/OpenLineage.json); pass it or use strict: false',
    );
  }
  return createStrictValidator(options.specDir);
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

interface CompiledSchema {
  readonly validate: ValidateFunction;
  /** Names the schema in messages, e.g. `ParentRunFacet 1-2-0`. */
  readonly label: string;
}

type FacetTable = Readonly<Record<FacetBase, ReadonlyMap<string, CompiledSchema>>>;

function createStrictValidator(specDir: string): Validator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // ajv-formats is CommonJS: under nodenext the default import is module.exports, whose .default is the plugin.
  ajvFormats.default(ajv, ['date-time', 'uuid', 'uri']);
  const schemas = loadSchemas(specDir);
  for (const { file, schema } of schemas) {
    try {
      ajv.addSchema(schema);
    } catch (cause) {
      throw new Error(`createValidator: cannot register the OpenLineage schema ${file}; check the file`, {
        cause,
      });
    }
  }
  const compile = (ref: string | readonly string[], label: string): CompiledSchema => {
    const schema = typeof ref === 'string' ? { $ref: ref } : { anyOf: ref.map(($ref) => ({ $ref })) };
    try {
      return { validate: ajv.compile(schema), label };
    } catch (cause) {
      throw new Error(
        `createValidator: cannot compile ${String(ref)} from ${specDir}; ` +
          'specDir must hold the published OpenLineage schemas, core 2-0-2 included',
        { cause },
      );
    }
  };
  // Validating against the kind's own definition, not the root oneOf, whose errors cannot say what is wrong.
  const compileCore = (kind: EventKind): CompiledSchema =>
    compile(`${CORE_SCHEMA_ID}#/$defs/${CORE_DEFS[kind]}`, `OpenLineage 2-0-2 ${CORE_DEFS[kind]}`);
  const core: Readonly<Record<EventKind, CompiledSchema>> = {
    run: compileCore('run'),
    dataset: compileCore('dataset'),
    job: compileCore('job'),
  };
  const facets = compileFacetTable(schemas, compile);

  return {
    validate(event: unknown): ValidationResult {
      const issues: ValidationIssue[] = [];
      const kind = checkEnvelope(event, issues);
      // Without an object of a known kind there is no schema to pick; the lenient issue says why.
      if (kind === undefined || !isObject(event)) return { ok: false, kind, issues };

      const schemaIssues: ValidationIssue[] = [];
      const coreSchema = core[kind];
      if (!coreSchema.validate(event)) {
        collectErrors(coreSchema.validate.errors, event, ROOT_PATH, coreSchema.label, schemaIssues);
      }
      forEachFacetContainer(event, kind, (container, base, containerPath) => {
        const table = facets[base];
        for (const key of Object.keys(container)) {
          const facetSchema = table.get(key);
          if (facetSchema === undefined) continue; // a custom facet: any content is fine
          const facet = container[key];
          // The spec's deletion marker carries no payload, so the facet's own required fields cannot apply.
          if (DELETABLE.has(base) && isObject(facet) && facet._deleted === true) continue;
          if (!facetSchema.validate(facet)) {
            const facetPath = appendPath(containerPath, key);
            collectErrors(facetSchema.validate.errors, facet, facetPath, facetSchema.label, schemaIssues);
          }
        }
      });
      if (issues.length === 0 && schemaIssues.length === 0) return OK[kind];
      return { ok: false, kind, issues: mergeIssues(issues, schemaIssues) };
    },
  };
}

interface LoadedSchema {
  readonly file: string;
  readonly id: string;
  readonly schema: JsonObject;
}

function loadSchemas(specDir: string): LoadedSchema[] {
  let names: string[];
  try {
    names = readdirSync(specDir, { recursive: true, encoding: 'utf8' });
  } catch (cause) {
    throw new Error(
      `createValidator: cannot read specDir ${specDir}; it must be the folder of the published OpenLineage schemas`,
      { cause },
    );
  }
  const schemas: LoadedSchema[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const file = path.join(specDir, name);
    let schema: unknown;
    try {
      schema = JSON.parse(readFileSync(file, 'utf8'));
    } catch (cause) {
      throw new Error(`createValidator: cannot read the JSON Schema ${file}; check the file`, { cause });
    }
    // A file without $id cannot be the target of a $ref, so it plays no part in validation.
    if (isObject(schema) && typeof schema.$id === 'string') schemas.push({ file, id: schema.$id, schema });
  }
  return schemas;
}

/**
 * Maps each facet key to its standard facet schema, per container. The facet set is the newest published
 * version of each facet schema file; a facet file declares its key as its single top-level property, and
 * the base its definition extends (allOf[0]) tells the container. One key can name different schemas in
 * different containers (dataQualityMetrics, ownership, tags, subset, lineage...).
 */
function compileFacetTable(
  schemas: readonly LoadedSchema[],
  compile: (ref: string | readonly string[], label: string) => CompiledSchema,
): FacetTable {
  const newest = new Map<string, { version: readonly number[]; versionText: string; loaded: LoadedSchema }>();
  for (const loaded of schemas) {
    const match = FACET_SCHEMA_ID.exec(loaded.id);
    if (match === null) continue;
    const [, major, minor, patch, name] = match;
    const version = [Number(major), Number(minor), Number(patch)];
    const known = newest.get(name ?? '');
    if (known === undefined || compareVersions(version, known.version) > 0) {
      newest.set(name ?? '', { version, versionText: `${major}-${minor}-${patch}`, loaded });
    }
  }

  const refs: Record<FacetBase, Map<string, { refs: string[]; labels: string[] }>> = {
    RunFacet: new Map(),
    JobFacet: new Map(),
    DatasetFacet: new Map(),
    InputDatasetFacet: new Map(),
    OutputDatasetFacet: new Map(),
  };
  for (const { versionText, loaded } of newest.values()) {
    const properties = loaded.schema.properties;
    if (!isObject(properties)) continue;
    const keys = Object.keys(properties);
    const key = keys[0];
    if (keys.length !== 1 || key === undefined) continue;
    for (const { def, base } of facetDefinitions(loaded.schema, properties[key], new Set())) {
      const entry = refs[base].get(key) ?? { refs: [], labels: [] };
      entry.refs.push(`${loaded.id}#/$defs/${def}`);
      entry.labels.push(`${def} ${versionText}`);
      refs[base].set(key, entry);
    }
  }

  const table = {} as Record<FacetBase, ReadonlyMap<string, CompiledSchema>>;
  for (const base of Object.keys(refs) as FacetBase[]) {
    const compiled = new Map<string, CompiledSchema>();
    for (const [key, entry] of refs[base]) {
      const [only] = entry.refs;
      compiled.set(
        key,
        compile(entry.refs.length === 1 && only !== undefined ? only : entry.refs, entry.labels.join(' or ')),
      );
    }
    table[base] = compiled;
  }
  return table;
}

/** The local definitions a facet property resolves to, through `$ref` and `anyOf`/`oneOf` wrappers. */
function facetDefinitions(
  schema: JsonObject,
  node: unknown,
  seen: Set<string>,
): { def: string; base: FacetBase }[] {
  if (!isObject(node)) return [];
  const found: { def: string; base: FacetBase }[] = [];
  const ref = typeof node.$ref === 'string' ? LOCAL_DEF_REF.exec(node.$ref) : null;
  const name = ref?.[1];
  if (name !== undefined && !seen.has(name)) {
    seen.add(name);
    const defs = isObject(schema.$defs)
      ? schema.$defs
      : isObject(schema.definitions)
        ? schema.definitions
        : {};
    const def = defs[name];
    const base = baseOf(def);
    if (base !== undefined) found.push({ def: name, base });
    else found.push(...facetDefinitions(schema, def, seen));
  }
  for (const wrapper of [node.anyOf, node.oneOf]) {
    if (Array.isArray(wrapper))
      for (const branch of wrapper) found.push(...facetDefinitions(schema, branch, seen));
  }
  return found;
}

function baseOf(def: unknown): FacetBase | undefined {
  if (!isObject(def) || !Array.isArray(def.allOf)) return undefined;
  const first: unknown = def.allOf[0];
  if (!isObject(first) || typeof first.$ref !== 'string') return undefined;
  return FACET_BASE_REF.exec(first.$ref)?.[1] as FacetBase | undefined;
}

function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

type FacetVisitor = (container: JsonObject, base: FacetBase, path: string) => void;

/** Calls `visit` for each facet container of the event that is an object (the lenient stage reports others). */
function forEachFacetContainer(event: JsonObject, kind: EventKind, visit: FacetVisitor): void {
  const visitIfObject = (value: unknown, base: FacetBase, path: string): void => {
    if (isObject(value)) visit(value, base, path);
  };
  if (kind === 'dataset') {
    if (isObject(event.dataset)) visitIfObject(event.dataset.facets, 'DatasetFacet', '$.dataset.facets');
    return;
  }
  if (kind === 'run' && isObject(event.run)) visitIfObject(event.run.facets, 'RunFacet', '$.run.facets');
  if (isObject(event.job)) visitIfObject(event.job.facets, 'JobFacet', '$.job.facets');
  for (const [list, listPath, roleFacets, roleBase] of [
    [event.inputs, '$.inputs', 'inputFacets', 'InputDatasetFacet'],
    [event.outputs, '$.outputs', 'outputFacets', 'OutputDatasetFacet'],
  ] as const) {
    if (!Array.isArray(list)) continue;
    list.forEach((dataset: unknown, index) => {
      if (!isObject(dataset)) return;
      const path = `${listPath}[${index}]`;
      visitIfObject(dataset.facets, 'DatasetFacet', `${path}.facets`);
      visitIfObject(dataset[roleFacets], roleBase, `${path}.${roleFacets}`);
    });
  }
}

/** Turns AJV errors into issues whose paths start at `basePath` (the path of `data` in the event). */
function collectErrors(
  errors: readonly ErrorObject[] | null | undefined,
  data: unknown,
  basePath: string,
  label: string,
  out: ValidationIssue[],
): void {
  if (!errors) return;
  for (const error of errors) {
    // anyOf/oneOf only summarise the failures of their branches, which are reported with better paths.
    if (
      (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') &&
      errors.some((other) => other !== error && isAtOrBelow(other.instancePath, error.instancePath))
    ) {
      continue;
    }
    const { steps, value } = resolvePointer(data, error.instancePath);
    const params = error.params as Record<string, unknown>;
    let issuePath = formatPath(steps, basePath);
    let message: string;
    switch (error.keyword) {
      case 'required':
        issuePath = appendPath(issuePath, String(params.missingProperty));
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
        message = error.message ?? `fails the ${error.keyword} rule`;
    }
    out.push({ path: issuePath, message: `${message} (per ${label})` });
  }
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
