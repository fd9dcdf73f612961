/** How the API writes its answers. */

/**
 * Route option: serialise responses with JSON.stringify. Fastify's compiled serialisers drop properties a
 * schema does not list and nulls a schema does not allow; Marquez clients need both (facets are open-ended,
 * empty Optionals are null), so the response schemas here document, and never filter.
 */
export const plainJson = {
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
} as const;
