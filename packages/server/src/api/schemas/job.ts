/** Marquez's Job, its lineage-graph data (JobData) and its versions. */
import { Nullable, Ref, Shared, StringEnum, Time, Type, Uuid, type Static } from '../../core/json-schema.js';
import { JOB_TYPES } from '../../model/entity-types.js';
import { EntityIdSchema, Facets, VersionIdSchema } from './common.js';
import { RunSchema } from './run.js';

const jobNodeDataProperties = {
  id: Ref(EntityIdSchema),
  type: StringEnum(JOB_TYPES),
  name: Type.String(),
  simpleName: Type.String(),
  parentJobName: Type.Optional(Type.String()),
  parentJobUuid: Type.Optional(
    Uuid({ description: 'See jobUuid: the name-based uuid of job:<namespace>:<name>' }),
  ),
  createdAt: Time(),
  updatedAt: Time(),
  namespace: Type.String(),
  inputs: Type.Array(Ref(EntityIdSchema)),
  outputs: Type.Array(Ref(EntityIdSchema)),
  location: Nullable(Type.String()),
  description: Nullable(Type.String()),
  latestRun: Nullable(Ref(RunSchema)),
};

/** A job node of the lineage graph (Marquez's JobData). */
export const JobDataSchema = Shared('JobData', {
  ...jobNodeDataProperties,
  currentRunUuid: Type.Optional(Uuid()),
});
export type JobNodeData = Static<typeof JobDataSchema>;

/** Marquez's Job (GET /namespaces/{ns}/jobs/{job}). */
export const JobSchema = Shared('Job', {
  ...jobNodeDataProperties,
  latestRuns: Nullable(Type.Array(Ref(RunSchema))),
  facets: Facets(),
  currentVersion: Nullable(Uuid()),
  labels: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
});
export type JobJson = Static<typeof JobSchema>;

/** Marquez's JobVersion: `latestRun` is left out when no run ran the version. */
export const JobVersionSchema = Shared('JobVersion', {
  id: Ref(VersionIdSchema),
  name: Type.String(),
  createdAt: Time(),
  version: Uuid(),
  namespace: Type.String(),
  location: Nullable(Type.String()),
  inputs: Type.Array(Ref(EntityIdSchema)),
  outputs: Type.Array(Ref(EntityIdSchema)),
  latestRun: Type.Optional(Ref(RunSchema)),
});
export type JobVersionJson = Static<typeof JobVersionSchema>;
