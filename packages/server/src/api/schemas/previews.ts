/** The answers and bodies of /api/v1/previews. */
import { Closed, Nullable, Shared, Time, Type, type Static } from '../../core/json-schema.js';
import { DURATION_PATTERN } from '../../core/config-reader.js';
import { PREVIEW_NAME } from '../../store/preview-store.js';
import { NO_NUL_PATTERN } from '../json-body.js';

const Name = (description: string) =>
  Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL_PATTERN, description });

/** One side of a mapping: a name pattern (`*` matches any text), and optionally its namespace. */
const MappingSide = Closed({
  namespace: Type.Optional(Nullable(Name('The namespace it applies in (any when absent)'))),
  name: Name('A name pattern: `*` matches any text'),
});

const Mapping = Closed({ from: MappingSide, to: MappingSide });

/** A preview, as registered. */
export const PreviewSchema = Shared('Preview', {
  name: Type.String(),
  jobNamespace: Type.String({ description: "Events of jobs in this namespace are the preview's" }),
  baseNamespace: Type.String({ description: "The production job namespace the preview's jobs stand in for" }),
  pullRequest: Nullable(Type.Integer(), {
    description: "Events whose job's sourceCodeLocation names this pull request are the preview's too",
  }),
  commitSha: Nullable(Type.String(), {
    description: '... or whose sourceCodeLocation version is this commit',
  }),
  mappings: Type.Array(Mapping),
  createdAt: Time(),
  createdBy: Type.String(),
  expiresAt: Nullable(Time(), { description: 'When it is removed (null: when deleted)' }),
});
export type PreviewJson = Static<typeof PreviewSchema>;

/** The body of POST /api/v1/previews. */
export const PreviewBodySchema = Closed({
  name: Type.String({
    pattern: PREVIEW_NAME.source,
    description: 'Lower-case letters, digits, inner dashes',
  }),
  jobNamespace: Name("The namespace the preview's jobs send their events with"),
  baseNamespace: Name('The production job namespace they stand in for'),
  pullRequest: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  commitSha: Type.Optional(Nullable(Type.String({ pattern: '^[0-9a-fA-F]{7,64}$' }))),
  mappings: Type.Optional(Type.Array(Mapping, { maxItems: 100 })),
  ttl: Type.Optional(
    Nullable(
      Type.String({
        pattern: DURATION_PATTERN,
        description: 'How long it lives: 14d, 12h (none: until deleted)',
      }),
    ),
  ),
});
export type PreviewBody = Static<typeof PreviewBodySchema>;
