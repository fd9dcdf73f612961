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
   * More schema documents to register by `$id`, e.g. a newer facet version. A facet schema given here replaces
   * the built-in one for the same key and container.
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
  const extra = options.schemas ?? [];
  const documents = new Map<string, SchemaDocument>();
  for (const schema of [CORE_SCHEMA, ...FACET_SCHEMAS, ...extra]) documents.set(schema.$id, schema);
  for (const schema of documents.values()) ajv.addSchema(schema);

  // (container, key) -> schema ref; extra schemas override by the same rule the generator uses.
  const facetRefs = new Map<string, string>();
  for (const facet of Object.values(FACETS))
    facetRefs.set(`${facet.container}:${facet.key}`, facet.schemaURL);
  for (const schema of extra) registerFacetRefs(schema, facetRefs);

  const compiled = new Map<string, ValidateFunction>();
  const validatorFor = (ref: string): ValidateFunction => {
    let validate = compiled.get(ref);
    if (validate === undefined) {
      validate = ajv.getSchema(ref);
      if (validate === undefined) throw new Error(`No schema registered for ${ref}`);
      compiled.set(ref, validate);
    }
    return validate;
  };

  const check = (ref: string, value: unknown, base: string, issues: ValidationIssue[]): void => {
    const validate = validatorFor(ref);
    if (!validate(value)) issues.push(...toIssues(validate.errors ?? [], base, ref));
  };

  const checkFacets = (
    facets: unknown,
    container: FacetContainer,
    base: string,
    issues: ValidationIssue[],
  ): void => {
    if (typeof facets !== 'object' || facets === null || Array.isArray(facets)) return;
    for (const [key, facet] of Object.entries(facets as Record<string, unknown>)) {
      const ref = facetRefs.get(`${container}:${key}`);
      if (ref !== undefined) check(ref, facet, `${base}/${escapePointer(key)}`, issues);
    }
  };

  return {
    validate(event) {
      const issues: ValidationIssue[] = [];
      try {
        if (typeof event !== 'object' || event === null || Array.isArray(event)) {
          return {
            valid: false,
            errors: [{ path: '', message: 'must be a JSON object', schemaURL: CORE_SCHEMA_ID }],
          };
        }
        const record = event as Record<string, unknown>;
        const kind: Kind =
          record.run !== undefined ? 'RunEvent' : record.dataset !== undefined ? 'DatasetEvent' : 'JobEvent';
        check(`${CORE_SCHEMA_ID}#/$defs/${kind}`, event, '', issues);
        if (options.facets !== false) {
          const run = record.run as Record<string, unknown> | undefined;
          const job = record.job as Record<string, unknown> | undefined;
          const dataset = record.dataset as Record<string, unknown> | undefined;
          checkFacets(run?.facets, 'run', '/run/facets', issues);
          checkFacets(job?.facets, 'job', '/job/facets', issues);
          checkFacets(dataset?.facets, 'dataset', '/dataset/facets', issues);
          for (const [field, container] of [
            ['inputs', 'inputDataset'],
            ['outputs', 'outputDataset'],
          ] as const) {
            const datasets = record[field];
            if (!Array.isArray(datasets)) continue;
            datasets.forEach((item: unknown, index) => {
              if (typeof item !== 'object' || item === null) return;
              const d = item as Record<string, unknown>;
              checkFacets(d.facets, 'dataset', `/${field}/${index}/facets`, issues);
              const specific = container === 'inputDataset' ? 'inputFacets' : 'outputFacets';
              checkFacets(d[specific], container, `/${field}/${index}/${specific}`, issues);
            });
          }
        }
      } catch (thrown) {
        const message = `validator error: ${thrown instanceof Error ? thrown.message : String(thrown)}`;
        issues.push({ path: '', message, schemaURL: CORE_SCHEMA_ID });
      }
      return issues.length === 0 ? { valid: true, errors: [] } : { valid: false, errors: dedupe(issues) };
    },
  };
}

/** The schema (`$id#/$defs/<Def>`) the validator uses for a standard facet key in a container. */
export function facetSchemaURL(container: FacetContainer, key: string): string | undefined {
  return Object.values(FACETS).find((facet) => facet.container === container && facet.key === key)?.schemaURL;
}

function registerFacetRefs(schema: SchemaDocument, refs: Map<string, string>): void {
  const properties = schema.properties as
    Record<string, { $ref?: string; anyOf?: { $ref?: string }[]; oneOf?: { $ref?: string }[] }> | undefined;
  const defs = schema.$defs as
    Record<string, { allOf?: { $ref?: string }[]; oneOf?: { $ref?: string }[] }> | undefined;
  if (properties === undefined || defs === undefined) return;
  const containers: Record<string, FacetContainer> = {
    RunFacet: 'run',
    JobFacet: 'job',
    DatasetFacet: 'dataset',
    InputDatasetFacet: 'inputDataset',
    OutputDatasetFacet: 'outputDataset',
  };
  const visit = (key: string, ref: string | undefined, depth: number): void => {
    if (ref === undefined || !ref.startsWith('#/$defs/') || depth > 3) return;
    const name = ref.slice('#/$defs/'.length);
    const def = defs[name];
    const base = def?.allOf?.[0]?.$ref?.split('#/$defs/')[1];
    const container = base === undefined ? undefined : containers[base];
    if (container !== undefined) refs.set(`${container}:${key}`, `${schema.$id}${ref}`);
    else for (const member of def?.oneOf ?? []) visit(key, member.$ref, depth + 1);
  };
  for (const [key, property] of Object.entries(properties)) {
    visit(key, property.$ref, 0);
    for (const member of [...(property.anyOf ?? []), ...(property.oneOf ?? [])]) visit(key, member.$ref, 0);
  }
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
    return { path, message: error.message ?? error.keyword, schemaURL };
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
