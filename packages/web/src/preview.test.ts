import { describe, expect, test } from 'vitest';
import { apiPathIn, previewAfter, previewOf, TO_PRODUCTION, withPreview } from './preview.js';

describe('the preview in the explorer address', () => {
  test('previewOf reads ?preview=, and an empty one is production', () => {
    expect(previewOf('?ns=etl&preview=pr-7')).toBe('pr-7');
    expect(previewOf('?ns=etl')).toBeUndefined();
    expect(previewOf('?preview=')).toBeUndefined();
    expect(previewOf('')).toBeUndefined();
  });

  test('withPreview sets or removes the parameter, keeping the others, legible node ids and the hash', () => {
    expect(withPreview('/', 'pr-7')).toBe('/?preview=pr-7');
    expect(withPreview('/lineage?node=dataset:s3://b:orders&depth=3#x', 'pr-7')).toBe(
      '/lineage?node=dataset:s3://b:orders&depth=3&preview=pr-7#x',
    );
    expect(withPreview('/datasets/etl/a?preview=pr-7', 'pr-8')).toBe('/datasets/etl/a?preview=pr-8');
    expect(withPreview('/datasets/etl/a?preview=pr-7#column-id', undefined)).toBe(
      '/datasets/etl/a#column-id',
    );
    expect(withPreview('/?ns=etl&preview=pr-7', undefined)).toBe('/?ns=etl');
  });

  test('previewAfter: the address names it, or a link of the explorer keeps it', () => {
    const link = (search: string, state: unknown = null) => ({ search, state, type: 'PUSH' as const });
    expect(previewAfter(undefined, link('?preview=pr-7'))).toBe('pr-7');
    expect(previewAfter('pr-7', link('?preview=pr-8'))).toBe('pr-8');
    // The explorer's links, and a page's own replace of its query (`setParams`), do not carry the parameter.
    expect(previewAfter('pr-7', link('?node=x'))).toBe('pr-7');
    expect(previewAfter('pr-7', { search: '?ns=etl', state: null, type: 'REPLACE' })).toBe('pr-7');
    expect(previewAfter(undefined, link(''))).toBeUndefined();
  });

  test('previewAfter: back, forward and links to production leave the preview', () => {
    expect(previewAfter('pr-7', { search: '', state: null, type: 'POP' })).toBeUndefined();
    expect(previewAfter('pr-7', { search: '?preview=pr-7', state: null, type: 'POP' })).toBe('pr-7');
    expect(previewAfter('pr-7', { search: '', state: TO_PRODUCTION, type: 'PUSH' })).toBeUndefined();
    expect(previewAfter('pr-7', { search: '', state: { other: true }, type: 'PUSH' })).toBe('pr-7');
  });
});

describe('the API requests of a preview', () => {
  test('reads carry the preview, encoded, after any query', () => {
    expect(apiPathIn('pr-7', 'GET', '/namespaces?limit=10000')).toBe('/namespaces?limit=10000&preview=pr-7');
    expect(apiPathIn('pr-7', 'GET', '/namespaces/etl/datasets/a')).toBe(
      '/namespaces/etl/datasets/a?preview=pr-7',
    );
    expect(apiPathIn('a b&c', 'GET', '/search?q=x')).toBe('/search?q=x&preview=a%20b%26c');
  });

  test('production, writes and the previews routes are sent as they are', () => {
    expect(apiPathIn(undefined, 'GET', '/namespaces')).toBe('/namespaces');
    expect(apiPathIn('pr-7', 'POST', '/incidents/1/acknowledge')).toBe('/incidents/1/acknowledge');
    expect(apiPathIn('pr-7', 'GET', '/previews')).toBe('/previews');
    expect(apiPathIn('pr-7', 'GET', '/previews/pr-7/diff')).toBe('/previews/pr-7/diff');
    expect(apiPathIn('pr-7', 'GET', '/previewsx')).toBe('/previewsx?preview=pr-7');
  });
});
