/** Marquez's Dataset, its lineage-graph data, versions, schema fields and column lineage; Headwater's aliases. */
import {
  Closed,
  Nullable,
  Ref,
  Shared,
  StringEnum,
  Time,
  Type,
  Uuid,
  type Static,
} from '../../core/json-schema.js';
import { DATASET_TYPES } from '../../model/entity-types.js';
import { ColumnTransformationSchema } from '../../read-model/column-graph.js';
import { EntityIdSchema, Facets } from './common.js';
import { RunSchema } from './run.js';

/** A schema field of a dataset. `type` is left out when the schema facet gave none. */
export const FieldSchema = Shared('Field', {
  name: Type.String(),
  type: Type.Optional(Type.String()),
  tags: Type.Array(Type.String()),
  description: Nullable(Type.String()),
});
export type FieldJson = Static<typeof FieldSchema>;

const firstTransformation = () =>
  Type.Optional(Type.String({ description: "Marquez's: the first transformation's" }));

/** An input field of a column-lineage entry, as Marquez shows it; transformation keys are left out when unknown. */
export const ColumnLineageInputFieldSchema = Closed({
  namespace: Type.String(),
  dataset: Type.String(),
  field: Type.String(),
  transformationDescription: firstTransformation(),
  transformationType: firstTransformation(),
  transformations: Type.Optional(
    Type.Array(ColumnTransformationSchema, {
      description: 'Headwater: every transformation of the input, one per type and subtype (JOIN, FILTER...)',
    }),
  ),
});
export type ColumnLineageInputFieldJson = Static<typeof ColumnLineageInputFieldSchema>;

/** One output field of a dataset and the input fields it is derived from. */
export const ColumnLineageSchema = Shared('ColumnLineage', {
  name: Type.String(),
  inputFields: Type.Array(ColumnLineageInputFieldSchema),
  transformationDescription: Type.Optional(Type.String()),
  transformationType: Type.Optional(Type.String()),
});
export type ColumnLineageJson = Static<typeof ColumnLineageSchema>;

const datasetNodeDataProperties = {
  id: Ref(EntityIdSchema),
  type: StringEnum(DATASET_TYPES),
  name: Type.String(),
  physicalName: Type.String(),
  createdAt: Time(),
  updatedAt: Time(),
  namespace: Type.String(),
  sourceName: Type.String(),
  fields: Type.Array(Ref(FieldSchema)),
  tags: Type.Array(Type.String()),
  lastModifiedAt: Nullable(Time()),
  description: Nullable(Type.String()),
  lastLifecycleState: Nullable(Type.String()),
};

/** A dataset node of the lineage graph (Marquez's DatasetData): a Dataset without facets or column lineage. */
export const DatasetDataSchema = Shared('DatasetData', datasetNodeDataProperties);
export type DatasetNodeData = Static<typeof DatasetDataSchema>;

/** Marquez's Dataset (GET /namespaces/{ns}/datasets/{ds}). */
export const DatasetSchema = Shared('Dataset', {
  ...datasetNodeDataProperties,
  currentVersion: Nullable(Uuid()),
  columnLineage: Type.Optional(Type.Array(Ref(ColumnLineageSchema))),
  datasetInputFields: Type.Optional(
    Type.Array(ColumnLineageInputFieldSchema, {
      description:
        "Headwater: input columns that influence the whole dataset (the columnLineage facet's `dataset` " +
        'list: JOIN, FILTER, GROUP_BY, SORT...); column impact analysis counts them',
    }),
  ),
  facets: Facets(),
  deleted: Type.Boolean({ description: 'The last lifecycle state was DROP' }),
  aliasOf: Type.Optional(
    Ref(EntityIdSchema, {
      description:
        'Headwater: the dataset this one was declared an alias of (lineage shows that one instead); ' +
        'left out when it is no alias',
    }),
  ),
  aliases: Type.Optional(
    Type.Array(Ref(EntityIdSchema), {
      description: 'Headwater: the datasets declared aliases of this one; left out when there are none',
    }),
  ),
});
/** Marquez's Dataset: `columnLineage` is left out when no column lineage leads into the dataset, as in Marquez. */
export type DatasetJson = Static<typeof DatasetSchema>;

/** Headwater's dataset alias: a name declared to be another dataset. */
export const AliasSchema = Shared('Alias', {
  alias: Ref(EntityIdSchema),
  dataset: Ref(EntityIdSchema, { description: 'The dataset the alias is' }),
  createdAt: Time(),
});
export type AliasJson = Static<typeof AliasSchema>;

/** Marquez's DatasetVersion. */
export const DatasetVersionSchema = Shared('DatasetVersion', {
  id: Ref(EntityIdSchema),
  type: StringEnum(DATASET_TYPES),
  name: Type.String(),
  physicalName: Type.String(),
  createdAt: Time(),
  version: Uuid(),
  namespace: Type.String(),
  sourceName: Type.String(),
  fields: Type.Array(Ref(FieldSchema)),
  tags: Type.Array(Type.String()),
  lifecycleState: Nullable(Type.String()),
  description: Nullable(Type.String()),
  currentSchemaVersion: Nullable(Uuid()),
  createdByRun: Nullable(Ref(RunSchema)),
  facets: Facets(),
});
export type DatasetVersionJson = Static<typeof DatasetVersionSchema>;
