/** Small conversions every answer builder shares. */

/** A time as the API writes it. */
export const iso = (time: Date): string => time.toISOString();

/** A time as the API writes it, or null. */
export const isoOrNull = (time: Date | null): string | null => (time === null ? null : time.toISOString());

/** A JSON object (not null, not an array), as facets hold them. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
