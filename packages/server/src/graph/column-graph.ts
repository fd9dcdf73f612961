import type { Changeset } from '../ingest/derive.js';
import type { Queryable } from '../store/db.js';

/** A column: dataset id and field name. */
export interface FieldRef {
  readonly datasetId: number;
  readonly field: string;
}

/** One way a column feeds another. */
export interface ColumnTransformation {
  readonly type: string;
  readonly subtype: string;
  readonly description: string | null;
  readonly masking: boolean;
}

/** An input column of an output column, with how it is transformed. */
export interface ColumnInput extends FieldRef {
  readonly transformations: ColumnTransformation[];
}

const keyOf = (datasetId: number, field: string) => `${datasetId}\u0000${field}`;

/**
 * Column-level lineage kept in memory, in both directions: output column -> its input columns with their
 * transformations, and input column -> the output columns it feeds. Loaded from column_lineage at start and
 * updated after every commit, like the job-level graph.
 */
export class ColumnGraph {
  readonly #inputs = new Map<string, Map<string, ColumnInput>>();
  readonly #outputs = new Map<string, Set<string>>();
  readonly #fieldsOf = new Map<number, Set<string>>();
  readonly #refs = new Map<string, FieldRef>();

  /** Loads every column edge from the store. */
  async load(db: Queryable): Promise<void> {
    const rows = await db.query<{
      output_dataset_id: number;
      output_field: string;
      input_dataset_id: number;
      input_field: string;
      transformation_type: string;
      transformation_subtype: string;
      transformation_description: string | null;
      masking: boolean;
    }>(
      `SELECT output_dataset_id, output_field, input_dataset_id, input_field, transformation_type,
              transformation_subtype, transformation_description, masking FROM column_lineage`,
    );
    for (const row of rows) {
      this.#add(row.output_dataset_id, row.output_field, row.input_dataset_id, row.input_field, {
        type: row.transformation_type,
        subtype: row.transformation_subtype,
        description: row.transformation_description,
        masking: row.masking,
      });
    }
  }

  /** Takes in a committed changeset. */
  apply(changes: Changeset): void {
    for (const edge of changes.columnEdges.values()) {
      this.#add(edge.outputDatasetId, edge.outputField, edge.inputDatasetId, edge.inputField, {
        type: edge.type,
        subtype: edge.subtype,
        description: edge.description,
        masking: edge.masking,
      });
    }
  }

  #ref(datasetId: number, field: string): FieldRef {
    const key = keyOf(datasetId, field);
    let ref = this.#refs.get(key);
    if (!ref) {
      ref = { datasetId, field };
      this.#refs.set(key, ref);
      let fields = this.#fieldsOf.get(datasetId);
      if (!fields) this.#fieldsOf.set(datasetId, (fields = new Set<string>()));
      fields.add(field);
    }
    return ref;
  }

  #add(outDataset: number, outField: string, inDataset: number, inField: string, t: ColumnTransformation) {
    this.#ref(outDataset, outField);
    this.#ref(inDataset, inField);
    const outKey = keyOf(outDataset, outField);
    const inKey = keyOf(inDataset, inField);
    let inputs = this.#inputs.get(outKey);
    if (!inputs) this.#inputs.set(outKey, (inputs = new Map<string, ColumnInput>()));
    let input = inputs.get(inKey);
    if (!input) inputs.set(inKey, (input = { datasetId: inDataset, field: inField, transformations: [] }));
    if (!input.transformations.some((known) => known.type === t.type && known.subtype === t.subtype)) {
      input.transformations.push(t);
    }
    let outputs = this.#outputs.get(inKey);
    if (!outputs) this.#outputs.set(inKey, (outputs = new Set<string>()));
    outputs.add(outKey);
  }

  /** Columns of a dataset that take part in column lineage. */
  fieldsOf(datasetId: number): FieldRef[] {
    return [...(this.#fieldsOf.get(datasetId) ?? [])].map((field) => this.#ref(datasetId, field));
  }

  /** The input columns of a column. */
  inputsOf(ref: FieldRef): ColumnInput[] {
    return [...(this.#inputs.get(keyOf(ref.datasetId, ref.field))?.values() ?? [])];
  }

  /** The columns a column feeds. */
  outputsOf(ref: FieldRef): FieldRef[] {
    return [...(this.#outputs.get(keyOf(ref.datasetId, ref.field)) ?? [])].map((key) => this.#refs.get(key)!);
  }

  /**
   * Columns reachable from `starts` within `depth` hops upstream (and downstream when asked), each with its
   * distance. A visited set keeps cycles finite.
   */
  traverse(
    starts: readonly FieldRef[],
    depth: number,
    downstream: boolean,
  ): Map<string, FieldRef & { distance: number }> {
    const reached = new Map<string, FieldRef & { distance: number }>();
    const walk = (up: boolean) => {
      let frontier = starts.map((ref) => ({ ...ref, distance: 0 }));
      for (const ref of frontier) reached.set(keyOf(ref.datasetId, ref.field), ref);
      const seen = new Set(frontier.map((ref) => keyOf(ref.datasetId, ref.field)));
      for (let distance = 1; distance <= depth && frontier.length > 0; distance++) {
        const next: (FieldRef & { distance: number })[] = [];
        for (const ref of frontier) {
          for (const neighbour of up ? this.inputsOf(ref) : this.outputsOf(ref)) {
            const key = keyOf(neighbour.datasetId, neighbour.field);
            if (seen.has(key)) continue;
            seen.add(key);
            const entry = { datasetId: neighbour.datasetId, field: neighbour.field, distance };
            if (!reached.has(key)) reached.set(key, entry);
            next.push(entry);
          }
        }
        frontier = next;
      }
    };
    walk(true);
    if (downstream) walk(false);
    return reached;
  }
}
