/**
 * Query strings read as leniently as Marquez reads them, for every route at once: the route's querystring
 * schema says what each parameter is, and this rewrites the text a client sent into the form the schema
 * declares before the schema validates it. Booleans and enums are case-insensitive (Dropwizard's boolean
 * and fuzzy enum converters: `withDownstream=TRUE`, `sortDirection=desc`), and a date-time may leave out its
 * seconds (`ZonedDateTime.parse`, which the Marquez Java client's `2025-03-15T00:00Z` relies on).
 */

/** The part of a JSON Schema this reads. */
interface PropertySchema {
  readonly type?: unknown;
  readonly format?: unknown;
  readonly enum?: unknown;
  readonly items?: PropertySchema;
}

/** Rewrites one text value into the form its schema declares; the value itself when there is nothing to do. */
type Rewrite = (value: string) => string;

/** An ISO 8601 date-time whose seconds are left out: `2025-03-15T00:00Z`, `2025-03-15t00:00+01:00`. */
const NO_SECONDS = /^(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2})([Zz]|[+-]\d{2}:\d{2})$/;

const lowerCase: Rewrite = (value) => value.toLowerCase();
const withSeconds: Rewrite = (value) => value.replace(NO_SECONDS, '$1:00$2');

function enumRewrite(values: readonly unknown[]): Rewrite | undefined {
  const byFolded = new Map<string, string>();
  for (const value of values) {
    // The first spelling listed wins when a schema lists several (`asc` before `ASC`).
    if (typeof value === 'string' && !byFolded.has(value.toLowerCase()))
      byFolded.set(value.toLowerCase(), value);
  }
  if (byFolded.size === 0) return undefined;
  return (value) => byFolded.get(value.toLowerCase()) ?? value;
}

function rewriteOf(schema: PropertySchema): Rewrite | undefined {
  if (Array.isArray(schema.enum)) return enumRewrite(schema.enum);
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
  if (types.includes('boolean')) return lowerCase;
  if (types.includes('string') && schema.format === 'date-time') return withSeconds;
  return undefined;
}

/**
 * The rewrite of a route's query (in place) that its querystring schema calls for, or undefined when the schema
 * has no boolean, enum or date-time parameter. Repeated parameters (arrays) are rewritten item by item.
 *
 * @example
 * lenientQuery({ type: 'object', properties: { withDownstream: { type: 'boolean' } } })?.(query)
 */
export function lenientQuery(schema: unknown): ((query: unknown) => void) | undefined {
  const properties = (schema as { properties?: Record<string, PropertySchema> } | null)?.properties;
  if (properties === undefined) return undefined;
  const rewrites = new Map<string, Rewrite>();
  for (const [name, property] of Object.entries(properties)) {
    const rewrite = rewriteOf(property.type === 'array' && property.items ? property.items : property);
    if (rewrite) rewrites.set(name, rewrite);
  }
  if (rewrites.size === 0) return undefined;
  return (query) => {
    if (query === null || typeof query !== 'object') return;
    const values = query as Record<string, unknown>;
    for (const [name, rewrite] of rewrites) {
      const value = values[name];
      if (typeof value === 'string') values[name] = rewrite(value);
      else if (Array.isArray(value))
        values[name] = value.map((item: unknown) => (typeof item === 'string' ? rewrite(item) : item));
    }
  };
}
