import { describe, expect, it } from 'vitest';
import {
  codeLocationOf,
  descriptionOf,
  jobTypeOf,
  nominalTimesOf,
  sourceNameOf,
} from './describing-facets.js';

describe('describing facets', () => {
  it('reads what a facet says, and nothing from a facet its producer deleted', () => {
    expect(descriptionOf({ description: 'Every order' })).toBe('Every order');
    expect(descriptionOf({ description: 'Every order', _deleted: true })).toBeNull();
    expect(jobTypeOf({ processingType: 'streaming' })).toBe('STREAM');
    expect(jobTypeOf({ processingType: 'STREAMING', _deleted: true })).toBe('BATCH');
    expect(codeLocationOf({ url: 'https://git.example.com/etl' })).toBe('https://git.example.com/etl');
    expect(codeLocationOf({ _deleted: true })).toBeNull();
    expect(sourceNameOf({ name: 'warehouse' })).toBe('warehouse');
    expect(sourceNameOf({ name: '' })).toBe('default');
    expect(sourceNameOf(undefined)).toBe('default');
  });

  it('reads nominal times, each null when the facet does not give it', () => {
    expect(nominalTimesOf({ nominalStartTime: '2025-03-01T00:00:00Z' })).toEqual({
      startMs: Date.UTC(2025, 2, 1),
      endMs: null,
    });
    expect(nominalTimesOf({ nominalStartTime: 'yesterday', nominalEndTime: '2025-03-01T01:00:00Z' })).toEqual(
      {
        startMs: null,
        endMs: Date.UTC(2025, 2, 1, 1),
      },
    );
  });
});
