import type { FastifyInstance } from 'fastify';
import { countEvents } from '../store/queries/events.js';
import type { AppDeps } from './app.js';

interface EventsQuery {
  before?: string;
  after?: string;
  sortDirection?: string;
  limit: number;
  offset: number;
}

/** GET /api/v1/events/lineage: the raw events, exactly as received, newest first by default. */
export function registerEventRoutes(app: FastifyInstance, { db }: AppDeps): void {
  app.get<{ Querystring: EventsQuery }>(
    '/api/v1/events/lineage',
    {
      schema: {
        tags: ['Events'],
        summary: 'List stored OpenLineage events (all kinds), filtered by eventTime',
        querystring: {
          type: 'object',
          properties: {
            before: { type: 'string', format: 'date-time', description: 'Only events before this time' },
            after: { type: 'string', format: 'date-time', description: 'Only events after this time' },
            sortDirection: { type: 'string', enum: ['asc', 'desc', 'ASC', 'DESC'], default: 'desc' },
            limit: { type: 'integer', minimum: 0, default: 100 },
            offset: { type: 'integer', minimum: 0, default: 0 },
          },
        },
      },
    },
    async (request, reply) => {
      const { before, after, limit, offset } = request.query;
      const direction = request.query.sortDirection?.toLowerCase() === 'asc' ? 'ASC' : 'DESC';
      const params = [after ?? '1970-01-01T00:00:00Z', before ?? '2100-01-01T00:00:00Z'];
      const where = 'event_time >= $1::timestamptz AND event_time <= $2::timestamptz';
      const [rows, total] = await Promise.all([
        db.query<{ body: string }>(
          `SELECT body FROM events WHERE ${where} ORDER BY event_time ${direction}, id ${direction} LIMIT $3 OFFSET $4`,
          [...params, limit, offset],
        ),
        countEvents(db, new Date(params[0]!), new Date(params[1]!)),
      ]);
      // Bodies are stored as JSON text: splice them in rather than parse and re-serialise every event.
      const text = `{"events":[${rows.map((row) => row.body).join(',')}],"totalCount":${total}}`;
      return reply.type('application/json; charset=utf-8').send(text);
    },
  );
}
