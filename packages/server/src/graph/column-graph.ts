import type { ReadDelta } from '../store/read-delta.js';
import type { Queryable } from '../store/db.js';
import { MS, type Ms } from '../store/model-state.js';

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
 * The output field of a column edge from an input column that influences the whole output dataset (the
 * columnLineage facet's `dataset` list: JOIN, FILTER, GROUP_BY, SORT...). Such an edge is no column of the
 * output: it is kept apart, and analyses count it as an input of every column of the output.
 */
export const DATASET_FIELD = '';

/** A dataset-level input edge: the transformation kinds and when each was first seen. */
interface WholeEdge {
  readonly kinds: number[];
  readonly since: Ms[];
}

/** Rows read per query at start, so the transient memory of a load stays bounded. */
const LOAD_PAGE_ROWS = 50_000;

/**
 * Column-level lineage kept in memory, in both directions: output column -> its input columns with their
 * transformations, and input column -> the output columns it feeds. Loaded from column_lineage at start and
 * updated after every commit, like the job-level graph. Column lineage is never retired, so the graph as of an
 * event time `at` is the edges first seen by then.
 *
 * Memory follows the column edges of the graph (never the number of events): columns and transformation kinds
 * are interned once, and edges and the lists of edges per column are parallel arrays of numbers: about 60 bytes
 * an edge and 100 a column, because a warehouse's column lineage runs to millions of edges, a Map of objects per
 * edge cost 1.6 KB each and seconds to load, and an array of edge ids per column 200 bytes a column.
 */
export class ColumnGraph {
  /** Dataset -> field -> column id; per column id, its dataset, field and when it was first seen. */
  #columnIds = new Map<number, Map<string, number>>();
  /** Field names, interned: a warehouse has few distinct names (id, created_at, ...) on many datasets. */
  #names = new Map<string, string>();
  #columnDataset: number[] = [];
  #columnField: string[] = [];
  #columnSince: number[] = [];
  /**
   * The columns of a dataset, as a list through the column arrays: its first and last column, and per column
   * the next column of its dataset (-1 at the end). Lists in parallel arrays, not an array per key: a million
   * small arrays cost 200 bytes each, the lists 8 bytes an entry.
   */
  #firstColumn = new Map<number, number>();
  #lastColumn = new Map<number, number>();
  #nextColumn: number[] = [];
  /** Transformation kinds, interned: equal kinds are one shared (frozen) object. */
  #kinds: ColumnTransformation[] = [];
  #kindIds = new Map<string, number>();
  /** Per edge id: its output and input column, when first seen, and its kinds with when each was first seen. */
  #edgeOut: number[] = [];
  #edgeIn: number[] = [];
  #edgeSince: number[] = [];
  #edgeKinds: (number | number[])[] = [];
  #edgeKindSince: (number | number[])[] = [];
  /**
   * The edges into a column (its inputs) and out of it (the outputs it feeds), in arrival order, as lists: per
   * column its first and last edge (-1: none), per edge the next edge into the same column / out of the same
   * column (-1 at the end).
   */
  #firstInto: number[] = [];
  #lastInto: number[] = [];
  #firstOutOf: number[] = [];
  #lastOutOf: number[] = [];
  #nextInto: number[] = [];
  #nextOutOf: number[] = [];
  /** Dataset -> input column -> its dataset-level edge (see DATASET_FIELD); input column -> those datasets. */
  #wholeInto = new Map<number, Map<number, WholeEdge>>();
  #wholeOutOf = new Map<number, Set<number>>();

  /**
   * Takes over everything `other` holds, at once (synchronously, so readers never see a mix): how a replica
   * that fell too far behind the commit feed swaps in a graph it loaded aside. `other` is not used after.
   */
  adopt(other: ColumnGraph): void {
    this.#columnIds = other.#columnIds;
    this.#names = other.#names;
    this.#columnDataset = other.#columnDataset;
    this.#columnField = other.#columnField;
    this.#columnSince = other.#columnSince;
    this.#firstColumn = other.#firstColumn;
    this.#lastColumn = other.#lastColumn;
    this.#nextColumn = other.#nextColumn;
    this.#kinds = other.#kinds;
    this.#kindIds = other.#kindIds;
    this.#edgeOut = other.#edgeOut;
    this.#edgeIn = other.#edgeIn;
    this.#edgeSince = other.#edgeSince;
    this.#edgeKinds = other.#edgeKinds;
    this.#edgeKindSince = other.#edgeKindSince;
    this.#firstInto = other.#firstInto;
    this.#lastInto = other.#lastInto;
    this.#firstOutOf = other.#firstOutOf;
    this.#lastOutOf = other.#lastOutOf;
    this.#nextInto = other.#nextInto;
    this.#nextOutOf = other.#nextOutOf;
    this.#wholeInto = other.#wholeInto;
    this.#wholeOutOf = other.#wholeOutOf;
  }

  /** Loads every column edge from the store, a page at a time. */
  async load(db: Queryable): Promise<void> {
    let after: [number, string, number, string, string, string] | undefined;
    for (;;) {
      const rows = await db.query<ColumnEdgeRow>(
        `SELECT output_dataset_id, output_field, input_dataset_id, input_field, transformation_type,
                transformation_subtype, transformation_description, masking, ${MS('first_seen')} AS first_seen
         FROM column_lineage
         ${after ? 'WHERE (output_dataset_id, output_field, input_dataset_id, input_field, transformation_type, transformation_subtype) > ($1, $2, $3, $4, $5, $6)' : ''}
         ORDER BY output_dataset_id, output_field, input_dataset_id, input_field, transformation_type, transformation_subtype
         LIMIT ${LOAD_PAGE_ROWS}`,
        after ?? [],
      );
      for (const row of rows) {
        this.#add(
          row.output_dataset_id,
          row.output_field,
          row.input_dataset_id,
          row.input_field,
          row.transformation_type,
          row.transformation_subtype,
          row.transformation_description,
          row.masking,
          row.first_seen,
        );
      }
      const last = rows.at(-1);
      if (!last || rows.length < LOAD_PAGE_ROWS) return;
      after = [
        last.output_dataset_id,
        last.output_field,
        last.input_dataset_id,
        last.input_field,
        last.transformation_type,
        last.transformation_subtype,
      ];
    }
  }

  /** Takes in a committed changeset. */
  apply(delta: ReadDelta): void {
    for (const edge of delta.columnEdges) this.#add(...edge);
  }

  #columnId(datasetId: number, field: string): number | undefined {
    return this.#columnIds.get(datasetId)?.get(field);
  }

  #column(datasetId: number, field: string, since: Ms): number {
    let fields = this.#columnIds.get(datasetId);
    if (!fields) this.#columnIds.set(datasetId, (fields = new Map<string, number>()));
    let id = fields.get(field);
    if (id === undefined) {
      let name = this.#names.get(field);
      if (name === undefined) this.#names.set(field, (name = field));
      id = this.#columnDataset.length;
      fields.set(name, id);
      this.#columnDataset.push(datasetId);
      this.#columnField.push(name);
      this.#columnSince.push(since);
      this.#firstInto.push(-1);
      this.#lastInto.push(-1);
      this.#firstOutOf.push(-1);
      this.#lastOutOf.push(-1);
      this.#nextColumn.push(-1);
      const last = this.#lastColumn.get(datasetId);
      if (last === undefined) this.#firstColumn.set(datasetId, id);
      else this.#nextColumn[last] = id;
      this.#lastColumn.set(datasetId, id);
    } else if (since < this.#columnSince[id]!) this.#columnSince[id] = since;
    return id;
  }

  #kind(type: string, subtype: string, description: string | null, masking: boolean): number {
    const key = `${type}\u0000${subtype}\u0000${description ?? '\u0001'}\u0000${masking}`;
    let id = this.#kindIds.get(key);
    if (id === undefined) {
      id = this.#kinds.length;
      this.#kinds.push(Object.freeze({ type, subtype, description, masking }));
      this.#kindIds.set(key, id);
    }
    return id;
  }

  #add(
    outDataset: number,
    outField: string,
    inDataset: number,
    inField: string,
    type: string,
    subtype: string,
    description: string | null,
    masking: boolean,
    since: Ms,
  ) {
    if (outField === DATASET_FIELD) {
      this.#addWhole(
        outDataset,
        this.#column(inDataset, inField, since),
        this.#kind(type, subtype, description, masking),
        since,
      );
      return;
    }
    const out = this.#column(outDataset, outField, since);
    const input = this.#column(inDataset, inField, since);
    // An output column has a handful of inputs: a scan beats a map keyed by edge.
    let edge = this.#firstInto[out]!;
    while (edge >= 0 && this.#edgeIn[edge] !== input) edge = this.#nextInto[edge]!;
    if (edge < 0) {
      edge = this.#edgeOut.length;
      this.#edgeOut.push(out);
      this.#edgeIn.push(input);
      this.#edgeSince.push(since);
      this.#edgeKinds.push(this.#kind(type, subtype, description, masking));
      this.#edgeKindSince.push(since);
      this.#nextInto.push(-1);
      this.#nextOutOf.push(-1);
      if (this.#lastInto[out]! < 0) this.#firstInto[out] = edge;
      else this.#nextInto[this.#lastInto[out]!] = edge;
      this.#lastInto[out] = edge;
      if (this.#lastOutOf[input]! < 0) this.#firstOutOf[input] = edge;
      else this.#nextOutOf[this.#lastOutOf[input]!] = edge;
      this.#lastOutOf[input] = edge;
      return;
    }
    if (since < this.#edgeSince[edge]!) this.#edgeSince[edge] = since;
    // A transformation is one per type and subtype: the first seen keeps its description.
    const kinds = this.#edgeKinds[edge]!;
    const sinces = this.#edgeKindSince[edge]!;
    const kindList = typeof kinds === 'number' ? [kinds] : kinds;
    const sinceList = typeof sinces === 'number' ? [sinces] : sinces;
    const index = kindList.findIndex(
      (id) => this.#kinds[id]!.type === type && this.#kinds[id]!.subtype === subtype,
    );
    if (index >= 0) {
      if (since < sinceList[index]!) sinceList[index] = since;
    } else {
      kindList.push(this.#kind(type, subtype, description, masking));
      sinceList.push(since);
    }
    this.#edgeKinds[edge] = kindList.length === 1 ? kindList[0]! : kindList;
    this.#edgeKindSince[edge] = sinceList.length === 1 ? sinceList[0]! : sinceList;
  }

  #addWhole(outDataset: number, input: number, kind: number, since: Ms): void {
    let inputs = this.#wholeInto.get(outDataset);
    if (!inputs) this.#wholeInto.set(outDataset, (inputs = new Map<number, WholeEdge>()));
    const edge = inputs.get(input);
    if (!edge) {
      inputs.set(input, { kinds: [kind], since: [since] });
      let outputs = this.#wholeOutOf.get(input);
      if (!outputs) this.#wholeOutOf.set(input, (outputs = new Set<number>()));
      outputs.add(outDataset);
      return;
    }
    const index = edge.kinds.indexOf(kind);
    if (index < 0) {
      edge.kinds.push(kind);
      edge.since.push(since);
    } else if (since < edge.since[index]!) edge.since[index] = since;
  }

  /**
   * The input columns that influence the whole of a dataset (as of `at`), with their transformations: the
   * columnLineage facet's `dataset` list.
   */
  datasetInputsOf(datasetId: number, at?: Ms): ColumnInput[] {
    const result: ColumnInput[] = [];
    for (const [input, edge] of this.#wholeInto.get(datasetId) ?? []) {
      const transformations = edge.kinds
        .filter((_, index) => at === undefined || edge.since[index]! <= at)
        .map((kind) => this.#kinds[kind]!);
      if (transformations.length > 0) result.push({ ...this.#ref(input), transformations });
    }
    return result;
  }

  /** The datasets a column influences as a whole (as of `at`). */
  datasetsInfluencedBy(ref: FieldRef, at?: Ms): number[] {
    const input = this.#columnId(ref.datasetId, ref.field);
    if (input === undefined) return [];
    return [...(this.#wholeOutOf.get(input) ?? [])].filter(
      (dataset) =>
        at === undefined ||
        this.#wholeInto
          .get(dataset)!
          .get(input)!
          .since.some((t) => t <= at),
    );
  }

  /**
   * The column lineage analyses walk: a column's inputs include the columns that influence its whole dataset,
   * and a column that influences a whole dataset feeds every column of it (a dropped join key breaks them all).
   */
  readonly analysisView = {
    fieldsOf: (datasetId: number): FieldRef[] => this.fieldsOf(datasetId),
    inputsOf: (ref: FieldRef): ColumnInput[] => {
      const inputs = new Map<string, ColumnInput>();
      for (const input of [...this.inputsOf(ref), ...this.datasetInputsOf(ref.datasetId)]) {
        const key = keyOf(input.datasetId, input.field);
        const known = inputs.get(key);
        inputs.set(
          key,
          known ? { ...known, transformations: [...known.transformations, ...input.transformations] } : input,
        );
      }
      return [...inputs.values()];
    },
    outputsOf: (ref: FieldRef): FieldRef[] => {
      const outputs = new Map<string, FieldRef>();
      for (const output of this.outputsOf(ref)) outputs.set(keyOf(output.datasetId, output.field), output);
      for (const dataset of this.datasetsInfluencedBy(ref)) {
        for (const output of this.fieldsOf(dataset))
          outputs.set(keyOf(output.datasetId, output.field), output);
      }
      return [...outputs.values()];
    },
  };

  #ref(column: number): FieldRef {
    return { datasetId: this.#columnDataset[column]!, field: this.#columnField[column]! };
  }

  /** Columns of a dataset that take part in column lineage (as of `at`). */
  fieldsOf(datasetId: number, at?: Ms): FieldRef[] {
    const result: FieldRef[] = [];
    for (let id = this.#firstColumn.get(datasetId) ?? -1; id >= 0; id = this.#nextColumn[id]!) {
      if (at === undefined || this.#columnSince[id]! <= at) result.push(this.#ref(id));
    }
    return result;
  }

  /** The input columns of a column (as of `at`: with the transformations seen by then). */
  inputsOf(ref: FieldRef, at?: Ms): ColumnInput[] {
    const out = this.#columnId(ref.datasetId, ref.field);
    if (out === undefined) return [];
    const result: ColumnInput[] = [];
    for (let edge = this.#firstInto[out]!; edge >= 0; edge = this.#nextInto[edge]!) {
      const kinds = this.#edgeKinds[edge]!;
      const sinces = this.#edgeKindSince[edge]!;
      const kindList = typeof kinds === 'number' ? [kinds] : kinds;
      const sinceList = typeof sinces === 'number' ? [sinces] : sinces;
      const transformations: ColumnTransformation[] = [];
      kindList.forEach((kind, index) => {
        if (at === undefined || sinceList[index]! <= at) transformations.push(this.#kinds[kind]!);
      });
      if (transformations.length > 0) result.push({ ...this.#ref(this.#edgeIn[edge]!), transformations });
    }
    return result;
  }

  /** The columns a column feeds (as of `at`). */
  outputsOf(ref: FieldRef, at?: Ms): FieldRef[] {
    const input = this.#columnId(ref.datasetId, ref.field);
    if (input === undefined) return [];
    const result: FieldRef[] = [];
    for (let edge = this.#firstOutOf[input]!; edge >= 0; edge = this.#nextOutOf[edge]!) {
      if (at === undefined || this.#edgeSince[edge]! <= at) result.push(this.#ref(this.#edgeOut[edge]!));
    }
    return result;
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

interface ColumnEdgeRow {
  output_dataset_id: number;
  output_field: string;
  input_dataset_id: number;
  input_field: string;
  transformation_type: string;
  transformation_subtype: string;
  transformation_description: string | null;
  masking: boolean;
  first_seen: Ms;
}
