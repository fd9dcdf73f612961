import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEvent } from '../events.js';
import { sqlJobFacet } from '../generated/facet-builders.js';
import { CONFORMANCE_DIR, hasConformance, readJson } from '../test-support/official-schemas.js';
import { createValidator, facetSchemaURL } from './index.js';

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
