import type { FastifyInstance } from 'fastify';
import { HeadwaterError } from '../errors.js';
import { countSearch, search, type SearchQuery } from '../store/queries/search.js';
import type { AppDeps } from './app.js';
import { pageParams, plainJson, responses, schemaRef, upperCaseQuery } from './shapes.js';

interface SearchQuerystring {
  q: string;
  filter?: 'DATASET' | 'JOB';
  sort: 'NAME' | 'UPDATED_AT';
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

/**
 * GET /api/v1/search: datasets and jobs whose name contains `q`, as Marquez's search, but really sorted, with
 * an offset, and with a totalCount of all matches (Marquez ignores sort and counts the page).
 */
export function registerSearchRoutes(app: FastifyInstance, { db }: AppDeps): void {
  app.get<{ Querystring: SearchQuerystring }>(
    '/api/v1/search',
    {
      ...plainJson,
      preValidation: upperCaseQuery('filter', 'sort'),
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
              enum: ['NAME', 'UPDATED_AT'],
              default: 'NAME',
              description: 'name (A-Z) or updated_at (newest first); case-insensitive',
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
        response: responses(
          {
            type: 'object',
            properties: {
              totalCount: { type: 'integer', description: 'Matches on all pages' },
              results: { type: 'array', items: schemaRef('SearchResult') },
            },
            required: ['totalCount', 'results'],
            additionalProperties: false,
          },
          400,
        ),
      },
    },
    async (request) => {
      const { q, filter, sort, namespace, before, after, limit, offset } = request.query;
      const query: SearchQuery = {
        q,
        filter,
        sort,
        namespace,
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
}
