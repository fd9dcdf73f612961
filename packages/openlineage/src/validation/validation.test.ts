import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEvent } from '../events.js';
import { sqlJobFacet } from '../generated/facet-builders.js';
import { CONFORMANCE_DIR, hasConformance, readJson } from '../test-support/official-schemas.js';
import { CORE_SCHEMA, FACET_SCHEMAS, createValidator, facetSchemaTable, facetSchemaURL } from './index.js';
import { FACETS } from '../generated/model.js';

interface ManifestEntry {
  group: string;
  file: string;
  status: string;
}

const corpus = hasConformance();

describe('createValidator', () => {
  const validator = createValidator();

  it('accepts events from the builders', () => {
    const event = runEvent({
      eventType: 'START',
      job: { namespace: 'n', name: 'j', facets: { sql: sqlJobFacet({ query: 'select 1' }) } },
    });
    expect(validator.validate(event)).toEqual({ valid: true, errors: [] });
  });

  it('reports each problem with its JSON path', () => {
    const event = runEvent({ eventType: 'START', job: { namespace: 'n', name: 'j' } });
    const broken = {
      ...event,
      run: {
        runId: 'not-a-uuid',
        facets: { parent: { _producer: 'https://x', _schemaURL: 'https://y', run: {} } },
      },
      job: { namespace: 'n', facets: { sql: { _producer: 'https://x', _schemaURL: 'https://y' } } },
    };
    const result = validator.validate(broken);
    expect(result.valid).toBe(false);
    const paths = result.errors.map((e) => e.path);
    expect(paths).toContain('/run/runId');
    expect(paths).toContain('/job/name');
    expect(paths).toContain('/run/facets/parent/run/runId');
    expect(paths).toContain('/run/facets/parent/job');
    expect(paths).toContain('/job/facets/sql/query');
    const sql = result.errors.find((e) => e.path === '/job/facets/sql/query')!;
    expect(sql.schemaURL).toBe(facetSchemaURL('job', 'sql'));
    expect(sql.message).toContain('required');
  });

  it('rejects non-objects without throwing', () => {
    expect(validator.validate(null).valid).toBe(false);
    expect(validator.validate('x').errors[0]!.message).toBe('must be a JSON object');
  });

  it.skipIf(!corpus)('agrees with the conformance manifest on real events', () => {
    const manifest = readJson<{ files: ManifestEntry[] }>(path.join(CONFORMANCE_DIR, 'manifest.json'));
    const list = manifest.files.filter((e) => ['valid', 'facet-invalid', 'invalid'].includes(e.status));
    expect(list.length).toBeGreaterThan(50);
    const lenient = createValidator({ facets: false, formats: false });
    let checked = 0;
    for (const { group, file, status } of list) {
      const full = path.join(CONFORMANCE_DIR, 'openlineage-events', group, file);
      const content = readJson<unknown>(full);
      for (const event of Array.isArray(content) ? content : [content]) {
        checked++;
        const result = validator.validate(event);
        if (status === 'valid') expect(result.errors, file).toEqual([]);
        else expect(result.valid, file).toBe(false);
        // Facet-invalid events still pass the core schema once formats and facets are not asserted.
        if (status === 'facet-invalid') expect(lenient.validate(event).valid, file).toBe(true);
      }
    }
    expect(checked).toBeGreaterThanOrEqual(list.length);
  });
});

describe('facetSchemaTable', () => {
  it('finds, in the bundled schemas, the facet the generated model declares for every key and container', () => {
    const table = facetSchemaTable([CORE_SCHEMA, ...FACET_SCHEMAS]);
    const declared = new Map(
      Object.values(FACETS).map((facet) => [`${facet.container}:${facet.key}`, facet.schemaURL]),
    );
    expect(new Map([...table].sort())).toEqual(new Map([...declared].sort()));
  });

  it('takes the newest version of each facet schema, whatever the order given', () => {
    const parent = FACET_SCHEMAS.find((schema) => schema.$id.endsWith('/ParentRunFacet.json'))!;
    const older = { ...parent, $id: parent.$id.replace(/\d+-\d+-\d+/, '1-0-0') };
    const newer = { ...parent, $id: parent.$id.replace(/\d+-\d+-\d+/, '9-0-0') };
    for (const order of [
      [older, parent, newer],
      [newer, parent, older],
    ]) {
      expect(facetSchemaTable(order).get('run:parent')).toBe(
        'https://openlineage.io/spec/facets/9-0-0/ParentRunFacet.json#/$defs/ParentRunFacet',
      );
    }
  });
});

describe('createValidator details', () => {
  const validator = createValidator();
  const base = runEvent({ eventType: 'START', job: { namespace: 'n', name: 'j' } });

  it('names the failing keyword and its parameters', () => {
    const result = validator.validate({ ...base, eventType: 'DONE', run: {} });
    expect(result.errors.map(({ path, keyword, params }) => ({ path, keyword, params }))).toEqual([
      {
        path: '/eventType',
        keyword: 'enum',
        params: { allowedValues: ['START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER'] },
      },
      { path: '/run/runId', keyword: 'required', params: { missingProperty: 'runId' } },
    ]);
  });

  it('asserts formats only when asked', () => {
    const event = { ...base, run: { runId: 'not-a-uuid' } };
    expect(validator.validate(event).errors).toMatchObject([
      { path: '/run/runId', keyword: 'format', params: { format: 'uuid' } },
    ]);
    expect(createValidator({ formats: false }).validate(event)).toEqual({ valid: true, errors: [] });
  });

  it("skips a deleted job or dataset facet's own fields, as the spec's deletion marker allows", () => {
    const deleted = { _producer: 'https://x', _schemaURL: 'https://y', _deleted: true };
    const event = {
      ...base,
      job: { namespace: 'n', name: 'j', facets: { sql: deleted } },
      outputs: [{ namespace: 'n', name: 'd', facets: { schema: deleted } }],
    };
    expect(validator.validate(event)).toEqual({ valid: true, errors: [] });
    const notDeleted = {
      ...event,
      job: { namespace: 'n', name: 'j', facets: { sql: { ...deleted, _deleted: false } } },
    };
    expect(validator.validate(notDeleted).errors.map((e) => e.path)).toEqual(['/job/facets/sql/query']);
  });

  it('fails at construction, naming the schema, when an added schema does not compile', () => {
    const broken = {
      $id: 'https://openlineage.io/spec/facets/9-0-0/ParentRunFacet.json',
      properties: { parent: { $ref: '#/$defs/ParentRunFacet' } },
      $defs: {
        ParentRunFacet: {
          allOf: [
            { $ref: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet' },
            { $ref: 'https://example.com/missing.json' },
          ],
        },
      },
    };
    expect(() => createValidator({ schemas: [broken] })).toThrow(/9-0-0\/ParentRunFacet\.json/);
  });
});
