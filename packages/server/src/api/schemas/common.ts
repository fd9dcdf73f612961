/**
 * The schemas every part of the read API shares: the ids of datasets and jobs and of their versions, facets
 * containers, the error body, and the response and list wrappers that name them.
 */
import {
  Closed,
  OpenObject,
  Ref,
  Shared,
  Type,
  Uuid,
  type Static,
  type TSchema,
} from '../../core/json-schema.js';

/** `{namespace, name}` of a dataset or job. */
export const EntityIdSchema = Shared('EntityId', { namespace: Type.String(), name: Type.String() });
export type EntityId = Static<typeof EntityIdSchema>;

/** `{namespace, name, version}` of a dataset or job version. */
export const VersionIdSchema = Shared('VersionId', {
  namespace: Type.String(),
  name: Type.String(),
  version: Uuid(),
});
export type VersionId = Static<typeof VersionIdSchema>;

/** Facets by name: per name the value with the newest eventTime (a Dataset's, Job's, Run's...). */
export const Facets = () =>
  OpenObject({ description: 'Facets by name: per name the value with the newest eventTime' });

/** The body of every error answer (see http-core.ts): the HTTP status, the stable code, what to do. */
export const ErrorSchema = Shared('Error', {
  code: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
  errors: Type.Optional(Type.Array(Type.String())),
});
export type ErrorJson = Static<typeof ErrorSchema>;

/** Response schemas: `ok` for 200, the error body for the listed error statuses. */
export function responses(ok: unknown, ...errors: number[]): Record<number, unknown> {
  const result: Record<number, unknown> = { 200: ok };
  for (const status of errors) result[status] = Ref(ErrorSchema);
  return result;
}

/** Marquez's list answer: `{<key>: [items]}`, with `totalCount` (items on all pages) where the list pages. */
export type ListJson<K extends string, T, Paged extends boolean> = { [P in K]: T[] } & (Paged extends true
  ? { totalCount: number }
  : unknown);

/** The schema of a Marquez list answer (see {@link ListJson}) of a shared schema. */
export function listSchema<
  const K extends string,
  T extends TSchema & { $id: string },
  Paged extends boolean,
>(key: K, items: T, paged: Paged) {
  return Type.Unsafe<ListJson<K, Static<T>, Paged>>(
    Closed({
      [key]: Type.Array(Ref(items)),
      ...(paged ? { totalCount: Type.Integer({ description: 'Items on all pages' }) } : {}),
    }),
  );
}
