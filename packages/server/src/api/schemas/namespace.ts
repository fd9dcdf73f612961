/** Marquez's Namespace, Source and Tag. */
import { Nullable, Shared, Time, Type, type Static } from '../../core/json-schema.js';

/** Marquez's Namespace. */
export const NamespaceSchema = Shared('Namespace', {
  name: Type.String(),
  createdAt: Time(),
  updatedAt: Time(),
  ownerName: Type.String(),
  description: Nullable(Type.String()),
  isHidden: Type.Boolean(),
});
export type NamespaceJson = Static<typeof NamespaceSchema>;

/** Marquez's Source. */
export const SourceSchema = Shared('Source', {
  type: Type.String(),
  name: Type.String(),
  createdAt: Time(),
  updatedAt: Time(),
  connectionUrl: Type.String(),
  description: Nullable(Type.String()),
});
export type SourceJson = Static<typeof SourceSchema>;

/** Marquez's Tag. */
export const TagSchema = Shared('Tag', { name: Type.String(), description: Nullable(Type.String()) });
export type TagJson = Static<typeof TagSchema>;
