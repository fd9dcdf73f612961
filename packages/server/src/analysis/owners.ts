/** The owners an analysis names (from the latest `ownership` facet of a dataset or job). */
import { Closed, Nullable, Type, type Static } from '../core/json-schema.js';

/** An owner of a node: its name and, when the facet gave one, its type. */
export const OwnerSchema = Closed({ name: Type.String(), type: Nullable(Type.String()) });
export type OwnerJson = Static<typeof OwnerSchema>;

/** Everyone who owns a node of an answer, by name, with the nodes they own. */
export const OwnerRollupSchema = Closed({
  name: Type.String(),
  type: Nullable(Type.String()),
  nodes: Type.Array(Type.String()),
});
export type OwnerRollupJson = Static<typeof OwnerRollupSchema>;
