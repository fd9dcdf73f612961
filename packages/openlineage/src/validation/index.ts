/**
 * Optional runtime validation of OpenLineage events against the official JSON Schemas (core 2-0-2 and the
 * standard facets this package was generated from). A separate entry point, so the core client stays free of
 * dependencies: install the optional peers first, `npm i ajv ajv-formats`.
 *
 * @packageDocumentation
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { FacetContainer } from '../generated/model.js';
import { CORE_SCHEMA_ID, FACETS } from '../generated/model.js';
import type { SchemaDocument } from '../generated/schemas.js';
import { CORE_SCHEMA, FACET_SCHEMAS } from '../generated/schemas.js';

export type { SchemaDocument } from '../generated/schemas.js';
/** The schemas the model was generated from (core 2-0-2 and every standard and registry facet), for reuse. */
export { CORE_SCHEMA, FACET_SCHEMAS } from '../generated/schemas.js';

// ajv-formats is CommonJS; under Node's ESM loader the default import is `module.exports`, whose `default`
// property is the plugin itself. Reading `.default` works for both loaders and both type views.
const addFormats = formatsModule.default;

/** One problem found in an event. */
export interface ValidationIssue {
  /** JSON Pointer to the offending value, e.g. `/run/facets/parent/run/runId`. */
  readonly path: string;
  /** What is wrong, e.g. `must match format "uuid"`. */
  readonly message: string;
  /** The schema (and definition) that rejected it. */
  readonly schemaURL: string;
  /** The JSON Schema keyword that failed, e.g. `required`, `type`, `format`, `enum`. */
  readonly keyword: string;
  /** The keyword's details, e.g. `{ missingProperty: 'runId' }`, `{ format: 'uri' }`, `{ allowedValues: [...] }`. */
  readonly params: Readonly<Record<string, unknown>>;
}

/** The outcome of validating one event. */
export type ValidationResult =
  | { readonly valid: true; readonly errors: readonly [] }
  | { readonly valid: false; readonly errors: readonly ValidationIssue[] };

/** Options of {@link createValidator}. */
export interface ValidatorOptions {
  /**
   * Assert `format` (`date-time`, `uuid`, `uri`). Real producers often send tz-less times or `dataSource.uri`
   * values such as `bigquery`; turn this off to accept them.
   * @default true
   */
  readonly formats?: boolean;
  /**
   * Validate the content of standard facets too (the core schema alone only checks `_producer` and
   * `_schemaURL` of each facet). Facets with unknown keys (custom facets) are never checked beyond that.
   * @default true
   */
  readonly facets?: boolean;
  /**
   * More schema documents to register by `$id`, e.g. a newer facet version. A document with the `$id` of a
   * built-in one replaces it; of all the versions of one facet schema (`facets/<version>/<Name>.json`), the
   * newest validates the facets it declares (see {@link facetSchemaTable}).
   */
  readonly schemas?: readonly SchemaDocument[];
}

/** Validates events against the OpenLineage schemas. */
export interface EventValidator {
  /** Validates one event; never throws. */
  validate(event: unknown): ValidationResult;
}

type Kind = 'RunEvent' | 'DatasetEvent' | 'JobEvent';

/**
 * Creates a validator with every schema registered offline by `$id` (no network).
 *
 * The event kind is decided first (`run` present: RunEvent; else `dataset`: DatasetEvent; else JobEvent) and the
 * event validated against that definition, which gives precise errors instead of the core schema's `oneOf`
 * "must match exactly one schema". Then each standard facet is validated against its own schema, found by
 * key and container.
 *
 * @example
 * ```ts
 * import { createValidator } from '@headwater/openlineage/validation';
 * const result = createValidator().validate(event);
 * if (!result.valid) for (const e of result.errors) console.error(`${e.path}: ${e.message}`);
 * ```
 */
export function createValidator(options: ValidatorOptions = {}): EventValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: options.formats ?? true });
  addFormats(ajv);
  const documents = new Map<string, SchemaDocument>();
  for (const schema of [CORE_SCHEMA, ...FACET_SCHEMAS, ...(options.schemas ?? [])]) {
    documents.set(schema.$id, schema);
  }
  for (const schema of documents.values()) {
    try {
      ajv.addSchema(schema);
    } catch (cause) {
      throw new Error(`createValidator: cannot register the schema ${schema.$id}; check the document`, {
        cause,
      });
    }
  }
  // Compiled here, once, so that a broken schema fails at construction and validate() only runs code.
  const compile = (ref: string): ValidateFunction => {
    try {
      const validate = ajv.getSchema(ref);
      if (validate !== undefined) return validate;
    } catch (cause) {
      throw new Error(`createValidator: cannot compile ${ref}; check the schemas it refers to`, { cause });
    }
    throw new Error(`createValidator: no schema registered for ${ref}`);
  };
  const core = new Map<Kind, ValidateFunction>(
    (['RunEvent', 'DatasetEvent', 'JobEvent'] as const).map((kind) => [
      kind,
      compile(`${CORE_SCHEMA_ID}#/$defs/${kind}`),
    ]),
  );
  const facets = new Map<string, { ref: string; validate: ValidateFunction }>();
  if (options.facets !== false) {
    for (const [key, ref] of facetSchemaTable(documents.values()))
      facets.set(key, { ref, validate: compile(ref) });
  }

  const check = (
    validate: ValidateFunction,
    ref: string,
    value: unknown,
    base: string,
    issues: ValidationIssue[],
  ) => {
    if (!validate(value)) issues.push(...toIssues(validate.errors ?? [], base, ref));
  };

  const checkFacets = (
    value: unknown,
    container: FacetContainer,
    base: string,
    issues: ValidationIssue[],
  ): void => {
    if (!isObject(value)) return;
    for (const [key, facet] of Object.entries(value)) {
      const schema = facets.get(`${container}:${key}`);
      if (schema === undefined) continue; // a custom facet: the core schema's _producer/_schemaURL only
      // The spec's deletion marker carries no payload, so the facet's own required fields cannot apply.
      if (DELETABLE.has(container) && isObject(facet) && facet._deleted === true) continue;
      check(schema.validate, schema.ref, facet, `${base}/${escapePointer(key)}`, issues);
    }
  };

  return {
    validate(event) {
      const issues: ValidationIssue[] = [];
      try {
        if (!isObject(event)) {
          return {
            valid: false,
            errors: [
              {
                path: '',
                message: 'must be a JSON object',
                schemaURL: CORE_SCHEMA_ID,
                keyword: 'type',
                params: {},
              },
            ],
          };
        }
        const kind: Kind =
          event.run !== undefined ? 'RunEvent' : event.dataset !== undefined ? 'DatasetEvent' : 'JobEvent';
        check(core.get(kind)!, `${CORE_SCHEMA_ID}#/$defs/${kind}`, event, '', issues);
        if (facets.size > 0) {
          const member = (value: unknown, name: string): unknown =>
            isObject(value) ? value[name] : undefined;
          if (kind === 'DatasetEvent') {
            checkFacets(member(event.dataset, 'facets'), 'dataset', '/dataset/facets', issues);
          } else {
            checkFacets(member(event.run, 'facets'), 'run', '/run/facets', issues);
            checkFacets(member(event.job, 'facets'), 'job', '/job/facets', issues);
          }
          for (const [field, container, specific] of [
            ['inputs', 'inputDataset', 'inputFacets'],
            ['outputs', 'outputDataset', 'outputFacets'],
          ] as const) {
            const datasets = event[field];
            if (kind === 'DatasetEvent' || !Array.isArray(datasets)) continue;
            datasets.forEach((dataset: unknown, index) => {
              checkFacets(member(dataset, 'facets'), 'dataset', `/${field}/${index}/facets`, issues);
              checkFacets(member(dataset, specific), container, `/${field}/${index}/${specific}`, issues);
            });
          }
        }
      } catch (thrown) {
        const message = `validator error: ${thrown instanceof Error ? thrown.message : String(thrown)}`;
        issues.push({ path: '', message, schemaURL: CORE_SCHEMA_ID, keyword: 'error', params: {} });
      }
      return issues.length === 0 ? { valid: true, errors: [] } : { valid: false, errors: dedupe(issues) };
    },
  };
}

/** The schema (`$id#/$defs/<Def>`) the validator uses for a standard facet key in a container. */
export function facetSchemaURL(container: FacetContainer, key: string): string | undefined {
  return Object.values(FACETS).find((facet) => facet.container === container && facet.key === key)?.schemaURL;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The facet containers whose base (JobFacet, DatasetFacet) defines `_deleted: true` as "delete this facet". */
const DELETABLE: ReadonlySet<FacetContainer> = new Set(['job', 'dataset']);

const CONTAINER_BY_BASE: Readonly<Record<string, FacetContainer>> = {
  RunFacet: 'run',
  JobFacet: 'job',
  DatasetFacet: 'dataset',
  InputDatasetFacet: 'inputDataset',
  OutputDatasetFacet: 'outputDataset',
};

const FACET_SCHEMA_ID = /^https:\/\/openlineage\.io\/spec\/facets\/(\d+)-(\d+)-(\d+)\/([^/]+)\.json$/;
const BASE_REF = /#\/(?:\$defs|definitions)\/([A-Za-z]+)$/;
const LOCAL_REF = /^#\/(\$defs|definitions)\/([^/]+)$/;

/**
 * Which standard facet schema validates which facet: `<container>:<key>` (e.g. `run:parent`,
 * `inputDataset:subset`) to the definition's ref (`<$id>#/$defs/<Def>`), over a set of schema documents.
 *
 * Of all the versions of one facet schema file (`$id` `https://openlineage.io/spec/facets/<version>/<Name>.json`)
 * the newest counts. A facet file declares its key as its one top-level property, which leads (through `$ref`,
 * `anyOf` and `oneOf`) to definitions; the base a definition extends (its `allOf[0]`, e.g. `RunFacet`) names the
 * container. One key can name different definitions in different containers (`lineage`, `subset`, `tags`...).
 *
 * @example
 * facetSchemaTable(FACET_SCHEMAS).get('run:parent');
 * // 'https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet'
 */
export function facetSchemaTable(documents: Iterable<SchemaDocument>): ReadonlyMap<string, string> {
  const newest = new Map<string, { version: number[]; schema: SchemaDocument }>();
  for (const schema of documents) {
    const match = FACET_SCHEMA_ID.exec(schema.$id);
    if (match === null) continue;
    const name = match[4]!;
    const version = [Number(match[1]), Number(match[2]), Number(match[3])];
    const known = newest.get(name);
    if (known === undefined || compareVersions(version, known.version) > 0)
      newest.set(name, { version, schema });
  }
  const table = new Map<string, string>();
  for (const { schema } of [...newest.values()].sort((a, b) => a.schema.$id.localeCompare(b.schema.$id))) {
    const properties = schema.properties;
    if (!isObject(properties)) continue;
    const keys = Object.keys(properties);
    const key = keys[0];
    if (keys.length !== 1 || key === undefined) continue;
    for (const { ref, container } of facetDefinitions(schema, properties[key], new Set())) {
      const entry = `${container}:${key}`;
      if (!table.has(entry)) table.set(entry, `${schema.$id}${ref}`);
    }
  }
  return table;
}

/** The local definitions a facet property leads to, through `$ref`, `anyOf` and `oneOf`, with their container. */
function facetDefinitions(
  schema: SchemaDocument,
  node: unknown,
  seen: Set<string>,
): { ref: string; container: FacetContainer }[] {
  if (!isObject(node)) return [];
  const found: { ref: string; container: FacetContainer }[] = [];
  const local = typeof node.$ref === 'string' ? LOCAL_REF.exec(node.$ref) : null;
  if (local !== null && !seen.has(node.$ref as string)) {
    const ref = node.$ref as string;
    seen.add(ref);
    const defs = schema[local[1]!];
    const def = isObject(defs) ? defs[local[2]!] : undefined;
    const first: unknown = isObject(def) && Array.isArray(def.allOf) ? def.allOf[0] : undefined;
    const base =
      isObject(first) && typeof first.$ref === 'string' ? BASE_REF.exec(first.$ref)?.[1] : undefined;
    const container = base === undefined ? undefined : CONTAINER_BY_BASE[base];
    if (container !== undefined) found.push({ ref, container });
    else found.push(...facetDefinitions(schema, def, seen));
  }
  for (const wrapper of [node.anyOf, node.oneOf]) {
    if (Array.isArray(wrapper))
      for (const branch of wrapper) found.push(...facetDefinitions(schema, branch, seen));
  }
  return found;
}

function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function toIssues(errors: readonly ErrorObject[], base: string, schemaURL: string): ValidationIssue[] {
  return errors.map((error) => {
    const missing =
      error.keyword === 'required'
        ? (error.params as { missingProperty?: string }).missingProperty
        : undefined;
    const path = base + error.instancePath + (missing === undefined ? '' : `/${escapePointer(missing)}`);
    const params = error.params as Record<string, unknown>;
    return { path, message: error.message ?? error.keyword, schemaURL, keyword: error.keyword, params };
  });
}

function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
