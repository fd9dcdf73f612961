import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import { entityCountStats, lineageEventStats, type StatsPeriod } from '../store/queries/stats.js';
import type { AppDeps } from './deps.js';
import { readableNamespaces } from './visibility.js';
import { Ref } from '../core/json-schema.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import { CountBucketSchema, LineageEventsBucketSchema } from './schemas/stats.js';

interface StatsQuery {
  period: StatsPeriod;
  timezone?: string;
}

const statsQuery = {
  type: 'object',
  properties: {
    period: {
      type: 'string',
      enum: ['DAY', 'WEEK'],
      description: 'DAY: 24 hourly buckets (UTC); WEEK: 7 daily buckets in `timezone` (case-insensitive)',
    },
    timezone: { type: 'string', description: 'IANA time zone, e.g. Europe/Paris; required for WEEK' },
  },
  required: ['period'],
} as const;

/** The time zone of a WEEK request, checked before it reaches SQL. */
function timeZoneOf({ period, timezone }: StatsQuery): string | undefined {
  if (period !== 'WEEK') return undefined;
  if (timezone === undefined || timezone === '') {
    throw new HeadwaterError(
      'BAD_REQUEST',
      'timezone is required for period=WEEK: pass an IANA time zone, e.g. timezone=Europe/Paris.',
    );
  }
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch (error) {
    throw new HeadwaterError('BAD_REQUEST', `timezone=${timezone} is not a known IANA time zone.`, {
      cause: error,
    });
  }
  return timezone;
}

/** The store may know fewer zone names than Intl: an unknown zone is the client's error, not ours. */
async function withTimeZone<T>(timeZone: string | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (timeZone !== undefined && /time zone/i.test((error as Error).message)) {
      throw new HeadwaterError('BAD_REQUEST', `timezone=${timeZone} is not known to the store.`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** What the stats routes read: the store and the read model. */
export type StatsRouteDeps = Pick<AppDeps, 'db' | 'state'>;

/** /api/v1/stats: the dashboard's event counts and growth charts. */
export const statsRoutes = fastifyPlugin<StatsRouteDeps>(registerStatsRoutes, { name: 'stats-routes' });

function registerStatsRoutes(
  app: FastifyInstance,
  { db, state }: StatsRouteDeps,
  done: (error?: Error) => void,
): void {
  app.get<{ Querystring: StatsQuery }>(
    '/api/v1/stats/lineage-events',
    {
      ...plainJson,
      schema: {
        tags: ['Stats'],
        summary: 'OpenLineage run events per hour (last 24 hours) or per day (last 7 days), by eventType',
        description:
          'Counted by eventTime. WEEK buckets are reported as local midnights written in UTC, as Marquez does.',
        querystring: statsQuery,
        response: responses({ type: 'array', items: Ref(LineageEventsBucketSchema) }, 400),
      },
    },
    async (request) => {
      const timeZone = timeZoneOf(request.query);
      const buckets = await withTimeZone(timeZone, () =>
        lineageEventStats(db, request.query.period, timeZone, readableNamespaces(request, state)),
      );
      return buckets.map((bucket) => ({
        ...bucket,
        startInterval: bucket.startInterval.toISOString(),
        endInterval: bucket.endInterval.toISOString(),
      }));
    },
  );

  for (const entity of ['jobs', 'datasets', 'sources'] as const) {
    app.get<{ Querystring: StatsQuery }>(
      `/api/v1/stats/${entity}`,
      {
        ...plainJson,
        schema: {
          tags: ['Stats'],
          summary: `How many ${entity} existed at the end of each hour (last 24 hours) or day (last 7 days)`,
          description:
            'Cumulative, by created_at (the eventTime that first named them); soft-deleted ones count, as in Marquez.',
          querystring: statsQuery,
          response: responses({ type: 'array', items: Ref(CountBucketSchema) }, 400),
        },
      },
      async (request) => {
        const timeZone = timeZoneOf(request.query);
        const buckets = await withTimeZone(timeZone, () =>
          entityCountStats(db, entity, request.query.period, timeZone, readableNamespaces(request, state)),
        );
        return buckets.map((bucket) => ({
          startInterval: bucket.startInterval.toISOString(),
          endInterval: bucket.endInterval.toISOString(),
          count: bucket.count,
        }));
      },
    );
  }
  done();
}
