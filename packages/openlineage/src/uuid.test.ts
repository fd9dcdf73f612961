import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createUuidV7Generator, isUuid, uuidv7, uuidv7Timestamp } from './uuid.js';
import { officialAjv } from './test-support/official-schemas.js';

describe('uuidv7', () => {
  it('has version 7, the RFC variant and the creation time in its first 48 bits', () => {
    const before = Date.now();
    const id = uuidv7();
    const after = Date.now();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = uuidv7Timestamp(id)!;
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
    expect(officialAjv().validate({ type: 'string', format: 'uuid' }, id)).toBe(true);
  });

  it('encodes a pinned clock and random source exactly', () => {
    const generate = createUuidV7Generator({
      now: () => 0x0190_b6a2_5c3e,
      fillRandom: (bytes) => bytes.fill(0xff),
    });
    // rand_a starts at the random value masked to 11 bits (0x7ff); variant bits forced to 10.
    expect(generate()).toBe('0190b6a2-5c3e-77ff-bfff-ffffffffffff');
  });

  it('sorts in creation order, even within one millisecond and when the clock steps back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 2, maxLength: 200 }),
        (times) => {
          let i = 0;
          const generate = createUuidV7Generator({ now: () => times[i++ % times.length]! });
          const ids = times.map(() => generate());
          expect([...ids].sort()).toEqual(ids);
          expect(new Set(ids).size).toBe(ids.length);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('rolls the timestamp forward when the 12-bit counter overflows', () => {
    const generate = createUuidV7Generator({ now: () => 1000, fillRandom: (bytes) => bytes.fill(0) });
    const ids = Array.from({ length: 4100 }, () => generate());
    expect(uuidv7Timestamp(ids[0]!)).toBe(1000);
    expect(uuidv7Timestamp(ids.at(-1)!)).toBe(1001);
    expect([...ids].sort()).toEqual(ids);
  });

  it('recognises UUIDs', () => {
    expect(isUuid('0190b6a2-5c3e-7a41-9d2f-6c0e8b1f2a3d')).toBe(true);
    expect(isUuid('run_id')).toBe(false);
    expect(isUuid(42)).toBe(false);
    expect(uuidv7Timestamp('f99310b4-3c3c-1a1a-2b2b-c1b95c24ff11')).toBeUndefined();
  });
});
