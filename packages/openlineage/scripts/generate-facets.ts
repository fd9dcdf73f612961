/**
 * Generates the typed OpenLineage model from the official JSON Schemas.
 *
 * Reads the core schema (`OpenLineage.json`), every standard facet (`facets/*.json`) and every registry
 * facet (`registry/**\/facets/*.json`) from a spec folder laid out like the OpenLineage repository's `spec/`,
 * and writes under `src/generated/`:
 *
 * - `model.ts`: TypeScript types for the core and every facet, the typed facet maps, and one descriptor per
 *   facet (key, container, `_schemaURL`);
 * - `facet-builders.ts`: one builder function per facet that fills `_producer` and `_schemaURL`;
 * - `schemas.ts`: the schema documents themselves, for the optional validator (`@headwater/openlineage/validation`).
 *
 * Usage: `npm run generate -w @headwater/openlineage [-- --spec <dir>]`.
 * The default spec folder is `<repo root>/../shared/conformance/spec`. A new facet version is one command:
 * drop the new schema file into the spec folder and rerun.
 */
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The subset of JSON Schema 2020-12 used by the OpenLineage spec. */
interface Schema {
  $id?: string;
  $ref?: string;
  $defs?: Record<string, Schema>;
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  deprecated?: boolean;
  dependentRequired?: Record<string, string[]>;
}

interface SchemaFile {
  /** Path relative to the spec folder, for messages and descriptors. */
  relativePath: string;
  id: string;
  schema: Schema;
}

type Container = 'run' | 'job' | 'dataset' | 'inputDataset' | 'outputDataset';

interface FacetInfo {
  typeName: string;
  key: string;
  container: Container;
  schemaURL: string;
  source: string;
  description: string | undefined;
}

const CONTAINER_BY_BASE: Record<string, Container> = {
  RunFacet: 'run',
  JobFacet: 'job',
  DatasetFacet: 'dataset',
  InputDatasetFacet: 'inputDataset',
  OutputDatasetFacet: 'outputDataset',
};

/** Facet-map types that replace `additionalProperties: { $ref: <core>#/$defs/<Base> }`. */
const MAP_TYPE_BY_BASE: Record<string, string> = {
  RunFacet: 'RunFacets',
  JobFacet: 'JobFacets',
  DatasetFacet: 'DatasetFacets',
  InputDatasetFacet: 'InputDatasetFacets',
  OutputDatasetFacet: 'OutputDatasetFacets',
};

const scriptDir = path.dirname(fileURLToPath(import.meta.url));
const packageDir = path.resolve(scriptDir, '..');
const repoRoot = path.resolve(packageDir, '..', '..');

function parseArgs(argv: string[]): { specDir: string; outDir: string } {
  let specDir = path.resolve(repoRoot, '..', 'shared', 'conformance', 'spec');
  let outDir = path.join(packageDir, 'src', 'generated');
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if ((arg === '--spec' || arg === '--out') && value === undefined) {
      throw new Error(`${arg} needs a folder argument`);
    }
    if (arg === '--spec') specDir = path.resolve(value!);
    else if (arg === '--out') outDir = path.resolve(value!);
    else if (arg !== undefined)
      throw new Error(`Unknown argument "${arg}"; expected --spec <dir> or --out <dir>`);
    if (arg === '--spec' || arg === '--out') i++;
  }
  return { specDir, outDir };
}

function readSchema(specDir: string, relativePath: string): SchemaFile {
  const file = path.join(specDir, relativePath);
  const schema = JSON.parse(readFileSync(file, 'utf8')) as Schema;
  if (typeof schema.$id !== 'string') throw new Error(`${file} has no $id`);
  return { relativePath: relativePath.split(path.sep).join('/'), id: schema.$id, schema };
}

function listFacetFiles(specDir: string): string[] {
  const found: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(path.join(specDir, relative)).sort()) {
      const child = path.join(relative, entry);
      if (statSync(path.join(specDir, child)).isDirectory()) walk(child);
      else if (entry.endsWith('.json') && path.basename(relative) === 'facets') found.push(child);
    }
  };
  walk('facets');
  walk('registry');
  return found;
}

class Generator {
  readonly #core: SchemaFile;
  readonly #files: SchemaFile[];
  /** `<file id>#/$defs/<def>` -> exported type name. */
  readonly #typeNames = new Map<string, string>();
  readonly #facets: FacetInfo[] = [];

  constructor(core: SchemaFile, facetFiles: SchemaFile[]) {
    this.#core = core;
    this.#files = facetFiles;
    const used = new Map<string, string>();
    for (const file of [core, ...facetFiles]) {
      for (const def of Object.keys(file.schema.$defs ?? {})) {
        // Facet files define small helper types (EnvironmentVariable, InputField...) that could collide across
        // files; a collision is prefixed with the file's name rather than silently merged.
        let name = def;
        if (used.has(name)) name = `${path.basename(file.relativePath, '.json')}${def}`;
        if (used.has(name))
          throw new Error(`Type name ${name} from ${file.relativePath} collides with ${used.get(name)}`);
        used.set(name, file.relativePath);
        this.#typeNames.set(`${file.id}#/$defs/${def}`, name);
      }
    }
    for (const file of facetFiles) this.#collectFacets(file);
  }

  get facets(): readonly FacetInfo[] {
    return this.#facets;
  }

  #collectFacets(file: SchemaFile): void {
    const properties = Object.entries(file.schema.properties ?? {});
    if (properties.length !== 1) {
      throw new Error(`${file.relativePath}: expected exactly one top-level property (the facet key)`);
    }
    const [key, keySchema] = properties[0]!;
    const defs = this.#facetDefs(file, keySchema, new Set());
    if (defs.length === 0)
      throw new Error(`${file.relativePath}: no facet definition found under key "${key}"`);
    for (const def of defs) {
      const defSchema = file.schema.$defs![def]!;
      const base = this.#coreBaseOf(defSchema);
      if (base === undefined || CONTAINER_BY_BASE[base] === undefined) {
        throw new Error(`${file.relativePath}: $defs/${def} does not extend a core facet type`);
      }
      this.#facets.push({
        typeName: this.#typeNames.get(`${file.id}#/$defs/${def}`)!,
        key,
        container: CONTAINER_BY_BASE[base],
        schemaURL: `${file.id}#/$defs/${def}`,
        source: file.relativePath,
        description: defSchema.description,
      });
    }
  }

  /** Follows `$ref`s and `anyOf`/`oneOf` wrappers from the key's schema to the concrete facet defs. */
  #facetDefs(file: SchemaFile, schema: Schema, seen: Set<string>): string[] {
    if (schema.$ref?.startsWith('#/$defs/')) {
      const def = schema.$ref.slice('#/$defs/'.length);
      if (seen.has(def)) return [];
      seen.add(def);
      const defSchema = file.schema.$defs?.[def];
      if (defSchema === undefined) throw new Error(`${file.relativePath}: dangling ${schema.$ref}`);
      if (this.#coreBaseOf(defSchema) !== undefined) return [def];
      return this.#facetDefs(file, defSchema, seen);
    }
    return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap((s) => this.#facetDefs(file, s, seen));
  }

  #coreBaseOf(schema: Schema): string | undefined {
    const ref = schema.allOf?.[0]?.$ref;
    const prefix = `${this.#core.id}#/$defs/`;
    return ref?.startsWith(prefix) ? ref.slice(prefix.length) : undefined;
  }

  #resolveRef(file: SchemaFile, ref: string): string {
    const absolute = ref.startsWith('#') ? `${file.id}${ref}` : ref;
    const name = this.#typeNames.get(absolute);
    if (name === undefined) throw new Error(`${file.relativePath}: cannot resolve $ref ${ref}`);
    return name;
  }

  /** The facet-map type for `{ additionalProperties: { $ref: core base } }`, if the schema is one. */
  #facetMapType(file: SchemaFile, schema: Schema): string | undefined {
    const candidates = [schema, ...(schema.anyOf?.length === 1 ? schema.anyOf : [])];
    for (const candidate of candidates) {
      const additional = candidate.additionalProperties;
      if (
        typeof additional === 'object' &&
        additional.$ref !== undefined &&
        candidate.properties === undefined
      ) {
        const prefix = `${this.#core.id}#/$defs/`;
        const ref = additional.$ref.startsWith('#') ? `${file.id}${additional.$ref}` : additional.$ref;
        if (ref.startsWith(prefix)) {
          const mapType = MAP_TYPE_BY_BASE[ref.slice(prefix.length)];
          if (mapType !== undefined) return mapType;
        }
      }
    }
    return undefined;
  }

  typeOf(file: SchemaFile, schema: Schema, indent: string): string {
    if (schema.$ref !== undefined) return this.#resolveRef(file, schema.$ref);
    const mapType = this.#facetMapType(file, schema);
    if (mapType !== undefined) return mapType;
    if (schema.const !== undefined) return JSON.stringify(schema.const);
    if (schema.enum !== undefined) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
    if (schema.allOf !== undefined) {
      const parts = schema.allOf.map((s) => this.typeOf(file, s, indent));
      const own = this.#hasOwnShape(schema) ? [this.#objectType(file, schema, indent)] : [];
      return [...parts, ...own].join(' & ');
    }
    const union = schema.oneOf ?? schema.anyOf;
    if (union !== undefined) {
      const members = union.map((s) => this.typeOf(file, s, indent));
      return members.length === 1 ? members[0]! : `(${members.join(' | ')})`;
    }
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        const item = schema.items === undefined ? 'unknown' : this.typeOf(file, schema.items, indent);
        return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case 'object':
      case undefined:
        return this.#objectType(file, schema, indent);
      default:
        throw new Error(`${file.relativePath}: unsupported type ${JSON.stringify(schema.type)}`);
    }
  }

  #hasOwnShape(schema: Schema): boolean {
    return schema.properties !== undefined || typeof schema.additionalProperties === 'object';
  }

  #objectType(file: SchemaFile, schema: Schema, indent: string): string {
    const properties = Object.entries(schema.properties ?? {});
    const additional = schema.additionalProperties;
    if (properties.length === 0) {
      if (typeof additional === 'object') return `Record<string, ${this.typeOf(file, additional, indent)}>`;
      return 'Record<string, unknown>';
    }
    const inner = `${indent}  `;
    const required = new Set(schema.required ?? []);
    const lines = ['{'];
    for (const [name, propSchema] of properties) {
      lines.push(...this.#doc(propSchema, inner));
      const optional = required.has(name) ? '' : '?';
      lines.push(`${inner}${propertyName(name)}${optional}: ${this.typeOf(file, propSchema, inner)};`);
    }
    // A `not: { required: [x] }` guard (JobEvent must not carry `run`) maps to `x?: never`.
    const forbidden = schema.not?.required;
    if (forbidden?.length === 1) {
      lines.push(`${inner}/** Must be absent (spec: \`not: { required: ["${forbidden[0]}"] }\`). */`);
      lines.push(`${inner}${propertyName(forbidden[0]!)}?: never;`);
    }
    if (typeof additional === 'object') {
      lines.push(`${inner}[key: string]: ${this.typeOf(file, additional, inner)} | undefined;`);
    }
    lines.push(`${indent}}`);
    return lines.join('\n');
  }

  #doc(schema: Schema, indent: string, extra: string[] = []): string[] {
    const text: string[] = [];
    if (schema.description !== undefined) text.push(...schema.description.split('\n'));
    if (schema.format !== undefined) text.push(`Format: \`${schema.format}\`.`);
    if (schema.deprecated === true) text.push('@deprecated');
    text.push(...extra);
    if (text.length === 0) return [];
    const safe = text.map((line) => line.replaceAll('*/', '*\\/'));
    return [`${indent}/**`, ...safe.map((line) => `${indent} * ${line}`.trimEnd()), `${indent} */`];
  }

  #defDeclarations(file: SchemaFile): string[] {
    const out: string[] = [];
    for (const [def, schema] of Object.entries(file.schema.$defs ?? {})) {
      const name = this.#typeNames.get(`${file.id}#/$defs/${def}`)!;
      const facet = this.#facets.find((f) => f.typeName === name);
      const extra = [`Schema: \`${file.id}#/$defs/${def}\``];
      if (facet !== undefined)
        extra.unshift(`Facet key \`${facet.key}\` in ${containerWords(facet.container)}.`);
      for (const part of [schema, ...(schema.allOf ?? [])]) {
        const forbidden = part.not?.required;
        if (forbidden !== undefined && forbidden.length > 1) {
          extra.push(`Must not carry all of: ${forbidden.map((f) => `\`${f}\``).join(', ')}.`);
        }
      }
      out.push(...this.#doc(schema, '', extra));
      out.push(`export type ${name} = ${this.typeOf(file, schema, '')};`, '');
    }
    return out;
  }

  modelSource(): string {
    const out: string[] = [HEADER, ''];
    const coreId = this.#core.id;
    const version = /\/spec\/([^/]+)\/OpenLineage\.json$/.exec(coreId)?.[1];
    if (version === undefined) throw new Error(`Cannot read the spec version from core $id ${coreId}`);
    out.push(
      `/** The \`$id\` of the core OpenLineage schema this model was generated from. */`,
      `export const CORE_SCHEMA_ID = ${JSON.stringify(coreId)};`,
      `/** The OpenLineage spec version of the core schema. */`,
      `export const SPEC_VERSION = ${JSON.stringify(version)};`,
      '',
      '// ---- Core: ' + this.#core.relativePath,
      '',
      ...this.#defDeclarations(this.#core),
      '/** Any OpenLineage event (the root `oneOf` of the core schema). */',
      'export type OpenLineageEvent = RunEvent | DatasetEvent | JobEvent;',
      '',
    );
    for (const file of this.#files) {
      out.push(`// ---- ${file.relativePath}`, '', ...this.#defDeclarations(file));
    }
    out.push(...this.#facetMaps());
    out.push(...this.#descriptors());
    return out.join('\n');
  }

  #facetMaps(): string[] {
    const out: string[] = [];
    for (const [base, container] of Object.entries(CONTAINER_BY_BASE)) {
      const mapType = MAP_TYPE_BY_BASE[base]!;
      out.push(
        `/** A custom (non-standard) facet in ${containerWords(container)}: any JSON besides the base fields. */`,
        `export type Custom${base} = ${base} & { [key: string]: unknown };`,
        '',
        `/** The facets of ${containerWords(container)}: standard facets by key, plus any custom facet. */`,
        `export type ${mapType} = {`,
      );
      for (const facet of this.#facets.filter((f) => f.container === container)) {
        out.push(`  ${propertyName(facet.key)}?: ${facet.typeName};`);
      }
      out.push(`  [key: string]: Custom${base} | undefined;`, '};', '');
    }
    return out;
  }

  #descriptors(): string[] {
    const out = [
      '/** Where a facet is attached: a run, a job, a dataset, or an input/output dataset. */',
      `export type FacetContainer = ${Object.values(CONTAINER_BY_BASE)
        .map((c) => `'${c}'`)
        .join(' | ')};`,
      '',
      '/** What the spec says about one facet type. */',
      'export interface FacetDescriptor {',
      '  /** The key under which the facet is attached, e.g. `sql`. */',
      '  readonly key: string;',
      '  /** The facet map the facet belongs in. */',
      '  readonly container: FacetContainer;',
      "  /** The facet's `_schemaURL`: its schema file's `$id` + `#/$defs/<Def>`. */",
      '  readonly schemaURL: string;',
      '  /** The schema file, relative to the spec folder it was generated from. */',
      '  readonly source: string;',
      '}',
      '',
      '/** One descriptor per generated facet type, by type name. */',
      'export const FACETS = {',
    ];
    for (const f of this.#facets) {
      out.push(
        `  ${f.typeName}: { key: ${JSON.stringify(f.key)}, container: '${f.container}', schemaURL: ${JSON.stringify(
          f.schemaURL,
        )}, source: ${JSON.stringify(f.source)} },`,
      );
    }
    out.push('} as const satisfies Record<string, FacetDescriptor>;', '');
    out.push(
      '/** The name of a generated facet type. */',
      'export type FacetTypeName = keyof typeof FACETS;',
      '',
    );
    return out;
  }

  buildersSource(): string {
    const out = [
      HEADER,
      '',
      `import { defineFacet } from '../facet.js';`,
      `import type { ${this.#facets.map((f) => f.typeName).join(', ')} } from './model.js';`,
      `import { FACETS } from './model.js';`,
      '',
    ];
    for (const f of this.#facets) {
      out.push(
        `/**`,
        ` * Builds a {@link ${f.typeName}} (key \`${f.key}\`), filling \`_producer\` and \`_schemaURL\`.`,
        ` */`,
        `export const ${builderName(f.typeName)} = defineFacet<${f.typeName}, typeof FACETS.${f.typeName}>(FACETS.${f.typeName});`,
        '',
      );
    }
    return out.join('\n');
  }

  schemasSource(): string {
    const out = [
      HEADER,
      '',
      '/** A JSON Schema document as read from the spec folder. */',
      'export type SchemaDocument = { readonly $id: string; readonly [key: string]: unknown };',
      '',
      '/** The core schema the model was generated from. */',
      `export const CORE_SCHEMA: SchemaDocument = ${JSON.stringify(this.#core.schema)};`,
      '',
      '/** Every facet schema the model was generated from, in file order. */',
      `export const FACET_SCHEMAS: readonly SchemaDocument[] = [`,
      ...this.#files.map((f) => `  ${JSON.stringify(f.schema)},`),
      '];',
      '',
    ];
    return out.join('\n');
  }
}

const HEADER = [
  '// GENERATED by packages/openlineage/scripts/generate-facets.ts from the OpenLineage JSON Schemas.',
  '// Do not edit by hand: run `npm run generate -w @headwater/openlineage`.',
].join('\n');

function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function containerWords(container: Container): string {
  switch (container) {
    case 'run':
      return '`run.facets`';
    case 'job':
      return '`job.facets`';
    case 'dataset':
      return "a dataset's `facets`";
    case 'inputDataset':
      return "an input dataset's `inputFacets`";
    case 'outputDataset':
      return "an output dataset's `outputFacets`";
  }
}

/** `SQLJobFacet` -> `sqlJobFacet`, `ParentRunFacet` -> `parentRunFacet`. */
export function builderName(typeName: string): string {
  const leading = /^[A-Z]+(?=[A-Z][a-z])|^[A-Z]/.exec(typeName)?.[0] ?? '';
  return leading.toLowerCase() + typeName.slice(leading.length);
}

async function main(): Promise<void> {
  const { specDir, outDir } = parseArgs(process.argv.slice(2));
  const core = readSchema(specDir, 'OpenLineage.json');
  const facetFiles = listFacetFiles(specDir).map((file) => readSchema(specDir, file));
  const generator = new Generator(core, facetFiles);
  mkdirSync(outDir, { recursive: true });
  // Formatted with the repository's Prettier settings, so a regeneration diff shows only real changes.
  const prettier = await import('prettier');
  const outputs: [string, string][] = [
    ['model.ts', generator.modelSource()],
    ['facet-builders.ts', generator.buildersSource()],
    ['schemas.ts', generator.schemasSource()],
  ];
  for (const [name, source] of outputs) {
    const file = path.join(outDir, name);
    // Settings come from the package's own location, so output written elsewhere (--out) is identical.
    const options = (await prettier.resolveConfig(path.join(packageDir, 'src', 'generated', name))) ?? {};
    writeFileSync(file, await prettier.format(source, { ...options, filepath: file }));
  }
  console.log(
    `Generated ${generator.facets.length} facet types from ${facetFiles.length} files in ${specDir}`,
  );
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
