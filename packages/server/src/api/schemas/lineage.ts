/** Marquez's lineage graphs (GET /lineage, GET /column-lineage): nodes with their data and edges. */
import {
  Closed,
  Nullable,
  Ref,
  Shared,
  Type,
  Uuid,
  type Static,
  type TSchema,
} from '../../core/json-schema.js';
import { ColumnTransformationSchema } from '../../read-model/column-graph.js';
import { DatasetDataSchema } from './dataset.js';
import { JobDataSchema } from './job.js';

/** An edge between two nodes of a lineage graph, by nodeId. */
export const LineageEdgeSchema = Shared('LineageEdge', { origin: Type.String(), destination: Type.String() });
export type LineageEdgeJson = Static<typeof LineageEdgeSchema>;

/** A node of a lineage graph: its nodeId, kind, data and edges (each sorted by origin, then destination). */
const node = <const K extends string, D extends TSchema>(type: K, data: D) =>
  Closed({
    id: Type.String({ description: 'The nodeId: dataset:<namespace>:<name>, job:..., datasetField:...' }),
    type: Type.Literal(type),
    data,
    inEdges: Type.Array(Ref(LineageEdgeSchema)),
    outEdges: Type.Array(Ref(LineageEdgeSchema)),
  });

/**
 * A caller who may not read every namespace gets a node of a hidden namespace as a placeholder: its id
 * `<type>:(redacted):<n>`, its data null, its edges kept (see security/redact.ts).
 */
const redactable = <T extends TSchema>(data: T) =>
  Nullable(data, { description: 'null for the placeholder of a node the caller may not read' });

/** A dataset node of GET /lineage. */
export const DatasetNodeSchema = node('DATASET', redactable(Ref(DatasetDataSchema)));
export type DatasetNodeJson = Static<typeof DatasetNodeSchema>;

/** A job node of GET /lineage. */
export const JobNodeSchema = node('JOB', redactable(Ref(JobDataSchema)));
export type JobNodeJson = Static<typeof JobNodeSchema>;

/** GET /lineage: Marquez's graph of dataset and job nodes, sorted by id. */
export const LineageGraphSchema = Shared('LineageGraph', {
  graph: Type.Array(Type.Union([DatasetNodeSchema, JobNodeSchema])),
});
export type LineageGraphJson = Static<typeof LineageGraphSchema>;

const columnProperties = {
  namespace: Type.String(),
  dataset: Type.String(),
  datasetVersion: Nullable(Uuid(), { description: "The dataset's current version (then, with asOf)" }),
  field: Type.String(),
};

/** An input column of a column node, with its transformations. */
export const ColumnInputFieldSchema = Closed({
  ...columnProperties,
  transformationDescription: Nullable(Type.String(), {
    description: "Marquez's: the first transformation's",
  }),
  transformationType: Nullable(Type.String(), { description: "Marquez's: the first transformation's" }),
  transformations: Type.Array(ColumnTransformationSchema, {
    description: 'Headwater: every transformation of the input, one per type and subtype',
  }),
});
export type ColumnInputFieldJson = Static<typeof ColumnInputFieldSchema>;

/** The data of a column node (Marquez's ColumnLineageNodeData). */
export const ColumnNodeDataSchema = Closed({
  ...columnProperties,
  fieldType: Nullable(Type.String(), { description: "From the dataset's schema facet" }),
  transformationDescription: Nullable(Type.String(), { description: "The first input's" }),
  transformationType: Nullable(Type.String(), { description: "The first input's" }),
  inputFields: Type.Array(ColumnInputFieldSchema),
});
export type ColumnNodeDataJson = Static<typeof ColumnNodeDataSchema>;

/** A column node of GET /column-lineage. */
export const ColumnNodeSchema = node('DATASET_FIELD', ColumnNodeDataSchema);
export type ColumnNodeJson = Static<typeof ColumnNodeSchema>;

/** GET /column-lineage: Marquez's graph of DATASET_FIELD nodes, sorted by id. */
export const ColumnLineageGraphSchema = Shared('ColumnLineageGraph', { graph: Type.Array(ColumnNodeSchema) });
export type ColumnLineageGraphJson = Static<typeof ColumnLineageGraphSchema>;
