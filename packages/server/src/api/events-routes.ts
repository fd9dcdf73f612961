import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { countEvents, listEventBodies, type EventRange } from '../store/queries/events.js';
import type { AppDeps } from './deps.js';
import { namespacesOf } from '../security/access.js';

/** Events read at a time when a namespace-scoped caller's events are filtered. */
const SCAN_CHUNK = 1000;
import { pageParams } from './paging.js';
import { responses } from './schemas/common.js';

type EventKindParam = 'RUN' | 'DATASET' | 'JOB';

interface EventsQuery {
  before?: string;
  after?: string;
  sortDirection?: string;
  kind: EventKindParam[];
  limit: number;
  offset: number;
}

/** What the event routes read: the store. */
export type EventRouteDeps = Pick<AppDeps, 'db'>;

/**
 * GET /api/v1/events/lineage: the raw events, exactly as received, newest first by default. Like Marquez, only
 * RunEvents unless `kind` asks for DatasetEvents or JobEvents too: the Marquez UI's Events page reads
 * `event.run.runId` of every event it lists. Unlike Marquez, `totalCount` counts what is listed (Marquez counts
 * every kind, so its last pages come up short).
 */
export const eventRoutes = fastifyPlugin<EventRouteDeps>(registerEventRoutes, { name: 'event-routes' });

function registerEventRoutes(
  app: FastifyInstance,
  { db }: EventRouteDeps,
  done: (error?: Error) => void,
): void {
  app.get<{ Querystring: EventsQuery }>(
    '/api/v1/events/lineage',
    {
      schema: {
        tags: ['Events'],
        summary:
          'List stored OpenLineage events (RunEvents unless kind says otherwise), filtered by eventTime',
        querystring: {
          type: 'object',
          properties: {
            before: { type: 'string', format: 'date-time', description: 'Only events before this time' },
            after: { type: 'string', format: 'date-time', description: 'Only events after this time' },
            sortDirection: { type: 'string', enum: ['asc', 'desc', 'ASC', 'DESC'], default: 'desc' },
            kind: {
              type: 'array',
              items: { type: 'string', enum: ['RUN', 'DATASET', 'JOB'] },
              default: ['RUN'],
              description:
                'Which events to list, repeatable (kind=run&kind=dataset&kind=job), case-insensitive; RunEvents only by default, as in Marquez',
            },
            ...pageParams(),
          },
        },
        response: responses(
          {
            type: 'object',
            properties: {
              events: { type: 'array', items: { type: 'object', additionalProperties: true } },
              totalCount: { type: 'integer', description: 'Events of the listed kinds in the time range' },
            },
            required: ['events', 'totalCount'],
          },
          400,
        ),
      },
    },
    async (request, reply) => {
      const { before, after, limit, offset, kind } = request.query;
      const direction = request.query.sortDirection?.toLowerCase() === 'asc' ? 'ASC' : 'DESC';
      const kinds = [...new Set(kind)].map((k) => k.toLowerCase());
      const range: EventRange = {
        after: after ?? '1970-01-01T00:00:00Z',
        before: before ?? '2100-01-01T00:00:00Z',
        kinds,
        direction,
      };
      const principal = request.principal;
      if (!principal.readsAll) {
        // A caller who may not read every namespace sees the events all of whose namespaces they may read.
        // Which those are is in each event's text, so the range is read through and filtered here: this costs
        // what the range holds, not what the page does (narrow it with after/before).
        const visible: string[] = [];
        let total = 0;
        for (let from = 0; ; from += SCAN_CHUNK) {
          const chunk = await listEventBodies(db, range, SCAN_CHUNK, from);
          for (const row of chunk) {
            const names = namespacesOf(JSON.parse(row.body));
            if (![...names].every((namespace) => principal.canRead(namespace))) continue;
            if (total >= offset && visible.length < limit) visible.push(row.body);
            total++;
          }
          if (chunk.length < SCAN_CHUNK) break;
        }
        return reply
          .type('application/json; charset=utf-8')
          .send(`{"events":[${visible.join(',')}],"totalCount":${total}}`);
      }
      const [rows, total] = await Promise.all([
        listEventBodies(db, range, limit, offset),
        countEvents(db, new Date(range.after), new Date(range.before), kinds),
      ]);
      // Bodies are stored as JSON text: splice them in rather than parse and re-serialise every event.
      const text = `{"events":[${rows.map((row) => row.body).join(',')}],"totalCount":${total}}`;
      return reply.type('application/json; charset=utf-8').send(text);
    },
  );
  done();
}
