import { DATASET_FIELD } from '../model/identity.js';
import type { ReadDelta } from '../store/read-delta.js';
import type { Queryable } from '../store/db.js';
import type { Ms } from '../store/model-state.js';
import { countColumnEdges, readColumnEdges } from '../store/queries/graph.js';
import { float64s, int32s } from './growable.js';
import { HeadwaterError } from '../core/errors.js';
import { Closed, Nullable, Type, type Static } from '../core/json-schema.js';
import { DatasetAliases } from './aliases.js';

/** A column: dataset id and field name. */
export interface FieldRef {
  readonly datasetId: number;
  readonly field: string;
}

/**
 * One way a column feeds another: a transformation of the column-lineage facet (1-2-0), as the API shows it
 * (column lineage, column paths).
 */
export const ColumnTransformationSchema = Closed({
  type: Type.String(),
  subtype: Type.String(),
  description: Nullable(Type.String()),
  masking: Type.Boolean(),
});

/** One way a column feeds another. */
export type ColumnTransformation = Readonly<Static<typeof ColumnTransformationSchema>>;

/** An input column of an output column, with how it is transformed. */
export interface ColumnInput extends FieldRef {
  readonly transformations: ColumnTransformation[];
}

const keyOf = (datasetId: number, field: string) => `${datasetId}\u0000${field}`;

/**
 * The one order of the columns a graph answers (a column's inputs, the columns it feeds): by dataset id, then
 * field name in UTF-16 code units. A graph loaded from the store takes the edges in the table's key order (its
 * text under the database's collation) and one built from commits takes them as they arrive, so neither order
 * can be the answer's: the same column would answer its inputs one way while running and another after a
 * restart.
 */
export function compareColumns(a: FieldRef, b: FieldRef): number {
  if (a.datasetId !== b.datasetId) return a.datasetId - b.datasetId;
  return a.field < b.field ? -1 : a.field > b.field ? 1 : 0;
}

/** The one order of an input's transformations (see {@link compareColumns}): by type, then subtype. */
export function compareTransformations(a: ColumnTransformation, b: ColumnTransformation): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  return a.subtype < b.subtype ? -1 : a.subtype > b.subtype ? 1 : 0;
}

/** Puts inputs, and each input's transformations, in the graph's order; the lists are the caller's own. */
function ordered(inputs: ColumnInput[]): ColumnInput[] {
  for (const input of inputs) {
    if (input.transformations.length > 1) input.transformations.sort(compareTransformations);
  }
  return inputs.length > 1 ? inputs.sort(compareColumns) : inputs;
}

const byNumber = (a: number, b: number) => a - b;

/** Puts columns in the graph's order; the list is the caller's own. */
function orderedColumns(columns: FieldRef[]): FieldRef[] {
  return columns.length > 1 ? columns.sort(compareColumns) : columns;
}

/** A dataset-level input edge: the transformation kinds and when each was first seen. */
interface WholeEdge {
  readonly kinds: number[];
  readonly since: Ms[];
}

/** The transformations of an edge that has more than one, with when each was first seen. */
interface KindList {
  readonly kinds: number[];
  readonly since: Ms[];
}

/** Thrown inside a load that a later load or an adoption has overtaken, to stop its read. */
const SUPERSEDED = new Error('superseded by a later load of the column graph');

/** What a {@link ColumnGraph} holds, in one object so that a graph loaded aside is swapped in at once. */
class Storage {
  /** Dataset -> field -> column id. */
  readonly columnIds = new Map<number, Map<string, number>>();
  /** Field names, interned (a warehouse has few distinct names, id, created_at..., on many datasets): id -> name. */
  readonly names: string[] = [];
  readonly nameIds = new Map<string, number>();
  /** Per column id: its dataset, its field's name id, when it was first seen. */
  readonly columnDataset = int32s();
  readonly columnName = int32s();
  readonly columnSince = float64s();
  /**
   * The columns of a dataset, as a list through the column arrays: its first and last column, and per column
   * the next column of its dataset (-1 at the end).
   */
  readonly firstColumn = new Map<number, number>();
  readonly lastColumn = new Map<number, number>();
  readonly nextColumn = int32s();
  /** Transformation kinds, interned: equal kinds are one shared (frozen) object. */
  readonly kinds: ColumnTransformation[] = [];
  readonly kindIds = new Map<string, number>();
  /**
   * Per edge id: its output and input column and when it was first seen; its kind (a kind id, or -(i + 1) for
   * `kindLists[i]` when it has several) and when that kind was first seen.
   */
  readonly edgeOut = int32s();
  readonly edgeIn = int32s();
  readonly edgeSince = float64s();
  readonly edgeKind = int32s();
  readonly edgeKindSince = float64s();
  readonly kindLists: KindList[] = [];
  /**
   * The edges into a column (its inputs) and out of it (the outputs it feeds), in arrival order (answers are put
   * in {@link compareColumns}'s order), as lists: per
   * column its first and last edge (-1: none), per edge the next edge into the same column / out of the same
   * column (-1 at the end).
   */
  readonly firstInto = int32s();
  readonly lastInto = int32s();
  readonly firstOutOf = int32s();
  readonly lastOutOf = int32s();
  readonly nextInto = int32s();
  readonly nextOutOf = int32s();
  /** Dataset -> input column -> its dataset-level edge (see DATASET_FIELD); input column -> those datasets. */
  readonly wholeInto = new Map<number, Map<number, WholeEdge>>();
  readonly wholeOutOf = new Map<number, Set<number>>();

  /** Makes room for `edges` edges and as many columns, so that a load does not grow the arrays again and again. */
  reserve(edges: number): void {
    for (const array of [
      this.edgeOut,
      this.edgeIn,
      this.edgeSince,
      this.edgeKind,
      this.edgeKindSince,
      this.nextInto,
      this.nextOutOf,
      this.columnDataset,
      this.columnName,
      this.columnSince,
      this.nextColumn,
      this.firstInto,
      this.lastInto,
      this.firstOutOf,
      this.lastOutOf,
    ])
      array.reserve(edges);
  }
}

/**
 * Column-level lineage kept in memory, in both directions: output column -> its input columns with their
 * transformations, and input column -> the output columns it feeds. Loaded from column_lineage at start and
 * updated after every commit, like the job-level graph. Column lineage is never retired, so the graph as of an
 * event time `at` is the edges first seen by then.
 *
 * Memory follows the column edges of the graph (never the number of events): columns, names and transformation
 * kinds are interned once, and columns, edges and the lists of edges per column are parallel typed arrays, about
 * 36 bytes an edge and 36 a column plus the per-dataset map of its columns' names, because a warehouse's column
 * lineage runs to millions of edges: a Map of objects per edge cost 1.6 KB each and seconds to load, an array of
 * edge ids per column 200 bytes a column, and JavaScript arrays of numbers twice these bytes, with the backing
 * stores left behind by each growth as garbage at start.
 *
 * Dataset aliases are joined where edges are read, as in the lineage graph: the columns of a dataset are those
 * of every dataset joined with it, by name, and every column answered belongs to the canonical dataset.
 */
export class ColumnGraph {
  #s = new Storage();
  readonly #aliases: DatasetAliases;
  /**
   * Whether the graph holds all that is committed: false before the first load of a graph made to wait for one,
   * while a load is under way, and after one failed.
   */
  #complete: boolean;
  /** Commits taken in while not complete: as many as commit during a load (seconds), applied once it is in. */
  #held: ReadDelta[] = [];
  /** Counts loads and adoptions, so that a load overtaken by a later one stops reading (see {@link load}). */
  #generation = 0;
  /** The last output column and kind looked up (in the storage they belong to): the next edge's, mostly. */
  #lastOutput = { storage: undefined as Storage | undefined, datasetId: -1, field: '', id: -1 };
  #lastKind = {
    storage: undefined as Storage | undefined,
    type: '',
    subtype: '',
    description: null as string | null,
    masking: false,
    id: -1,
  };

  /**
   * @param options.loaded false for a graph that answers nothing until its first {@link load} is in (the
   *   server's, loaded after start); a new graph is otherwise empty and complete, for commits to build on.
   * @param options.aliases the aliases to join (shared with the lineage graph); none by default.
   */
  constructor(options: { loaded?: boolean; aliases?: DatasetAliases } = {}) {
    this.#complete = options.loaded ?? true;
    this.#aliases = options.aliases ?? new DatasetAliases();
  }

  /** Whether the graph answers: it holds all that is committed (see {@link load}). */
  get complete(): boolean {
    return this.#complete;
  }

  /**
   * Takes over everything `other` holds, at once (synchronously, so readers never see a mix): how a replica
   * that fell too far behind the commit feed swaps in a graph it loaded aside. `other` is not used after.
   */
  adopt(other: ColumnGraph): void {
    // A load still reading (the server's first, after start) is superseded: it must not add to what is adopted.
    this.#generation++;
    this.#s = other.#s;
    // What this graph held back is in the other one, which was loaded after.
    this.#complete = other.#complete;
    this.#held = [];
  }

  /**
   * Replaces what the graph holds with every column edge in the store (one load at a time). Commits taken in
   * meanwhile are held and applied once it is in (one the store already had is applied again, which changes
   * nothing); until it is in, the graph answers nothing, so a question is never answered from half a graph. A
   * load that fails leaves the graph refusing to answer, its commits still held, until a load succeeds.
   */
  async load(db: Queryable): Promise<void> {
    const generation = ++this.#generation;
    this.#complete = false;
    this.#s = new Storage();
    try {
      await this.#read(db, () => generation === this.#generation);
    } catch (error) {
      // Another load, or a graph adopted, took its place: that one is what the graph holds.
      if (error === SUPERSEDED) return;
      throw error;
    }
    this.#complete = true;
    const held = this.#held;
    this.#held = [];
    for (const delta of held) this.apply(delta);
  }

  async #read(db: Queryable, current: () => boolean): Promise<void> {
    const edges = await countColumnEdges(db);
    if (!current()) throw SUPERSEDED;
    this.#s.reserve(edges);
    await readColumnEdges(db, (rows) => {
      if (!current()) throw SUPERSEDED;
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
    });
  }

  /** Takes in a committed changeset. */
  apply(delta: ReadDelta): void {
    if (!this.#complete) {
      if (delta.columnEdges.length > 0) this.#held.push(delta);
      return;
    }
    for (const edge of delta.columnEdges) this.#add(...edge);
  }

  #columnId(datasetId: number, field: string): number | undefined {
    return this.#s.columnIds.get(datasetId)?.get(field);
  }

  /** {@link #column} for an output column. */
  #outputColumn(datasetId: number, field: string, since: Ms): number {
    const s = this.#s;
    // Edges arrive grouped by output column (the store's key order): the output just looked up comes again.
    const last = this.#lastOutput;
    if (last.datasetId === datasetId && last.field === field && last.storage === s) {
      if (since < s.columnSince.values[last.id]!) s.columnSince.values[last.id] = since;
      return last.id;
    }
    const id = this.#column(datasetId, field, since);
    this.#lastOutput = { storage: s, datasetId, field, id };
    return id;
  }

  #column(datasetId: number, field: string, since: Ms): number {
    const s = this.#s;
    let fields = s.columnIds.get(datasetId);
    if (!fields) s.columnIds.set(datasetId, (fields = new Map<string, number>()));
    let id = fields.get(field);
    if (id === undefined) {
      let name = s.nameIds.get(field);
      if (name === undefined) s.nameIds.set(field, (name = s.names.push(field) - 1));
      id = s.columnDataset.push(datasetId);
      fields.set(s.names[name]!, id);
      s.columnName.push(name);
      s.columnSince.push(since);
      s.firstInto.push(-1);
      s.lastInto.push(-1);
      s.firstOutOf.push(-1);
      s.lastOutOf.push(-1);
      s.nextColumn.push(-1);
      const last = s.lastColumn.get(datasetId);
      if (last === undefined) s.firstColumn.set(datasetId, id);
      else s.nextColumn.values[last] = id;
      s.lastColumn.set(datasetId, id);
    } else if (since < s.columnSince.values[id]!) s.columnSince.values[id] = since;
    return id;
  }

  #kind(type: string, subtype: string, description: string | null, masking: boolean): number {
    const s = this.#s;
    // A graph has a handful of kinds, and the edges of a column mostly share one.
    const last = this.#lastKind;
    if (
      last.storage === s &&
      last.type === type &&
      last.subtype === subtype &&
      last.description === description &&
      last.masking === masking
    )
      return last.id;
    const id = this.#lookUpKind(type, subtype, description, masking);
    this.#lastKind = { storage: s, type, subtype, description, masking, id };
    return id;
  }

  #lookUpKind(type: string, subtype: string, description: string | null, masking: boolean): number {
    const s = this.#s;
    const key = `${type}\u0000${subtype}\u0000${description ?? '\u0001'}\u0000${masking}`;
    let id = s.kindIds.get(key);
    if (id === undefined) {
      id = s.kinds.push(Object.freeze({ type, subtype, description, masking })) - 1;
      s.kindIds.set(key, id);
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
    const s = this.#s;
    const out = this.#outputColumn(outDataset, outField, since);
    const input = this.#column(inDataset, inField, since);
    // An output column has a handful of inputs: a scan beats a map keyed by edge.
    let edge = s.firstInto.values[out]!;
    while (edge >= 0 && s.edgeIn.values[edge] !== input) edge = s.nextInto.values[edge]!;
    if (edge < 0) {
      edge = s.edgeOut.push(out);
      s.edgeIn.push(input);
      s.edgeSince.push(since);
      s.edgeKind.push(this.#kind(type, subtype, description, masking));
      s.edgeKindSince.push(since);
      s.nextInto.push(-1);
      s.nextOutOf.push(-1);
      const lastInto = s.lastInto.values[out]!;
      if (lastInto < 0) s.firstInto.values[out] = edge;
      else s.nextInto.values[lastInto] = edge;
      s.lastInto.values[out] = edge;
      const lastOutOf = s.lastOutOf.values[input]!;
      if (lastOutOf < 0) s.firstOutOf.values[input] = edge;
      else s.nextOutOf.values[lastOutOf] = edge;
      s.lastOutOf.values[input] = edge;
      return;
    }
    if (since < s.edgeSince.values[edge]!) s.edgeSince.values[edge] = since;
    // A transformation is one per type and subtype: the first seen keeps its description.
    const { kinds, since: sinces } = this.#kindsOf(edge);
    const index = kinds.findIndex((id) => s.kinds[id]!.type === type && s.kinds[id]!.subtype === subtype);
    if (index >= 0) {
      if (since >= sinces[index]!) return;
      if (kinds.length === 1) s.edgeKindSince.values[edge] = since;
      else sinces[index] = since;
      return;
    }
    const kind = this.#kind(type, subtype, description, masking);
    const list = s.edgeKind.values[edge]!;
    if (list >= 0) {
      s.edgeKind.values[edge] =
        -(s.kindLists.push({ kinds: [...kinds, kind], since: [...sinces, since] }) - 1) - 1;
    } else {
      s.kindLists[-list - 1]!.kinds.push(kind);
      s.kindLists[-list - 1]!.since.push(since);
    }
  }

  /** The kinds of an edge with when each was first seen (the lists themselves when it has several). */
  #kindsOf(edge: number): KindList {
    const s = this.#s;
    const kind = s.edgeKind.values[edge]!;
    return kind >= 0 ? { kinds: [kind], since: [s.edgeKindSince.values[edge]!] } : s.kindLists[-kind - 1]!;
  }

  #addWhole(outDataset: number, input: number, kind: number, since: Ms): void {
    const s = this.#s;
    let inputs = s.wholeInto.get(outDataset);
    if (!inputs) s.wholeInto.set(outDataset, (inputs = new Map<number, WholeEdge>()));
    const edge = inputs.get(input);
    if (!edge) {
      inputs.set(input, { kinds: [kind], since: [since] });
      let outputs = s.wholeOutOf.get(input);
      if (!outputs) s.wholeOutOf.set(input, (outputs = new Set<number>()));
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
    this.#loaded();
    if (this.#aliases.size === 0) {
      // Without aliases each input is one edge: no merge on the analyses' hot path.
      const result: ColumnInput[] = [];
      for (const [input, edge] of this.#s.wholeInto.get(datasetId) ?? []) {
        const transformations: ColumnTransformation[] = [];
        edge.kinds.forEach((kind, index) => {
          if (at === undefined || edge.since[index]! <= at) transformations.push(this.#s.kinds[kind]!);
        });
        if (transformations.length > 0) result.push({ ...this.#ref(input), transformations });
      }
      return ordered(result);
    }
    const merged = new InputMerge(this.#s);
    for (const member of this.#aliases.membersOf(datasetId)) {
      for (const [input, edge] of this.#s.wholeInto.get(member) ?? []) {
        edge.kinds.forEach((kind, index) => {
          if (at === undefined || edge.since[index]! <= at)
            merged.add(this.#ref(input), kind, edge.since[index]!);
        });
      }
    }
    return ordered(merged.inputs());
  }

  /** The datasets a column influences as a whole (as of `at`). */
  datasetsInfluencedBy(ref: FieldRef, at?: Ms): number[] {
    this.#loaded();
    if (this.#aliases.size === 0) {
      const input = this.#columnId(ref.datasetId, ref.field);
      const datasets = input === undefined ? undefined : this.#s.wholeOutOf.get(input);
      if (!datasets) return [];
      if (at === undefined) return [...datasets].sort(byNumber);
      return [...datasets]
        .filter((dataset) =>
          this.#s.wholeInto
            .get(dataset)!
            .get(input!)!
            .since.some((t) => t <= at),
        )
        .sort(byNumber);
    }
    const result = new Set<number>();
    for (const input of this.#columnsNamed(ref)) {
      for (const dataset of this.#s.wholeOutOf.get(input) ?? []) {
        if (
          at === undefined ||
          this.#s.wholeInto
            .get(dataset)!
            .get(input)!
            .since.some((t) => t <= at)
        )
          result.add(this.#aliases.canonicalOf(dataset));
      }
    }
    return [...result].sort(byNumber);
  }

  /**
   * The inputs of a column with the columns that influence its whole dataset (as of `at`): one entry per input
   * column, its transformations one per type and subtype (the column's own first, then the dataset's). A
   * dropped join key breaks every column of the dataset, so the analyses and the column lineage API walk these.
   */
  lineageInputsOf(ref: FieldRef, at?: Ms): ColumnInput[] {
    const inputs = new Map<string, ColumnInput>();
    for (const input of [...this.inputsOf(ref, at), ...this.datasetInputsOf(ref.datasetId, at)]) {
      const key = keyOf(input.datasetId, input.field);
      const known = inputs.get(key);
      if (!known) {
        inputs.set(key, input);
        continue;
      }
      const added = input.transformations.filter(
        (t) => !known.transformations.some((k) => k.type === t.type && k.subtype === t.subtype),
      );
      if (added.length > 0)
        inputs.set(key, { ...known, transformations: [...known.transformations, ...added] });
    }
    return [...inputs.values()];
  }

  /** The columns a column feeds (as of `at`), every column of a dataset it influences as a whole included. */
  lineageOutputsOf(ref: FieldRef, at?: Ms): FieldRef[] {
    const outputs = new Map<string, FieldRef>();
    for (const output of this.outputsOf(ref, at)) outputs.set(keyOf(output.datasetId, output.field), output);
    for (const dataset of this.datasetsInfluencedBy(ref, at)) {
      for (const output of this.fieldsOf(dataset, at))
        outputs.set(keyOf(output.datasetId, output.field), output);
    }
    return orderedColumns([...outputs.values()]);
  }

  /** The column lineage analyses walk: {@link lineageInputsOf} and {@link lineageOutputsOf} of the present. */
  readonly analysisView = {
    fieldsOf: (datasetId: number): FieldRef[] => this.fieldsOf(datasetId),
    inputsOf: (ref: FieldRef): ColumnInput[] => this.lineageInputsOf(ref),
    outputsOf: (ref: FieldRef): FieldRef[] => this.lineageOutputsOf(ref),
  };

  /** Refuses to answer from a graph still loading (a route that needs it waits for {@link loading} first). */
  #loaded(): void {
    if (!this.#complete) {
      throw new HeadwaterError(
        'STORE_UNAVAILABLE',
        'Column lineage is still loading after start; try again.',
        {
          retryAfterSeconds: 1,
        },
      );
    }
  }

  /** A column as answered: of its canonical dataset. */
  #ref(column: number): FieldRef {
    const s = this.#s;
    return {
      datasetId: this.#aliases.canonicalOf(s.columnDataset.values[column]!),
      field: s.names[s.columnName.values[column]!]!,
    };
  }

  /** The column ids of `ref`'s field in its dataset and in every dataset joined with it. */
  #columnsNamed(ref: FieldRef): number[] {
    const ids: number[] = [];
    for (const member of this.#aliases.membersOf(ref.datasetId)) {
      const id = this.#columnId(member, ref.field);
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  /** Columns of a dataset (and of the datasets joined with it) that take part in column lineage (as of `at`). */
  fieldsOf(datasetId: number, at?: Ms): FieldRef[] {
    this.#loaded();
    const s = this.#s;
    const members = this.#aliases.size === 0 ? [datasetId] : this.#aliases.membersOf(datasetId);
    const result: FieldRef[] = [];
    // Only datasets joined by an alias can name a field twice.
    const seen = members.length > 1 ? new Set<string>() : undefined;
    for (const member of members) {
      for (let id = s.firstColumn.get(member) ?? -1; id >= 0; id = s.nextColumn.values[id]!) {
        if (at !== undefined && s.columnSince.values[id]! > at) continue;
        const ref = this.#ref(id);
        if (seen) {
          if (seen.has(ref.field)) continue;
          seen.add(ref.field);
        }
        result.push(ref);
      }
    }
    return result;
  }

  /** The input columns of a column (as of `at`: with the transformations seen by then). */
  inputsOf(ref: FieldRef, at?: Ms): ColumnInput[] {
    this.#loaded();
    const s = this.#s;
    if (this.#aliases.size === 0) {
      // Without aliases each input is one edge: no merge (and none of its allocations) on the hot path.
      const out = this.#columnId(ref.datasetId, ref.field);
      if (out === undefined) return [];
      const result: ColumnInput[] = [];
      for (let edge = s.firstInto.values[out]!; edge >= 0; edge = s.nextInto.values[edge]!) {
        const { kinds, since } = this.#kindsOf(edge);
        const transformations: ColumnTransformation[] = [];
        kinds.forEach((kind, index) => {
          if (at === undefined || since[index]! <= at) transformations.push(s.kinds[kind]!);
        });
        if (transformations.length > 0)
          result.push({ ...this.#ref(s.edgeIn.values[edge]!), transformations });
      }
      return ordered(result);
    }
    const merged = new InputMerge(s);
    for (const out of this.#columnsNamed(ref)) {
      for (let edge = s.firstInto.values[out]!; edge >= 0; edge = s.nextInto.values[edge]!) {
        const { kinds, since } = this.#kindsOf(edge);
        const input = this.#ref(s.edgeIn.values[edge]!);
        kinds.forEach((kind, index) => {
          if (at === undefined || since[index]! <= at) merged.add(input, kind, since[index]!);
        });
      }
    }
    return ordered(merged.inputs());
  }

  /** The columns a column feeds (as of `at`). */
  outputsOf(ref: FieldRef, at?: Ms): FieldRef[] {
    this.#loaded();
    const s = this.#s;
    if (this.#aliases.size === 0) {
      // Without aliases a column is one id and an edge is unique per pair of columns: no merge needed.
      const input = this.#columnId(ref.datasetId, ref.field);
      if (input === undefined) return [];
      const outputs: FieldRef[] = [];
      for (let edge = s.firstOutOf.values[input]!; edge >= 0; edge = s.nextOutOf.values[edge]!) {
        if (at === undefined || s.edgeSince.values[edge]! <= at)
          outputs.push(this.#ref(s.edgeOut.values[edge]!));
      }
      return orderedColumns(outputs);
    }
    const result = new Map<string, FieldRef>();
    for (const input of this.#columnsNamed(ref)) {
      for (let edge = s.firstOutOf.values[input]!; edge >= 0; edge = s.nextOutOf.values[edge]!) {
        if (at !== undefined && s.edgeSince.values[edge]! > at) continue;
        const output = this.#ref(s.edgeOut.values[edge]!);
        result.set(keyOf(output.datasetId, output.field), output);
      }
    }
    return orderedColumns([...result.values()]);
  }

  /**
   * Columns reachable from `starts` within `depth` hops upstream (and downstream when asked), each with its
   * distance, along column edges and the edges of columns that influence a whole dataset (see
   * {@link lineageInputsOf}). A visited set keeps cycles finite.
   */
  traverse(
    starts: readonly FieldRef[],
    depth: number,
    downstream: boolean,
    at?: Ms,
  ): Map<string, FieldRef & { distance: number }> {
    const reached = new Map<string, FieldRef & { distance: number }>();
    const walk = (up: boolean) => {
      let frontier = starts.map((ref) => ({
        datasetId: this.#aliases.canonicalOf(ref.datasetId),
        field: ref.field,
        distance: 0,
      }));
      for (const ref of frontier) reached.set(keyOf(ref.datasetId, ref.field), ref);
      const seen = new Set(frontier.map((ref) => keyOf(ref.datasetId, ref.field)));
      for (let distance = 1; distance <= depth && frontier.length > 0; distance++) {
        const next: (FieldRef & { distance: number })[] = [];
        for (const ref of frontier) {
          for (const neighbour of up ? this.lineageInputsOf(ref, at) : this.lineageOutputsOf(ref, at)) {
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

/**
 * The inputs of one column gathered over the datasets joined by aliases: an input reached from several of them
 * is one input, and its transformations one per type and subtype (the first seen keeps its description), as
 * they would be had the events used one name.
 */
class InputMerge {
  readonly #s: Storage;
  readonly #inputs = new Map<string, { ref: FieldRef; kinds: Map<string, { kind: number; since: Ms }> }>();

  constructor(storage: Storage) {
    this.#s = storage;
  }

  add(ref: FieldRef, kind: number, since: Ms): void {
    const key = keyOf(ref.datasetId, ref.field);
    let input = this.#inputs.get(key);
    if (!input) this.#inputs.set(key, (input = { ref, kinds: new Map() }));
    const transformation = this.#s.kinds[kind]!;
    const kindKey = `${transformation.type}\u0000${transformation.subtype}`;
    const known = input.kinds.get(kindKey);
    if (!known || since < known.since) input.kinds.set(kindKey, { kind, since });
  }

  inputs(): ColumnInput[] {
    return [...this.#inputs.values()].map(({ ref, kinds }) => ({
      ...ref,
      transformations: [...kinds.values()].map(({ kind }) => this.#s.kinds[kind]!),
    }));
  }
}
