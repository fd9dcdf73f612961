/**
 * Building blocks for the JSON Schemas of the API's answers, on TypeBox: each answer is defined once, as a
 * schema, and its TypeScript type is derived from it with `Static<>`, so the OpenAPI document, the server's
 * builders and the explorer's client cannot drift apart.
 *
 * TypeBox marks its schemas with non-enumerable keys (`~kind`, `~optional`): never spread one
 * (`{ ...schema, description }` drops the marks, so an optional property would turn required); pass options to
 * the builder instead (`Time({ description })`).
 */
import { Type, type Static, type TObject, type TSchema, type TSchemaOptions, type TUnsafe } from 'typebox';

export { Type, type Static, type TSchema };

/** An RFC 3339 time, as the API writes it (`Date.prototype.toISOString`). */
export const Time = (options?: TSchemaOptions) => Type.String({ format: 'date-time', ...options });

/** A UUID. */
export const Uuid = (options?: TSchemaOptions) => Type.String({ format: 'uuid', ...options });

/** `schema` or null: what Marquez writes for an empty `Optional`. */
export const Nullable = <T extends TSchema>(schema: T, options?: TSchemaOptions) =>
  Type.Union([schema, Type.Null()], options);

/** One of these strings. */
export const StringEnum = <const V extends readonly string[]>(values: V, options?: TSchemaOptions) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

/** The value `true`, which is the only one the property has when it is there (a flag left out otherwise). */
export const TrueFlag = (options?: TSchemaOptions) =>
  Type.Unsafe<true>({ type: 'boolean', enum: [true], ...options });

/** An object whose every property holds a `value` (a map by name); JSON Schema's `additionalProperties`. */
export const RecordOf = <T extends TSchema>(value: T, options?: TSchemaOptions) =>
  Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, ...options });

/** An open-ended object (facets, whose content is the producer's). */
export const OpenObject = (options?: TSchemaOptions) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });

/**
 * A reference to a shared schema (one registered with `app.addSchema` under its `$id`), typed as that schema:
 * `{"$ref": "<$id>#"}`, which the OpenAPI document shows as a component.
 */
export const Ref = <T extends TSchema & { $id: string }>(
  schema: T,
  options?: TSchemaOptions,
): TUnsafe<Static<T>> => Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#`, ...options });

/**
 * A shared schema: an object with exactly these properties (every one required unless `Type.Optional`), named
 * `id` (its `$id` and its title, under which the OpenAPI document lists it).
 */
export const Shared = <const Id extends string, P extends Parameters<typeof Type.Object>[0]>(
  id: Id,
  properties: P,
  options?: TSchemaOptions,
) =>
  Type.Object(properties, { $id: id, title: id, additionalProperties: false, ...options }) as TObject<P> & {
    readonly $id: Id;
    readonly title: Id;
  };

/** An object with exactly these properties, every one required unless `Type.Optional`. */
export const Closed = <P extends Parameters<typeof Type.Object>[0]>(
  properties: P,
  options?: TSchemaOptions,
) => Type.Object(properties, { additionalProperties: false, ...options });
