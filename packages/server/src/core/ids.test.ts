import { describe, expect, it } from 'vitest';
import { canonicalJson, contentUuid, isUuid, nameUuid, runUuidOf } from './ids.js';
import { parseEventTime } from './event-time.js';

describe('ids', () => {
  it("maps a non-UUID runId to Java's nameUUIDFromBytes", () => {
    // Java's UUID.nameUUIDFromBytes("run_id".getBytes(UTF_8)), computed independently with Python's uuid module.
    expect(nameUuid('run_id')).toBe('0acf093b-3c88-3560-8dc6-22a33921d360');
    expect(nameUuid('run_id')).not.toBe(nameUuid('run_id2'));
  });

  it('keeps a UUID runId, lower-cased', () => {
    expect(runUuidOf('3F5E83FA-3480-44FF-99C5-FF943904E5E8')).toBe('3f5e83fa-3480-44ff-99c5-ff943904e5e8');
    expect(isUuid('not-a-uuid')).toBe(false);
  });

  it('hashes content to a stable UUID', () => {
    expect(contentUuid('{"a":1}')).toBe(contentUuid('{"a":1}'));
    expect(contentUuid('{"a":1}')).not.toBe(contentUuid('{"a":2}'));
  });

  it('sorts keys in canonical JSON', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: null }] })).toBe('{"a":[{"c":null,"d":1}],"b":1}');
  });
});

describe('parseEventTime', () => {
  it.each([
    ['2024-01-15T10:00:00Z', Date.UTC(2024, 0, 15, 10)],
    ['2024-01-15T10:00:00.123456789+02:00', Date.UTC(2024, 0, 15, 8, 0, 0, 123)],
    ['2024-01-15T10:00:00', Date.UTC(2024, 0, 15, 10)],
    ['2024-01-15T10:00:00.5-0130', Date.UTC(2024, 0, 15, 11, 30, 0, 500)],
    ['0050-06-01T00:00:00Z', Date.parse('0050-06-01T00:00:00Z')],
  ])('parses %s', (text, expected) => {
    expect(parseEventTime(text)).toBe(expected);
  });

  it.each(['2024-01-15', 'yesterday', '2024-13-01T00:00:00Z', ''])('rejects %s', (text) => {
    expect(parseEventTime(text)).toBeUndefined();
  });
});
