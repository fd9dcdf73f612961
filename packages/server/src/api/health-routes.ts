import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { AppDeps } from './deps.js';
import { storeEngine, type Db } from '../store/db.js';

/** How long a readiness probe waits for the store before calling it unreachable. */
const READY_PROBE_TIMEOUT_MS = 2_000;

/** What the health routes report on: the store, its health, replication, the column graph's load, the version. */
export type HealthRouteDeps = Pick<AppDeps, 'db' | 'health' | 'replication' | 'columnGraph' | 'version'>;

/**
 * Liveness and readiness. `/healthz` says the process is up and serving HTTP (restart it if this fails);
 * `/readyz` says it can do its job: the store answers within 2 s, the writer may write to it (a follower
 * forwards writes), migrations are applied, and which role it has with how far it has followed the commits. `/healthcheck` (Marquez's path) answers as `/readyz` does, so a load
 * balancer that polls it stops sending traffic to a server whose store is gone.
 */
export const healthRoutes = fastifyPlugin<HealthRouteDeps>(registerHealthRoutes, { name: 'health-routes' });

function registerHealthRoutes(
  app: FastifyInstance,
  deps: HealthRouteDeps,
  done: (error?: Error) => void,
): void {
  app.get('/healthz', { schema: { hide: true } }, () => ({ status: 'ok' }));

  const ready = async () => {
    let reachable = true;
    let reason: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        deps.db.probe(),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the store did not answer within ${READY_PROBE_TIMEOUT_MS} ms`)),
            READY_PROBE_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      reachable = false;
      reason = (error as Error).message;
    } finally {
      clearTimeout(timer);
    }
    const status = deps.health.status;
    const replication = deps.replication.status;
    const writer = replication.role === 'writer';
    // A follower serves reads without the writer; one that missed commits is not ready until it has reloaded.
    const ok = reachable && (!writer || status.available) && replication.missed === undefined;
    return {
      status: ok ? 200 : 503,
      body: {
        status: ok ? 'ready' : 'unavailable',
        role: replication.role,
        replication: {
          ...(replication.epoch !== undefined ? { epoch: replication.epoch } : {}),
          ...(replication.writerUrl !== undefined ? { writerUrl: replication.writerUrl } : {}),
          appliedCommit: replication.applied,
          latestCommit: replication.feedEnd,
          lagSeconds: replication.lagSeconds,
          ...(replication.missed !== undefined ? { reason: replication.missed } : {}),
        },
        store: {
          ...storeKind(deps.db),
          reachable,
          writable: status.available,
          ...(reason !== undefined || status.reason !== undefined ? { reason: reason ?? status.reason } : {}),
          ...(status.since !== undefined ? { unavailableSince: new Date(status.since).toISOString() } : {}),
        },
        // Migrations run before the server listens: a server that answers has applied them all.
        migrations: { applied: true },
        // Loaded after start; until then its routes wait for it (see app.ts).
        columnLineage: deps.columnGraph.complete ? 'loaded' : 'loading',
        version: deps.version,
      },
    };
  };

  for (const path of ['/readyz', '/healthcheck']) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) => {
      const { status, body } = await ready();
      if (status !== 200) void reply.header('retry-after', String(deps.health.retryAfterSeconds));
      return reply.status(status).send(body);
    });
  }
  done();
}

/** What /readyz says of the store: external PostgreSQL, or the embedded store and the engine it runs on. */
function storeKind(db: Db): { kind: 'embedded' | 'postgres'; engine?: string } {
  const { kind, engine, version } = storeEngine(db);
  if (engine === undefined) return { kind };
  return { kind, engine: version === undefined ? engine : `${engine} ${version}` };
}
