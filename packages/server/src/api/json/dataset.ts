/**
 * Marquez's Dataset, DatasetData and DatasetVersion, built from the store's records, and the loaders that read
 * them for a page in a fixed number of queries.
 *
 * Marquez writes JSON with Jackson's NON_NULL inclusion, with one quirk that clients rely on: a getter that
 * returns an empty `Optional` is written as an explicit `null` (description, lastModifiedAt...), while a plain
 * null field is left out (a field's type...). The builders follow that field by field.
 */
import type { Queryable } from '../../store/db.js';
import {
  columnLineageInto,
  findDatasets,
  type ColumnLineageRecord,
  type DatasetRecord,
  type DatasetVersionRecord,
} from '../../store/queries/datasets.js';
import { datasetFacets, type Facets } from '../../store/queries/facets.js';
import { DATASET_FIELD } from '../../model/identity.js';
import type {
  ColumnLineageInputFieldJson,
  ColumnLineageJson,
  DatasetJson,
  DatasetNodeData,
  DatasetVersionJson,
  FieldJson,
} from '../schemas/dataset.js';
import type { RunJson } from '../schemas/run.js';
import { iso, isObject, isoOrNull } from './values.js';

/** The top-level fields of a schema facet, with the tags put on them through the API. */
function fieldsJson(
  fields: readonly unknown[] | null,
  fieldTags: Record<string, string[]> | null,
): FieldJson[] {
  const result: FieldJson[] = [];
  for (const field of fields ?? []) {
    if (!isObject(field) || typeof field.name !== 'string') continue;
    result.push({
      name: field.name,
      ...(typeof field.type === 'string' ? { type: field.type } : {}),
      tags: fieldTags?.[field.name] ?? [],
      description: typeof field.description === 'string' ? field.description : null,
    });
  }
  return result;
}

/** Builds the lineage-graph data of a dataset (Marquez's DatasetData). */
export function datasetNodeData(record: DatasetRecord): DatasetNodeData {
  return {
    id: { namespace: record.namespace, name: record.name },
    type: record.type,
    name: record.name,
    physicalName: record.name,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    namespace: record.namespace,
    sourceName: record.sourceName,
    fields: fieldsJson(record.fields, record.fieldTags),
    tags: record.tags,
    lastModifiedAt: isoOrNull(record.lastModifiedAt),
    description: record.description,
    lastLifecycleState: record.lifecycleState,
  };
}

/**
 * Marquez's columnLineage of a dataset: one entry per output field, its input fields in order, each input field
 * once with all its transformations (a Spark column that is both aggregated and filtered is one input).
 */
export function columnLineageJson(records: readonly ColumnLineageRecord[]): ColumnLineageJson[] {
  const byField = new Map<string, Map<string, ColumnLineageInputFieldJson>>();
  for (const record of records) {
    let inputs = byField.get(record.outputField);
    if (!inputs) byField.set(record.outputField, (inputs = new Map<string, ColumnLineageInputFieldJson>()));
    const key = JSON.stringify([record.namespace, record.dataset, record.field]);
    let input = inputs.get(key);
    if (!input) {
      input = { namespace: record.namespace, dataset: record.dataset, field: record.field };
      inputs.set(key, input);
    }
    if (record.transformationType === '') continue;
    // Marquez reports one transformation per input: the first one's.
    if (input.transformations === undefined) {
      if (record.transformationDescription !== null)
        input.transformationDescription = record.transformationDescription;
      input.transformationType = record.transformationType;
      input.transformations = [];
    }
    input.transformations.push({
      type: record.transformationType,
      subtype: record.transformationSubtype,
      description: record.transformationDescription,
      masking: record.masking,
    });
  }
  return [...byField].map(([name, inputs]) => {
    const inputFields = [...inputs.values()];
    // Marquez still reports the first input's transformation at the field level (deprecated there).
    const first = inputFields[0];
    return {
      name,
      inputFields,
      ...(first?.transformationDescription !== undefined
        ? { transformationDescription: first.transformationDescription }
        : {}),
      ...(first?.transformationType !== undefined ? { transformationType: first.transformationType } : {}),
    };
  });
}

/** Builds a Dataset from its record, latest merged facets and column lineage into it. */
export function datasetJson(
  record: DatasetRecord,
  facets: Facets,
  columnLineage: readonly ColumnLineageRecord[],
): DatasetJson {
  const data = datasetNodeData(record);
  const ofFields = columnLineage.filter((r) => r.outputField !== DATASET_FIELD);
  const ofDataset = columnLineage.filter((r) => r.outputField === DATASET_FIELD);
  return {
    ...data,
    currentVersion: record.currentVersion,
    ...(ofFields.length > 0 ? { columnLineage: columnLineageJson(ofFields) } : {}),
    ...(ofDataset.length > 0 ? { datasetInputFields: columnLineageJson(ofDataset)[0]!.inputFields } : {}),
    facets,
    deleted: record.lifecycleState === 'DROP',
  };
}

/**
 * Builds a DatasetVersion: the version's fields and lifecycle state, the dataset's name, source, description
 * and tags, the facets of the version's time and the run that created it (null if no run did).
 */
export function datasetVersionJson(
  dataset: DatasetRecord,
  version: DatasetVersionRecord,
  facets: Facets,
  createdByRun: RunJson | null,
): DatasetVersionJson {
  return {
    id: { namespace: dataset.namespace, name: dataset.name },
    type: dataset.type,
    name: dataset.name,
    physicalName: dataset.name,
    createdAt: iso(version.createdAt),
    version: version.version,
    namespace: dataset.namespace,
    sourceName: dataset.sourceName,
    fields: fieldsJson(version.fields, dataset.fieldTags),
    tags: dataset.tags,
    lifecycleState: version.lifecycleState,
    description: dataset.description,
    // Marquez's schema versions (a uuid over field names and types) are not tracked.
    currentSchemaVersion: null,
    createdByRun,
    facets,
  };
}

/** The Dataset of each record, with its latest merged facets and column lineage, in the records' order. */
export async function datasetsJson(db: Queryable, records: readonly DatasetRecord[]): Promise<DatasetJson[]> {
  const ids = records.map((record) => record.id);
  const [facets, lineage] = await Promise.all([datasetFacets(db, ids), columnLineageInto(db, ids)]);
  return records.map((record) =>
    datasetJson(record, facets.get(record.id) ?? {}, lineage.get(record.id) ?? []),
  );
}

/** Datasets by id with facets and column lineage (three queries run together); unknown ids are absent. */
export async function loadDatasets(db: Queryable, ids: readonly number[]): Promise<Map<number, DatasetJson>> {
  const [records, facets, lineage] = await Promise.all([
    findDatasets(db, ids),
    datasetFacets(db, ids),
    columnLineageInto(db, ids),
  ]);
  return new Map(
    records.map((record) => [
      record.id,
      datasetJson(record, facets.get(record.id) ?? {}, lineage.get(record.id) ?? []),
    ]),
  );
}

/**
 * The lineage-graph data of datasets by id, in one query (for GET /lineage). Hidden datasets are included:
 * the caller decides what the graph shows.
 */
export async function loadDatasetNodeData(
  db: Queryable,
  ids: readonly number[],
): Promise<Map<number, DatasetNodeData>> {
  const records = await findDatasets(db, ids);
  return new Map(records.map((record) => [record.id, datasetNodeData(record)]));
}
