import type { Changeset } from '../ingest/derive.js';
import type { Queryable } from '../store/db.js';
import type { Ms } from '../store/model-state.js';

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

/** Keeps the earliest time under `key`. */
function earliest(map: Map<string, Ms>, key: string, time: Ms): void {
  const known = map.get(key);
  if (known === undefined || time < known) map.set(key, time);
}

/**
 * Column-level lineage kept in memory, in both directions: output column -> its input columns with their
 * transformations, and input column -> the output columns it feeds. Loaded from column_lineage at start and
 * updated after every commit, like the job-level graph. Column lineage is never retired, so the graph as of an
 * event time `at` is the edges first seen by then.
 */
export class ColumnGraph {
  readonly #inputs = new Map<string, Map<string, ColumnInput>>();
  readonly #outputs = new Map<string, Set<string>>();
  readonly #fieldsOf = new Map<number, Set<string>>();
  readonly #refs = new Map<string, FieldRef>();
  /** When each transformation, edge (output key, input key) and column was first seen. */
  readonly #transformationSince = new WeakMap<ColumnTransformation, Ms>();
  readonly #edgeSince = new Map<string, Ms>();
  readonly #fieldSince = new Map<string, Ms>();

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
      first_seen: Date;
    }>(
      `SELECT output_dataset_id, output_field, input_dataset_id, input_field, transformation_type,
              transformation_subtype, transformation_description, masking, first_seen FROM column_lineage`,
    );
    for (const row of rows) {
      this.#add(
        row.output_dataset_id,
        row.output_field,
        row.input_dataset_id,
        row.input_field,
        {
          type: row.transformation_type,
          subtype: row.transformation_subtype,
          description: row.transformation_description,
          masking: row.masking,
        },
        row.first_seen.getTime(),
      );
    }
  }

  /** Takes in a committed changeset. */
  apply(changes: Changeset): void {
    for (const edge of changes.columnEdges.values()) {
      this.#add(
        edge.outputDatasetId,
        edge.outputField,
        edge.inputDatasetId,
        edge.inputField,
        {
          type: edge.type,
          subtype: edge.subtype,
          description: edge.description,
          masking: edge.masking,
        },
        edge.seen,
      );
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

  #add(
    outDataset: number,
    outField: string,
    inDataset: number,
    inField: string,
    t: ColumnTransformation,
    since: Ms,
  ) {
    this.#ref(outDataset, outField);
    this.#ref(inDataset, inField);
    const outKey = keyOf(outDataset, outField);
    const inKey = keyOf(inDataset, inField);
    earliest(this.#fieldSince, outKey, since);
    earliest(this.#fieldSince, inKey, since);
    earliest(this.#edgeSince, `${outKey}\u0001${inKey}`, since);
    let inputs = this.#inputs.get(outKey);
    if (!inputs) this.#inputs.set(outKey, (inputs = new Map<string, ColumnInput>()));
    let input = inputs.get(inKey);
    if (!input) inputs.set(inKey, (input = { datasetId: inDataset, field: inField, transformations: [] }));
    const known = input.transformations.find((other) => other.type === t.type && other.subtype === t.subtype);
    if (known) {
      this.#transformationSince.set(known, Math.min(this.#transformationSince.get(known) ?? since, since));
    } else {
      input.transformations.push(t);
      this.#transformationSince.set(t, since);
    }
    let outputs = this.#outputs.get(inKey);
    if (!outputs) this.#outputs.set(inKey, (outputs = new Set<string>()));
    outputs.add(outKey);
  }

  /** Columns of a dataset that take part in column lineage (as of `at`). */
  fieldsOf(datasetId: number, at?: Ms): FieldRef[] {
    const fields = [...(this.#fieldsOf.get(datasetId) ?? [])];
    return (
      at === undefined
        ? fields
        : fields.filter((field) => this.#fieldSince.get(keyOf(datasetId, field))! <= at)
    ).map((field) => this.#ref(datasetId, field));
  }

  /** The input columns of a column (as of `at`: with the transformations seen by then). */
  inputsOf(ref: FieldRef, at?: Ms): ColumnInput[] {
    const inputs = [...(this.#inputs.get(keyOf(ref.datasetId, ref.field))?.values() ?? [])];
    if (at === undefined) return inputs;
    const result: ColumnInput[] = [];
    for (const input of inputs) {
      const transformations = input.transformations.filter(
        (transformation) => this.#transformationSince.get(transformation)! <= at,
      );
      if (transformations.length > 0) result.push({ ...input, transformations });
    }
    return result;
  }

  /** The columns a column feeds (as of `at`). */
  outputsOf(ref: FieldRef, at?: Ms): FieldRef[] {
    const inKey = keyOf(ref.datasetId, ref.field);
    const keys = [...(this.#outputs.get(inKey) ?? [])];
    return (
      at === undefined ? keys : keys.filter((outKey) => this.#edgeSince.get(`${outKey}\u0001${inKey}`)! <= at)
    ).map((key) => this.#refs.get(key)!);
  }

  /**
   * Columns reachable from `starts` within `depth` hops upstream (and downstream when asked), each with its
   * distance. A visited set keeps cycles finite.
   */
  traverse(
    starts: readonly FieldRef[],
    depth: number,
    downstream: boolean,
    at?: Ms,
  ): Map<string, FieldRef & { distance: number }> {
    const reached = new Map<string, FieldRef & { distance: number }>();
    const walk = (up: boolean) => {
      let frontier = starts.map((ref) => ({ ...ref, distance: 0 }));
      for (const ref of frontier) reached.set(keyOf(ref.datasetId, ref.field), ref);
      const seen = new Set(frontier.map((ref) => keyOf(ref.datasetId, ref.field)));
      for (let distance = 1; distance <= depth && frontier.length > 0; distance++) {
        const next: (FieldRef & { distance: number })[] = [];
        for (const ref of frontier) {
          for (const neighbour of up ? this.inputsOf(ref, at) : this.outputsOf(ref, at)) {
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
