import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendPath, formatPath, resolvePointer } from './json-path.js';

describe('appendPath', () => {
  it.each<[string, string | number, string]>([
    ['$', 'run', '$.run'],
    ['$.inputs', 2, '$.inputs[2]'],
    ['$.run.facets', 'processing_engine', '$.run.facets.processing_engine'],
    ['$.run.facets', 'spark.logicalPlan', "$.run.facets['spark.logicalPlan']"],
    ['$.run.facets', 'environment-properties', "$.run.facets['environment-properties']"],
    ['$', '0', "$['0']"],
    ['$', '', "$['']"],
    ['$', "it's", "$['it\\'s']"],
    ['$', 'a\\b', "$['a\\\\b']"],
  ])('%s + %j -> %s', (path, step, expected) => {
    expect(appendPath(path, step)).toBe(expected);
  });
});

describe('formatPath', () => {
  it('starts at $ and joins steps', () => {
    expect(formatPath([])).toBe('$');
    expect(formatPath(['inputs', 2, 'facets', 'schema', 'fields', 0, 'name'])).toBe(
      '$.inputs[2].facets.schema.fields[0].name',
    );
    expect(formatPath(['run', 'runId'], '$.x')).toBe('$.x.run.runId');
  });
});

describe('resolvePointer', () => {
  const data = { inputs: [{ name: 'a', facets: { '0': 'zero', 'a/b': 1, 'm~n': 2 } }] };

  it('lets the data decide between array indexes and object keys', () => {
    expect(resolvePointer(data, '/inputs/0/facets/0')).toEqual({
      steps: ['inputs', 0, 'facets', '0'],
      value: 'zero',
    });
  });

  it('decodes ~1 and ~0', () => {
    expect(resolvePointer(data, '/inputs/0/facets/a~1b')).toEqual({
      steps: ['inputs', 0, 'facets', 'a/b'],
      value: 1,
    });
    expect(resolvePointer(data, '/inputs/0/facets/m~0n').value).toBe(2);
  });

  it('resolves the empty pointer to the root and past the data to undefined', () => {
    expect(resolvePointer(data, '')).toEqual({ steps: [], value: data });
    expect(resolvePointer(data, '/inputs/3/name')).toEqual({
      steps: ['inputs', 3, 'name'],
      value: undefined,
    });
    expect(resolvePointer(data, '/inputs/0/name/length').value).toBeUndefined();
    expect(resolvePointer({}, '/toString').value).toBeUndefined();
  });

  it('round-trips: the pointer of any value inside a JSON document resolves to that value', () => {
    const escape = (step: string | number): string => String(step).replace(/~/g, '~0').replace(/\//g, '~1');
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat()), (root, choices) => {
        // Walk a random existing path, choosing a child at each level.
        const steps: (string | number)[] = [];
        let value: unknown = root;
        for (const choice of choices) {
          if (Array.isArray(value) && value.length > 0) {
            const index = choice % value.length;
            steps.push(index);
            value = value[index];
          } else if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) {
            const keys = Object.keys(value);
            const key = keys[choice % keys.length]!;
            steps.push(key);
            value = (value as Record<string, unknown>)[key];
          } else break;
        }
        const pointer = steps.map((step) => `/${escape(step)}`).join('');
        expect(resolvePointer(root, pointer)).toEqual({ steps, value });
      }),
    );
  });
});
