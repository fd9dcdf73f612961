/**
 * Test helpers that read the official OpenLineage schemas from the shared conformance folder at run time
 * (`<repo root>/../shared/conformance`), so the tests check against the spec itself, not a copy. On a plain clone
 * without that folder, schema checks use the copies this package bundles (src/generated/schemas.ts), which
 * facets.test.ts proves equal to the spec wherever the folder is present (always in CI).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import fc from 'fast-check';

import { CORE_SCHEMA, FACET_SCHEMAS } from '../generated/schemas.js';
import { CONFORMANCE_DIR, hasConformance } from './shared-corpus.js';

export { CONFORMANCE_DIR, hasConformance } from './shared-corpus.js';
export const SPEC_DIR = path.join(CONFORMANCE_DIR, 'spec');
export const PUBLISHED_DIR = path.join(CONFORMANCE_DIR, 'spec-published');

/** A JSON Schema as the tests handle it. */
export interface JsonSchema {
  $id?: string;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
  dependentRequired?: Record<string, string[]>;
}

export function readJson<T = unknown>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Every `.json` file below `dir`, relative paths sorted. */
export function listJson(dir: string, relative = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, relative)).sort()) {
    const child = path.join(relative, entry);
    if (statSync(path.join(dir, child)).isDirectory()) out.push(...listJson(dir, child));
    else if (entry.endsWith('.json')) out.push(child);
  }
  return out;
}

/** The schema files the model is generated from: core, `facets/*.json`, `registry/**\/facets/*.json`. */
export function currentSpecFiles(): { core: JsonSchema; facets: Map<string, JsonSchema> } {
  const facets = new Map<string, JsonSchema>();
  for (const file of listJson(SPEC_DIR)) {
    if (path.basename(path.dirname(file)) === 'facets')
      facets.set(file.split(path.sep).join('/'), readJson(path.join(SPEC_DIR, file)));
  }
  return { core: readJson(path.join(SPEC_DIR, 'OpenLineage.json')), facets };
}

/** All published schema documents, by `$id`. */
export function publishedSchemas(): Map<string, JsonSchema> {
  const byId = new Map<string, JsonSchema>();
  for (const file of listJson(PUBLISHED_DIR)) {
    const schema = readJson<JsonSchema>(path.join(PUBLISHED_DIR, file));
    if (schema.$id !== undefined) byId.set(schema.$id, schema);
  }
  return byId;
}

/**
 * The official schema documents by `$id`: every published one when the conformance folder is present, else the
 * bundled copies of the ones this package was generated from.
 */
export function officialSchemas(): Map<string, JsonSchema> {
  if (hasConformance()) return publishedSchemas();
  return new Map(
    [CORE_SCHEMA, ...FACET_SCHEMAS].map((schema) => [schema.$id, schema as unknown as JsonSchema]),
  );
}

let sharedAjv: Ajv2020 | undefined;

/** An AJV 2020-12 instance holding every official schema ({@link officialSchemas}), with formats asserted. */
export function officialAjv(): Ajv2020 {
  if (sharedAjv === undefined) {
    sharedAjv = new Ajv2020({ strict: false, allErrors: true });
    formatsModule.default(sharedAjv);
    for (const schema of officialSchemas().values()) sharedAjv.addSchema(schema);
  }
  return sharedAjv;
}

/** Validates `value` against an official schema ref; returns the error texts (empty when valid). */
export function officialErrors(ref: string, value: unknown): string[] {
  const validate = officialAjv().getSchema(ref);
  if (validate === undefined) throw new Error(`no official schema ${ref}`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? e.keyword}`);
}

/**
 * A fast-check arbitrary of JSON values valid for a schema. Recursion is cut at a fixed depth (empty arrays,
 * optional properties left out, non-recursive `oneOf` members preferred).
 */
export function arbitraryFor(
  schema: JsonSchema,
  document: JsonSchema,
  documents: Map<string, JsonSchema>,
  depth = 0,
): fc.Arbitrary<unknown> {
  const deep = depth > 4;
  const resolve = (ref: string): [JsonSchema, JsonSchema] => {
    const [id, pointer] = ref.split('#');
    const doc = id === '' || id === undefined ? document : documents.get(id);
    if (doc === undefined || pointer === undefined) throw new Error(`cannot resolve ${ref}`);
    const name = pointer.replace('/$defs/', '');
    const target = doc.$defs?.[name];
    if (target === undefined) throw new Error(`cannot resolve ${ref}`);
    return [target, doc];
  };
  const next = (s: JsonSchema, doc = document): fc.Arbitrary<unknown> =>
    arbitraryFor(s, doc, documents, depth + 1);

  if (schema.$ref !== undefined) {
    const [target, doc] = resolve(schema.$ref);
    return arbitraryFor(target, doc, documents, depth + 1);
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
  if (schema.allOf !== undefined) {
    const parts = schema.allOf.map((part) => next(part));
    return fc.tuple(...parts).map((values) => Object.assign({}, ...(values as object[])) as unknown);
  }
  const union = schema.oneOf ?? schema.anyOf;
  if (union !== undefined) {
    const members = deep
      ? union.filter((m) => !JSON.stringify(m.$ref ? resolve(m.$ref)[0] : m).includes('$ref'))
      : union;
    return fc.oneof(...(members.length > 0 ? members : union.slice(0, 1)).map((member) => next(member)));
  }
  switch (schema.type) {
    case 'string':
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.format === 'date-time') {
        return fc
          .date({
            min: new Date('1970-01-01T00:00:00Z'),
            max: new Date('2100-01-01T00:00:00Z'),
            noInvalidDate: true,
          })
          .map((d) => d.toISOString());
      }
      if (schema.format === 'uri') return fc.webUrl();
      return fc.string({ maxLength: 12 });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: 1_000_000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }).map((n) => n + 0);
    case 'boolean':
      return fc.boolean();
    case 'array':
      // Past the depth limit, arrays are empty so recursive item schemas are never expanded.
      if (deep) return fc.constant([]);
      return fc.array(schema.items === undefined ? jsonSafe(fc.jsonValue()) : next(schema.items), {
        maxLength: 3,
      });
    default:
      break;
  }
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  const additional = schema.additionalProperties;
  if (names.length === 0) {
    if (deep) return fc.constant({});
    const value = typeof additional === 'object' ? next(additional) : jsonSafe(fc.jsonValue({ maxDepth: 2 }));
    return fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/), value, { maxKeys: 3 });
  }
  const required = new Set(schema.required ?? []);
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names) {
    // Past the depth limit only required properties are generated, which ends recursion.
    if (deep && !required.has(name)) continue;
    record[name] = next(properties[name]!);
  }
  const requiredKeys = names.filter((n) => n in record && required.has(n));
  let arbitrary = fc.record(record, { requiredKeys });
  const dependent = schema.dependentRequired;
  if (dependent !== undefined) {
    // e.g. LineageJobEntry: namespace and name come together or not at all.
    arbitrary = arbitrary.map((value) => {
      const out: Record<string, unknown> = { ...value };
      for (const [key, needs] of Object.entries(dependent)) {
        if (key in out && needs.some((n) => !(n in out))) delete out[key];
      }
      return out;
    });
  }
  return arbitrary;
}

/** fc.jsonValue() can produce -0, which JSON writes as 0; normalise so generated values equal their JSON form. */
function jsonSafe(arbitrary: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return arbitrary.map((value) => JSON.parse(JSON.stringify(value)) as unknown);
}
