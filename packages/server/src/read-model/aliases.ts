import type { Queryable } from '../store/db.js';
import { readAliases, type AliasRow } from '../store/queries/aliases.js';

/**
 * Dataset aliases (migration 160), as the graphs join them: a canonical-id map applied where edges are read,
 * never written into the edges themselves, so that removing an alias gives back exactly the graph there was.
 * Each alias names its canonical dataset directly (the API refuses chains and cycles), so a lookup is one map
 * access, not a union-find.
 *
 * One instance is shared by the lineage graph, the column graph and the routes; {@link replace} swaps all of it
 * at once, so a reader never sees half an update. Memory: two entries per alias.
 */
export class DatasetAliases {
  /** alias -> canonical dataset. */
  #canonical = new Map<number, number>();
  /** canonical dataset -> itself and its aliases, in id order. */
  #members = new Map<number, readonly number[]>();

  /** How many aliases there are: 0 lets the graphs skip the join entirely. */
  get size(): number {
    return this.#canonical.size;
  }

  /** The dataset `id` stands for: its alias target, or itself. */
  canonicalOf(id: number): number {
    return this.#canonical.get(id) ?? id;
  }

  /** The alias target of `id`, if it is an alias. */
  targetOf(id: number): number | undefined {
    return this.#canonical.get(id);
  }

  /** The datasets joined with `id` (its canonical dataset and every alias of that), `[id]` when there are none. */
  membersOf(id: number): readonly number[] {
    return this.#members.get(this.canonicalOf(id)) ?? [id];
  }

  /** The aliases of the canonical dataset `id` (not itself), in id order. */
  aliasesOf(id: number): number[] {
    return (this.#members.get(id) ?? []).filter((member) => member !== id);
  }

  /** Every alias, by alias id. */
  rows(): AliasRow[] {
    return [...this.#canonical].map(([datasetId, targetId]) => ({ datasetId, targetId }));
  }

  /** Replaces every alias with `rows`, at once. */
  replace(rows: Iterable<AliasRow>): void {
    const canonical = new Map<number, number>();
    const members = new Map<number, number[]>();
    for (const { datasetId, targetId } of rows) {
      canonical.set(datasetId, targetId);
      let list = members.get(targetId);
      if (!list) members.set(targetId, (list = [targetId]));
      list.push(datasetId);
    }
    for (const list of members.values()) list.sort((a, b) => a - b);
    this.#canonical = canonical;
    this.#members = members;
  }

  /** Reads every alias from the store (at start, and on a replica after a write that did not come from events). */
  async load(db: Queryable): Promise<void> {
    this.replace(await readAliases(db));
  }
}
