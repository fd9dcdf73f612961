/** Small JSON Schema parts for documenting responses (serialised with JSON.stringify, see plainJson). */

export const string = { type: 'string' } as const;
export const nullableString = { type: ['string', 'null'] } as const;
export const time = { type: 'string', format: 'date-time' } as const;
export const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
export const integer = { type: 'integer' } as const;
export const nullableNumber = { type: ['number', 'null'] } as const;
export const boolean = { type: 'boolean' } as const;
export const strings = { type: 'array', items: string } as const;
/** An array of `items`. */
export const arrayOf = (items: unknown) => ({ type: 'array', items }) as const;
/** `schema` or null. */
export const nullable = (schema: unknown) => ({ anyOf: [schema, { type: 'null' }] }) as const;

/** An object with exactly these properties, all required. */
export function object(properties: Record<string, unknown>, description?: string) {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
    ...(description ? { description } : {}),
  } as const;
}
