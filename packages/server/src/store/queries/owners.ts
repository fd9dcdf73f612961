/**
 * Who owns a dataset or job. Two sources, read together: the latest `ownership` facet a producer reported, and
 * the list a person declared through the API (owner_declarations). A node's owners are the facet's, in its
 * order, followed by the declared ones the facet does not name: a declaration adds to what producers report and
 * never hides it (the facet is the producer's to change), so that an alert reaches at least everyone either
 * names.
 */
import type { Queryable } from '../db.js';
import { facetsAsOf } from './history.js';
import { datasetFacetsInWindow } from './journey.js';

/** One owner: a name (`team:finance`, `jane@acme.com`) and, when given, its type (`MAINTAINER`). */
export interface Owner {
  readonly name: string;
  readonly type: string | null;
}

/** What the API last declared of a node's owners; a declaration of no owners is a withdrawal. */
export interface OwnerDeclaration {
  readonly owners: Owner[];
  readonly declaredAt: Date;
  readonly declaredBy: string;
}

/** The owners of a node from both sources, apart and together (see the module comment). */
export interface NodeOwners {
  readonly owners: Owner[];
  readonly reported: Owner[];
  readonly declared: OwnerDeclaration | null;
}

type Kind = 'dataset' | 'job';

/** The owners of an ownership facet's value, in its order; none when it is deleted or has no owners list. */
function facetOwners(facet: unknown): Owner[] | undefined {
  const value = facet as { owners?: unknown; _deleted?: unknown } | null;
  if (!value || value._deleted === true || !Array.isArray(value.owners)) return undefined;
  const owners: Owner[] = [];
  for (const owner of value.owners as unknown[]) {
    const { name, type } = (owner ?? {}) as { name?: unknown; type?: unknown };
    if (typeof name === 'string') owners.push({ name, type: typeof type === 'string' ? type : null });
  }
  return owners;
}

/** The owners in the latest `ownership` facet of each node: id -> owners; nodes without one are absent. */
async function reportedOwners(
  db: Queryable,
  kind: Kind,
  ids: readonly number[],
): Promise<Map<number, Owner[]>> {
  const [table, column] = kind === 'dataset' ? ['dataset_facets', 'dataset_id'] : ['job_facets', 'job_id'];
  const rows = await db.query<{ id: number; facet: unknown }>(
    `SELECT DISTINCT ON (${column}) ${column} AS id, facet FROM ${table}
     WHERE ${column} = ANY($1::int[]) AND name = 'ownership'
     ORDER BY ${column}, event_time DESC, hash DESC`,
    [ids],
  );
  const result = new Map<number, Owner[]>();
  for (const { id, facet } of rows) {
    const owners = facetOwners(facet);
    if (owners) result.set(id, owners);
  }
  return result;
}

/** The latest declaration of each node's owners (a withdrawal included): id -> declaration. */
async function declarations(
  db: Queryable,
  kind: Kind,
  ids: readonly number[],
): Promise<Map<number, OwnerDeclaration>> {
  const rows = await db.query<{ id: number; owners: Owner[]; declaredAt: Date; declaredBy: string }>(
    `SELECT DISTINCT ON (node_id) node_id AS id, owners, declared_at AS "declaredAt", declared_by AS "declaredBy"
     FROM owner_declarations WHERE kind = $1 AND node_id = ANY($2::int[])
     ORDER BY node_id, declared_at DESC, id DESC`,
    [kind, ids],
  );
  return new Map(rows.map(({ id, ...declaration }) => [id, declaration]));
}

/** The facet's owners followed by the declared ones it does not name. */
function merged(reported: readonly Owner[], declared: readonly Owner[]): Owner[] {
  const named = new Set(reported.map((owner) => owner.name));
  return [...reported, ...declared.filter((owner) => !named.has(owner.name))];
}

/** Each node's owners from both sources, apart and together; nodes with neither are absent. */
export async function nodeOwners(
  db: Queryable,
  kind: Kind,
  ids: readonly number[],
): Promise<Map<number, NodeOwners>> {
  if (ids.length === 0) return new Map();
  const [reported, declared] = await Promise.all([
    reportedOwners(db, kind, ids),
    declarations(db, kind, ids),
  ]);
  const result = new Map<number, NodeOwners>();
  for (const id of ids) {
    const fromFacet = reported.get(id);
    const declaration = declared.get(id);
    if (fromFacet === undefined && declaration === undefined) continue;
    result.set(id, {
      owners: merged(fromFacet ?? [], declaration?.owners ?? []),
      reported: fromFacet ?? [],
      declared: declaration ?? null,
    });
  }
  return result;
}

/** Each node's owners (see the module comment): id -> owners; nodes with none from either source are absent. */
export async function latestOwners(
  db: Queryable,
  kind: Kind,
  ids: readonly number[],
): Promise<Map<number, Owner[]>> {
  const result = new Map<number, Owner[]>();
  for (const [id, { owners }] of await nodeOwners(db, kind, ids))
    if (owners.length > 0) result.set(id, owners);
  return result;
}

/** Records a declaration of a node's owners (an empty list withdraws it). */
export async function declareOwners(
  tx: Queryable,
  kind: Kind,
  id: number,
  owners: readonly Owner[],
  at: Date,
  by: string,
): Promise<void> {
  await tx.query(
    `INSERT INTO owner_declarations (kind, node_id, owners, declared_at, declared_by) VALUES ($1, $2, $3::jsonb, $4, $5)`,
    [kind, id, JSON.stringify(owners), at, by],
  );
}

/** Who owned a node from `from` until `to` (or the next period's `from`). */
export interface OwnerPeriod {
  readonly from: Date;
  readonly owners: Owner[];
}

/**
 * Each dataset's owners over [`from`, `to`]: the owners in force at `from` (the ownership facet the events had
 * given by then, and the declaration in force), then a period each time either changed within the window.
 * Consecutive periods always differ.
 */
export async function ownerPeriods(
  db: Queryable,
  ids: readonly number[],
  from: Date,
  to: Date,
): Promise<Map<number, OwnerPeriod[]>> {
  const result = new Map<number, OwnerPeriod[]>();
  if (ids.length === 0) return result;
  const [atStart, facetChanges, declared] = await Promise.all([
    facetsAsOf<number>(db, 'dataset', ids, from, ['ownership']),
    datasetFacetsInWindow(db, ids, ['ownership'], new Date(from.getTime() + 1), to),
    db.query<{ id: number; owners: Owner[]; declaredAt: Date }>(
      `SELECT node_id AS id, owners, declared_at AS "declaredAt" FROM owner_declarations
       WHERE kind = 'dataset' AND node_id = ANY($1::int[]) AND declared_at <= $2
       ORDER BY node_id, declared_at, id`,
      [ids, to.toISOString()],
    ),
  ]);
  for (const id of ids) {
    let reported = facetOwners(atStart.get(id)?.ownership) ?? [];
    const declarations = declared.filter((row) => row.id === id);
    let declaredNow = declarations.filter((row) => row.declaredAt <= from).at(-1)?.owners ?? [];
    const changes = [
      ...facetChanges
        .filter((row) => row.datasetId === id)
        .map((row) => ({ at: row.at, reported: facetOwners(row.facet) ?? [] })),
      ...declarations
        .filter((row) => row.declaredAt > from)
        .map((row) => ({ at: row.declaredAt, declared: row.owners })),
    ].sort((a, b) => a.at.getTime() - b.at.getTime());
    const periods: OwnerPeriod[] = [{ from, owners: merged(reported, declaredNow) }];
    for (const change of changes) {
      if ('reported' in change) reported = change.reported;
      else declaredNow = change.declared;
      const owners = merged(reported, declaredNow);
      const last = periods.at(-1)!;
      if (JSON.stringify(last.owners) === JSON.stringify(owners)) continue;
      if (last.from.getTime() === change.at.getTime()) periods.pop();
      periods.push({ from: change.at, owners });
    }
    result.set(id, periods);
  }
  return result;
}
