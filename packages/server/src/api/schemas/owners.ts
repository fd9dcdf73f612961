/** The answers and bodies of .../datasets/{dataset}/owners and .../jobs/{job}/owners. */
import { Closed, Nullable, Shared, Time, Type, type Static } from '../../core/json-schema.js';
import { OwnerSchema } from '../../analysis/owners.js';
import { NO_NUL_PATTERN } from '../json-body.js';

/** Who owns a dataset or job: what producers report, what people declared, and the two together. */
export const NodeOwnersSchema = Shared('NodeOwners', {
  owners: Type.Array(OwnerSchema, {
    description:
      'Who is told of incidents and named by impact: the ownership facet’s owners, then the declared ones it does not name',
  }),
  reported: Type.Array(OwnerSchema, { description: 'From the latest ownership facet' }),
  declared: Nullable(
    Closed({
      owners: Type.Array(OwnerSchema),
      declaredAt: Time(),
      declaredBy: Type.String({ description: 'Who declared them, as the audit log names callers' }),
    }),
    { description: 'The last declaration through this API; null when there was none' },
  ),
});
export type NodeOwnersJson = Static<typeof NodeOwnersSchema>;

/** The body of PUT .../owners: the whole list, replacing the last declaration; an empty list withdraws it. */
export const OwnersBodySchema = Closed({
  owners: Type.Array(
    Closed({
      name: Type.String({ minLength: 1, maxLength: 256, pattern: NO_NUL_PATTERN }),
      type: Type.Optional(Nullable(Type.String({ maxLength: 64, pattern: NO_NUL_PATTERN }))),
    }),
    { maxItems: 100 },
  ),
});
export type OwnersBody = Static<typeof OwnersBodySchema>;
