import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as builders from './generated/facet-builders.js';
import type { FacetDescriptor, FacetTypeName, JobEvent, JobFacets } from './generated/model.js';
import { CORE_SCHEMA_ID, FACETS, SPEC_VERSION } from './generated/model.js';
import { CORE_SCHEMA, FACET_SCHEMAS } from './generated/schemas.js';
import { DEFAULT_PRODUCER } from './producer.js';
import type { JsonSchema } from './test-support/official-schemas.js';
import {
  SPEC_DIR,
  arbitraryFor,
  currentSpecFiles,
  hasConformance,
  listJson,
  officialErrors,
  officialSchemas,
  readJson,
} from './test-support/official-schemas.js';
import type { FacetBuilder } from './facet.js';
import { defineFacet } from './facet.js';
import { builderName } from '../scripts/generate-facets.js';

// The spec sources are only in the shared folder; the tests that compare against them skip without it.
const corpus = hasConformance();
const spec = corpus ? currentSpecFiles() : undefined;
const published = officialSchemas();
const descriptors = Object.entries(FACETS) as [FacetTypeName, FacetDescriptor][];

function builderFor(typeName: string): FacetBuilder<never> {
  const builder = (builders as Record<string, unknown>)[builderName(typeName)];
  if (typeof builder !== 'function') throw new Error(`no builder for ${typeName}`);
  return builder as FacetBuilder<never>;
}

describe('generated model', () => {
  it.skipIf(!corpus)(
    'was generated from the current shared spec (rerun `npm run generate` when this fails)',
    () => {
      const { core, facets } = spec!;
      expect(CORE_SCHEMA).toEqual(core);
      expect(CORE_SCHEMA_ID).toBe('https://openlineage.io/spec/2-0-2/OpenLineage.json');
      expect(SPEC_VERSION).toBe('2-0-2');
      const embedded = new Map(FACET_SCHEMAS.map((schema) => [schema.$id, schema]));
      expect(embedded.size).toBe(facets.size);
      for (const [file, schema] of facets) {
        expect(embedded.get(schema.$id!), file).toEqual(schema);
      }
    },
  );

  it.skipIf(!corpus)(
    'has one descriptor per facet definition, with key, container and _schemaURL from the schema file',
    () => {
      const { facets } = spec!;
      // 44 files; LineageFacet and BaseSubsetDatasetFacet each define two facet types.
      expect(descriptors).toHaveLength(facets.size + 2);
      const containerOfBase: Record<string, string> = {
        RunFacet: 'run',
        JobFacet: 'job',
        DatasetFacet: 'dataset',
        InputDatasetFacet: 'inputDataset',
        OutputDatasetFacet: 'outputDataset',
      };
      for (const [typeName, descriptor] of descriptors) {
        const file = facets.get(descriptor.source)!;
        expect(file, typeName).toBeDefined();
        const [id, pointer] = descriptor.schemaURL.split('#/$defs/');
        expect(id).toBe(file.$id);
        const def = file.$defs![pointer!]!;
        expect(Object.keys(file.properties!)).toEqual([descriptor.key]);
        const base = def.allOf![0]!.$ref!.replace(`${CORE_SCHEMA_ID}#/$defs/`, '');
        expect(descriptor.container).toBe(containerOfBase[base]);
      }
      expect(FACETS.SQLJobFacet).toEqual({
        key: 'sql',
        container: 'job',
        schemaURL: 'https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet',
        source: 'facets/SQLJobFacet.json',
      });
      expect(FACETS.LineageJobFacet.container).toBe('job');
      expect(FACETS.LineageDatasetFacet.container).toBe('dataset');
      expect(FACETS.DataQualityAssertionsDatasetFacet.container).toBe('inputDataset');
    },
  );

  it('exports a builder per facet type that knows its key, container and _schemaURL', () => {
    for (const [typeName, descriptor] of descriptors) {
      const builder = builderFor(typeName);
      expect(builder.key).toBe(descriptor.key);
      expect(builder.container).toBe(descriptor.container);
      expect(builder.schemaURL).toBe(descriptor.schemaURL);
    }
    expect(builders.sqlJobFacet({ query: 'select 1' })).toEqual({
      _producer: DEFAULT_PRODUCER,
      _schemaURL: 'https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet',
      query: 'select 1',
    });
    expect(builders.sqlJobFacet({ query: 'q' }, { producer: 'https://example.com/p' })._producer).toBe(
      'https://example.com/p',
    );
  });

  it('drops undefined fields from untyped callers so a facet equals its JSON form', () => {
    const facet = builders.sqlJobFacet({ query: 'q', dialect: undefined } as unknown as { query: string });
    expect(facet).toEqual(JSON.parse(JSON.stringify(facet)));
    expect('dialect' in facet).toBe(false);
  });

  it('makes custom facet builders with defineFacet', () => {
    const attempt = defineFacet<{ _producer: string; _schemaURL: string; attempt: number }>({
      key: 'acme_attempt',
      container: 'run',
      schemaURL: 'https://acme.example/schemas/AttemptRunFacet.json#/$defs/AttemptRunFacet',
      source: 'custom',
    });
    expect(attempt({ attempt: 2 })).toEqual({
      _producer: DEFAULT_PRODUCER,
      _schemaURL: 'https://acme.example/schemas/AttemptRunFacet.json#/$defs/AttemptRunFacet',
      attempt: 2,
    });
    expect(attempt.key).toBe('acme_attempt');
  });
});

describe.each(descriptors)('facet %s', (typeName, descriptor) => {
  const [id, pointer] = descriptor.schemaURL.split('#/$defs/');
  const document: JsonSchema = published.get(id!)!;
  const def = document.$defs![pointer!]!;
  // The builder fills the base part (allOf[0], a core facet type); generate the facet's own fields.
  const own = { allOf: def.allOf!.slice(1) };
  const fields = arbitraryFor(own, document, published);
  const builder = builderFor(typeName);

  it('builds facets that validate against the official schema and survive a JSON round trip', () => {
    fc.assert(
      fc.property(fields, (value) => {
        const facet = builder(value as never) as Record<string, unknown>;
        expect(facet._schemaURL).toBe(descriptor.schemaURL);
        expect(facet._producer).toBe(DEFAULT_PRODUCER);
        expect(officialErrors(descriptor.schemaURL, facet)).toEqual([]);
        const roundTripped: unknown = JSON.parse(JSON.stringify(facet));
        expect(roundTripped).toEqual(facet);
      }),
      { numRuns: 25 },
    );
  });
});

describe.skipIf(!corpus)('spec facet examples (spec/tests)', () => {
  const examples = corpus
    ? listJson(path.join(SPEC_DIR, 'tests')).filter((file) => file.includes(path.sep))
    : [];
  it.each(examples)('%s round-trips and its facet key is known', (file) => {
    const fragment = readJson<Record<string, Record<string, unknown>>>(path.join(SPEC_DIR, 'tests', file));
    const [key] = Object.keys(fragment);
    const facetFile = `facets/${file.split(path.sep)[0]}.json`;
    const matching = descriptors.filter(([, d]) => d.source === facetFile);
    expect(matching.length).toBeGreaterThan(0);
    expect(matching.every(([, d]) => d.key === key)).toBe(true);
    expect(JSON.parse(JSON.stringify(fragment))).toEqual(fragment);
  });
});

describe('generated types', () => {
  it('type facet maps by key and still accept custom facets', () => {
    const base = { _producer: DEFAULT_PRODUCER, _schemaURL: 'https://example.com/s' };
    const facets: JobFacets = {
      sql: builders.sqlJobFacet({ query: 'select 1' }),
      acme_owner: { ...base, team: 'data', members: ['ana'] },
    };
    // @ts-expect-error a standard key must hold its own facet type
    const wrong: JobFacets = { sql: { ...base, quer: 'typo' } };
    // @ts-expect-error required fields are required
    builders.sqlJobFacet({});
    const jobOnly: JobEvent = {
      eventTime: '',
      producer: '',
      schemaURL: '',
      job: { namespace: 'n', name: 'j' },
      // @ts-expect-error a JobEvent cannot carry a run
      run: { runId: 'x' },
    };
    expect(facets.sql?.query).toBe('select 1');
    expect([wrong, jobOnly]).toHaveLength(2);
  });
});
