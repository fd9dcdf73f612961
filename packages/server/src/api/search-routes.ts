import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import { datasetFacets, latestFacets } from '../store/queries/facets.js';
import { entityKey } from '../store/model-state.js';
import { latestRunsOfJobs } from '../store/queries/runs.js';
import {
  countSearch,
  latestEventsOfRuns,
  latestRunOfDatasets,
  search,
  type SearchQuery,
} from '../store/queries/search.js';
import type { AppDeps } from './deps.js';
import { readableNamespaces } from './visibility.js';
import { pageParams } from './paging.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import { SearchResultsSchema } from './schemas/search.js';

interface SearchQuerystring {
  q: string;
  filter?: 'DATASET' | 'JOB';
  sort: 'NAME' | 'UPDATE_AT' | 'UPDATED_AT';
  namespace?: string;
  before?: string;
  after?: string;
  limit: number;
  offset: number;
}

/** Midnight UTC of a YYYY-MM-DD day. */
function startOfDay(day: string | undefined, name: string): Date | undefined {
  if (day === undefined) return undefined;
  const time = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(time.getTime())) {
    throw new HeadwaterError('BAD_REQUEST', `${name}=${day} is not a date; use YYYY-MM-DD.`);
  }
  return time;
}

const DATE = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } as const;

/** What search reads: the store and the read model. */
export type SearchRouteDeps = Pick<AppDeps, 'db' | 'state'>;

/**
 * GET /api/v1/search: datasets and jobs whose name contains `q`, as Marquez's search, but really sorted, with
 * an offset, and with a totalCount of all matches (Marquez ignores sort and counts the page).
 */
export const searchRoutes = fastifyPlugin<SearchRouteDeps>(registerSearchRoutes, { name: 'search-routes' });

function registerSearchRoutes(
  app: FastifyInstance,
  { db, state }: SearchRouteDeps,
  done: (error?: Error) => void,
): void {
  app.get<{ Querystring: SearchQuerystring }>(
    '/api/v1/search',
    {
      ...plainJson,
      schema: {
        tags: ['Search'],
        summary: 'Find datasets and jobs by name (case-insensitive substring)',
        querystring: {
          type: 'object',
          properties: {
            q: { type: 'string', minLength: 1, pattern: '\\S', description: 'Text the name contains' },
            filter: {
              type: 'string',
              enum: ['DATASET', 'JOB'],
              description: 'dataset or job (case-insensitive)',
            },
            sort: {
              type: 'string',
              // UPDATE_AT is the name of Marquez's enum value (its UI and Java client send it); UPDATED_AT
              // is its text form, which Marquez's lenient enum parsing accepts too.
              enum: ['NAME', 'UPDATE_AT', 'UPDATED_AT'],
              default: 'NAME',
              description:
                'NAME (A-Z) or UPDATE_AT / UPDATED_AT (most recently updated first); case-insensitive',
            },
            namespace: { type: 'string', description: 'Only this namespace' },
            before: { ...DATE, description: 'Only entities updated before this day (YYYY-MM-DD, UTC)' },
            after: {
              ...DATE,
              description: 'Only entities updated after the start of this day (YYYY-MM-DD, UTC)',
            },
            ...pageParams(10),
          },
          required: ['q'],
        },
        response: responses(SearchResultsSchema, 400),
      },
    },
    async (request) => {
      const { q, filter, sort, namespace, before, after, limit, offset } = request.query;
      const query: SearchQuery = {
        q,
        filter,
        sort: sort === 'NAME' ? 'NAME' : 'UPDATED_AT',
        namespace,
        namespaces: readableNamespaces(request, state)?.names,
        before: startOfDay(before, 'before'),
        after: startOfDay(after, 'after'),
        limit,
        offset,
      };
      const [records, totalCount] = await Promise.all([search(db, query), countSearch(db, query)]);
      return {
        totalCount,
        results: records.map((record) => ({
          type: record.type,
          name: record.name,
          updatedAt: record.updatedAt.toISOString(),
          namespace: record.namespace,
          nodeId: `${record.type === 'DATASET' ? 'dataset' : 'job'}:${record.namespace}:${record.name}`,
        })),
      };
    },
  );

  registerAdvancedSearchRoutes(app, db, state);
  done();
}

/** `name` with each case-insensitive occurrence of `q` in <em>, as OpenSearch highlights a match. */
function highlight(name: string, q: string): string {
  const lower = name.toLowerCase();
  const needle = q.toLowerCase();
  let out = '';
  let from = 0;
  for (let at = lower.indexOf(needle); at >= 0 && needle !== ''; at = lower.indexOf(needle, from)) {
    out += `${name.slice(from, at)}<em>${name.slice(at, at + needle.length)}</em>`;
    from = at + needle.length;
  }
  return out + name.slice(from);
}

/** Fragments of SQL longer than this are cut around their first match (OpenSearch's are about 100 characters). */
const FRAGMENT_CHARS = 160;
/** At most this many fragments per highlighted field, as OpenSearch's default of 5. */
const MAX_FRAGMENTS = 5;

/** The lines of `text` that contain `q`, highlighted, each cut to about FRAGMENT_CHARS around its first match. */
function fragments(text: string, q: string): string[] {
  const needle = q.toLowerCase();
  const result: string[] = [];
  for (const line of text.split('\n')) {
    const at = line.toLowerCase().indexOf(needle);
    if (at < 0) continue;
    const from = Math.max(0, Math.min(at - FRAGMENT_CHARS / 2, line.length - FRAGMENT_CHARS));
    result.push(highlight(line.slice(from, from + FRAGMENT_CHARS).trim(), q));
    if (result.length === MAX_FRAGMENTS) break;
  }
  return result;
}

/** Field names of a schema facet, nested ones too (a struct's fields). */
function fieldNames(fields: unknown): string[] {
  if (!Array.isArray(fields)) return [];
  return fields.flatMap((field: unknown) => {
    if (field === null || typeof field !== 'object') return [];
    const { name, fields: nested } = field as { name?: unknown; fields?: unknown };
    return [...(typeof name === 'string' ? [name] : []), ...fieldNames(nested)];
  });
}

/**
 * What a hit matched, as OpenSearch's highlights: per matched field (named by its path in the hit, as Marquez's
 * index names it), the matching text with the match in <em>. The search matched one of them at least.
 */
function highlightsOf(hit: { name: string; namespace: string; facets?: unknown }, q: string) {
  const needle = q.toLowerCase();
  const contains = (text: string) => text.toLowerCase().includes(needle);
  const facets = (hit.facets ?? {}) as { schema?: { fields?: unknown }; sql?: { query?: unknown } };
  const result: Record<string, string[]> = {};
  if (contains(hit.name)) result.name = [highlight(hit.name, q)];
  if (contains(hit.namespace)) result.namespace = [highlight(hit.namespace, q)];
  const fields = fieldNames(facets.schema?.fields).filter(contains);
  if (fields.length > 0)
    result['facets.schema.fields.name'] = fields.slice(0, MAX_FRAGMENTS).map((name) => highlight(name, q));
  const sql = facets.sql?.query;
  if (typeof sql === 'string' && contains(sql)) result['facets.sql.query'] = fragments(sql, q);
  return result;
}

const hitsSchema = (hit: Record<string, unknown>) =>
  responses(
    {
      type: 'object',
      properties: {
        hits: { type: 'array', items: { type: 'object', properties: hit, additionalProperties: true } },
        highlights: {
          type: 'array',
          items: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          description:
            'One per hit, in the same order: per matched field (name, namespace, facets.schema.fields.name, ' +
            'facets.sql.query), the matching text with the match in <em>',
        },
      },
      required: ['hits', 'highlights'],
      additionalProperties: false,
    },
    400,
  );

/** What one kind of advanced-search hit needs beyond the search match: its latest run and its fields. */
interface HitSource {
  readonly filter: 'DATASET' | 'JOB';
  readonly what: string;
  /** What it matches beyond the name and namespace. */
  readonly content: string;
  /** The hit's own fields, for the OpenAPI document. */
  readonly fields: Record<string, unknown>;
  /** Per entity id: its latest run, and the fields of the hit beyond run_id, name, namespace and eventType. */
  describe(ids: readonly number[]): Promise<{
    runs: Map<number, string>;
    extra: (id: number) => Record<string, unknown>;
  }>;
}

/**
 * GET /api/v2beta/search/jobs and /datasets: the answers of Marquez's OpenSearch-backed search (the Marquez
 * UI's advanced-search build), served from Headwater's own search: up to 10 matches by name, namespace, field
 * names (datasets) or SQL (jobs), as Marquez's index matches them, each described by
 * its latest run and that run's latest eventType, as the search index would hold it.
 */
function registerAdvancedSearchRoutes(app: FastifyInstance, db: AppDeps['db'], state: AppDeps['state']) {
  const object = { type: 'object', additionalProperties: true } as const;
  const sources: Record<'jobs' | 'datasets', HitSource> = {
    jobs: {
      filter: 'JOB',
      what: 'Jobs',
      content: "SQL (the sql facet's query)",
      fields: { type: { type: 'string' }, facets: object, runFacets: object },
      async describe(ids) {
        const [latest, facets] = await Promise.all([
          latestRunsOfJobs(db, ids, 1),
          latestFacets<number>(db, 'job', ids),
        ]);
        const runs = new Map([...latest].flatMap(([id, [run]]) => (run ? [[id, run.uuid] as const] : [])));
        const runFacets = await latestFacets<string>(db, 'run', [...runs.values()]);
        return {
          runs,
          extra: (id) => ({
            type: state.jobsById.get(id)?.type ?? 'BATCH',
            facets: facets.get(id) ?? {},
            runFacets: runFacets.get(runs.get(id) ?? '') ?? {},
          }),
        };
      },
    },
    datasets: {
      filter: 'DATASET',
      what: 'Datasets',
      content: 'a field name',
      fields: { facets: object },
      async describe(ids) {
        const [runs, facets] = await Promise.all([latestRunOfDatasets(db, ids), datasetFacets(db, ids)]);
        return { runs, extra: (id) => ({ facets: facets.get(id) ?? {} }) };
      },
    },
  };

  for (const [kind, source] of Object.entries(sources) as ['jobs' | 'datasets', HitSource][]) {
    app.get<{ Querystring: { q: string } }>(
      `/api/v2beta/search/${kind}`,
      {
        ...plainJson,
        schema: {
          tags: ['Search'],
          summary: `${source.what} whose name, namespace or ${source.content} contains q, in the shape of Marquez's advanced (OpenSearch) search`,
          querystring: {
            type: 'object',
            properties: {
              q: {
                type: 'string',
                minLength: 1,
                pattern: '\\S',
                description: `Text the name, namespace or ${source.content} contains (case-insensitive)`,
              },
            },
            required: ['q'],
          },
          response: hitsSchema({
            run_id: { type: ['string', 'null'] },
            name: { type: 'string' },
            namespace: { type: 'string' },
            eventType: { type: ['string', 'null'] },
            ...source.fields,
          }),
        },
      },
      async (request) => {
        const { q } = request.query;
        const records = await search(db, {
          q,
          filter: source.filter,
          sort: 'NAME',
          limit: 10,
          offset: 0,
          content: true,
          namespaces: readableNamespaces(request, state)?.names,
        });
        const found = records.flatMap((record) => {
          const namespace = state.namespaces.get(record.namespace);
          const id = namespace && state[kind].get(entityKey(namespace.id, record.name))?.id;
          return id === undefined ? [] : [{ record, id }];
        });
        const { runs, extra } = await source.describe(found.map(({ id }) => id));
        const events = await latestEventsOfRuns(db, [...runs.values()]);
        const hits = found.map(({ record, id }) => {
          const runId = runs.get(id);
          return {
            run_id: runId ?? null,
            name: record.name,
            namespace: record.namespace,
            eventType: (runId && events.get(runId)) ?? null,
            ...extra(id),
          };
        });
        return { hits, highlights: hits.map((hit) => highlightsOf(hit, q)) };
      },
    );
  }
}
