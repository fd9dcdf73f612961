import type { Queryable } from '../db.js';

/** What to search for. */
export interface SearchQuery {
  /** Matched case-insensitively as a substring of dataset and job names. */
  readonly q: string;
  /** Only datasets or only jobs; both when undefined. */
  readonly filter?: 'DATASET' | 'JOB' | undefined;
  /** NAME: by name A-Z; UPDATED_AT: most recently updated first. */
  readonly sort: 'NAME' | 'UPDATED_AT';
  /** Only this namespace. */
  readonly namespace?: string | undefined;
  /** Only these namespaces (what the caller may read); all when undefined. */
  readonly namespaces?: readonly string[] | undefined;
  /**
   * Also match what Marquez's advanced (OpenSearch) search matches beyond names: the namespace, a dataset's
   * field names (of its current version, nested ones too) and a job's SQL (its latest `sql` facet's query).
   * @default false (names only, as Marquez's /api/v1/search)
   */
  readonly content?: boolean | undefined;
  /** Only entities updated before / after these instants. */
  readonly before?: Date | undefined;
  readonly after?: Date | undefined;
  readonly limit: number;
  readonly offset: number;
}

/** A matching dataset or job. */
export interface SearchRecord {
  readonly type: 'DATASET' | 'JOB';
  readonly name: string;
  readonly namespace: string;
  readonly updatedAt: Date;
}

/** `q` as an ILIKE pattern matching it anywhere, with its own wildcards taken literally. */
function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

function matching(query: SearchQuery, params: unknown[]): string {
  const param = (value: unknown) => `$${params.push(value)}`;
  const pattern = param(containsPattern(query.q));
  const namespace = query.namespace === undefined ? undefined : param(query.namespace);
  const namespaces = query.namespaces === undefined ? undefined : param(query.namespaces);
  const before = query.before === undefined ? undefined : param(query.before.toISOString());
  const after = query.after === undefined ? undefined : param(query.after.toISOString());
  // One branch per table and matched text, so that each match can use its own trigram index (an OR of them
  // would read every row).
  const branch = (
    type: 'DATASET' | 'JOB',
    table: string,
    match = `e.name ILIKE ${pattern}`,
    source = `${table} e`,
  ) => {
    const conditions = ['NOT e.is_hidden', match];
    if (namespace) conditions.push(`n.name = ${namespace}`);
    if (namespaces) conditions.push(`n.name = ANY(${namespaces}::text[])`);
    if (before) conditions.push(`e.updated_at < ${before}::timestamptz`);
    if (after) conditions.push(`e.updated_at > ${after}::timestamptz`);
    return `SELECT '${type}' AS type, e.name, n.name AS namespace, e.updated_at AS "updatedAt"
            FROM ${source} JOIN namespaces n ON n.id = e.namespace_id
            WHERE ${conditions.join(' AND ')}`;
  };
  const notAlias = 'AND NOT EXISTS (SELECT 1 FROM dataset_aliases x WHERE x.dataset_id = e.id)';
  // Namespaces are few: matched by a scan of their table, then each one's entities through (namespace_id, name).
  const inNamespace = `n.name ILIKE ${pattern}`;
  const datasetContent = query.content
    ? [
        branch('DATASET', 'datasets', inNamespace),
        // The current version's field names: the JSON text is what the index holds, each name is then checked.
        branch(
          'DATASET',
          'datasets',
          `jsonb_path_query_array(v.fields, '$.**.name')::text ILIKE ${pattern} AND EXISTS (
             SELECT 1 FROM jsonb_path_query(v.fields, '$.**.name') f WHERE f #>> '{}' ILIKE ${pattern})`,
          'dataset_versions v JOIN datasets e ON e.id = v.dataset_id AND e.current_version_id = v.id',
        ),
      ].map((sql) => `${sql} ${notAlias}`)
    : [];
  const jobContent = query.content
    ? [
        branch('JOB', 'jobs', inNamespace),
        // The job's latest sql facet (per name, the newest eventTime; the hash breaks ties, as latestFacets).
        branch(
          'JOB',
          'jobs',
          `f.name = 'sql' AND f.facet ->> 'query' ILIKE ${pattern} AND NOT EXISTS (
             SELECT 1 FROM job_facets g WHERE g.job_id = f.job_id AND g.name = 'sql'
             AND (g.event_time, g.hash) > (f.event_time, f.hash))`,
          'job_facets f JOIN jobs e ON e.id = f.job_id',
        ),
      ]
    : [];
  // A dataset declared an alias of another is found as that other one, by either name (migration 160). The
  // anti-join and the join on the small alias table leave the name match on the trigram index.
  const aliases = () => {
    const conditions = ['NOT e.is_hidden', `ad.name ILIKE ${pattern}`];
    if (namespace) conditions.push(`n.name = ${namespace}`);
    // The alias's name matches only for a caller who may read the alias's namespace: else the match would tell
    // them that a dataset of that name exists.
    if (namespaces)
      conditions.push(`n.name = ANY(${namespaces}::text[]) AND an.name = ANY(${namespaces}::text[])`);
    if (before) conditions.push(`e.updated_at < ${before}::timestamptz`);
    if (after) conditions.push(`e.updated_at > ${after}::timestamptz`);
    return `SELECT 'DATASET' AS type, e.name, n.name AS namespace, e.updated_at AS "updatedAt"
            FROM dataset_aliases a JOIN datasets ad ON ad.id = a.dataset_id
            JOIN namespaces an ON an.id = ad.namespace_id
            JOIN datasets e ON e.id = a.target_id JOIN namespaces n ON n.id = e.namespace_id
            WHERE ${conditions.join(' AND ')}`;
  };
  const branches: string[] = [];
  if (query.filter !== 'JOB') {
    branches.push(
      `(${[`${branch('DATASET', 'datasets')} ${notAlias}`, aliases(), ...datasetContent].join(' UNION ')})`,
    );
  }
  if (query.filter !== 'DATASET')
    branches.push(
      jobContent.length === 0
        ? branch('JOB', 'jobs')
        : `(${[branch('JOB', 'jobs'), ...jobContent].join(' UNION ')})`,
    );
  return branches.join(' UNION ALL ');
}

/** One page of datasets and jobs whose name contains `q`, really sorted (Marquez ignores its sort). */
export function search(db: Queryable, query: SearchQuery): Promise<SearchRecord[]> {
  const params: unknown[] = [];
  const union = matching(query, params);
  const order = query.sort === 'NAME' ? 'name, namespace, type' : '"updatedAt" DESC, name, namespace, type';
  params.push(query.limit, query.offset);
  return db.query<SearchRecord>(
    `SELECT type, name, namespace, "updatedAt" FROM (${union}) results
     ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
}

/** How many datasets and jobs match (all pages). */
export async function countSearch(db: Queryable, query: SearchQuery): Promise<number> {
  const params: unknown[] = [];
  const [row] = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM (${matching(query, params)}) results`,
    params,
  );
  return row?.count ?? 0;
}

/** The run that last read or wrote each dataset (by event time), by dataset id. */
export async function latestRunOfDatasets(
  db: Queryable,
  datasetIds: readonly number[],
): Promise<Map<number, string>> {
  if (datasetIds.length === 0) return new Map();
  const rows = await db.query<{ id: number; uuid: string }>(
    `SELECT DISTINCT ON (dataset_id) dataset_id AS id, run_uuid::text AS uuid FROM run_io
     WHERE dataset_id = ANY($1::int[]) ORDER BY dataset_id, event_time DESC, direction DESC, run_uuid DESC`,
    [datasetIds],
  );
  return new Map(rows.map((row) => [row.id, row.uuid]));
}

/** The eventType of the newest event (by event time) of each run that has one, by run uuid. */
export async function latestEventsOfRuns(
  db: Queryable,
  uuids: readonly string[],
): Promise<Map<string, string>> {
  if (uuids.length === 0) return new Map();
  const rows = await db.query<{ uuid: string; eventType: string }>(
    `SELECT DISTINCT ON (run_uuid) run_uuid::text AS uuid, event_type AS "eventType" FROM events
     WHERE run_uuid = ANY($1::uuid[]) AND event_type IS NOT NULL ORDER BY run_uuid, event_time DESC, id DESC`,
    [uuids],
  );
  return new Map(rows.map((row) => [row.uuid, row.eventType]));
}
