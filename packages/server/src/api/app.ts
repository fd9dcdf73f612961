import { randomUUID } from 'node:crypto';
import { AjvCompiler } from '@fastify/ajv-compiler';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { registerSecurity } from '../security/plugin.js';
import type { AppDeps } from './deps.js';
import { aliasRoutes } from './aliases-routes.js';
import { incidentRoutes } from './incidents-routes.js';
import { ownerRoutes } from './owners-routes.js';
import { analysisRoutes } from './analysis-routes.js';
import { healthRoutes } from './health-routes.js';
import { httpCore } from './http-core.js';
import { lenientQuery } from './lenient-query.js';
import { ingestRoutes } from './ingest-routes.js';
import { columnLineageRoutes } from './column-lineage-routes.js';
import { legacyRoutes } from './legacy-routes.js';
import { lineageRoutes } from './lineage-routes.js';
import { readRoutes } from './read-routes.js';
import { securityRoutes } from './security-routes.js';
import { backupRoutes } from './backup-routes.js';
import { previewRoutes } from './previews-routes.js';
import { webRoutes } from './web-routes.js';

/** Routes that read the column graph: column lineage, the analyses, compliance, quality (its breaking columns). */
const NEEDS_COLUMN_GRAPH = /^\/api\/v1\/(column-lineage|analysis\/|compliance\/|previews\/)|\/quality$/;
/** How long such a route waits for the column graph to load after start. */
const COLUMN_GRAPH_WAIT_MS = 15_000;

/**
 * Builds the Fastify app: content parsing (raw JSON text, NDJSON, gzip), the one error format, and the route
 * modules. Only this layer knows HTTP.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const ajvOptions = { coerceTypes: 'array', removeAdditional: false, useDefaults: true } as const;
  const buildValidator = AjvCompiler();
  const app = Fastify({
    bodyLimit: deps.config.maxBodyBytes,
    logger: deps.config.logLevel === 'silent' ? false : { level: deps.config.logLevel },
    // Each request has an id (the caller's X-Request-Id when it sends one), logged with every line about it
    // and echoed in the answer, so that a producer's report can be found in the log.
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // Dataset and job names of hundreds of characters are common (paths, Spark plan names); the router's
    // default limit of 100 characters per path parameter made them unreachable.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Query strings like ?lastRunStates=FAILED&lastRunStates=ABORTED must arrive as arrays, and query values
    // are text to coerce; JSON bodies carry their own types, so `false` is never a description "false".
    ajv: { customOptions: ajvOptions },
    schemaController: {
      compilersFactory: {
        buildValidator: (externalSchemas, options) => {
          const coercing = buildValidator(externalSchemas, options);
          const exact = buildValidator(externalSchemas, {
            ...options,
            customOptions: { ...options?.customOptions, coerceTypes: false },
          } as typeof options);
          return (route) => {
            const validate = (route.httpPart === 'body' ? exact : coercing)(route);
            const rewrite = route.httpPart === 'querystring' ? lenientQuery(route.schema) : undefined;
            if (rewrite === undefined) return validate;
            // Lenient where Marquez is (see lenient-query.ts), for every route: the query is put into the
            // form its schema declares, then validated (and coerced) by that schema as usual.
            // Ajv's validators take a context (Fastify passes one so that coercion can replace the root).
            const ajvValidate = validate as (data: unknown, context?: unknown) => boolean;
            const lenient = ((data: unknown, context?: unknown) => {
              rewrite(data);
              const valid = ajvValidate(data, context);
              lenient.errors = validate.errors ?? null;
              return valid;
            }) as typeof validate;
            lenient.schemaEnv = validate.schemaEnv;
            return lenient;
          };
        },
      },
    },
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Headwater API',
        version: deps.version,
        description:
          'OpenLineage ingest (single and batch), a Marquez-compatible read API, and lineage analysis beyond it.',
      },
      servers: [{ url: '/' }],
    },
    // Shared schemas keep their $id (Run, DatasetData, ...) as component names instead of def-N.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) =>
        typeof json.$id === 'string' ? json.$id : `def-${index}`,
    },
  });

  // Before any route: the security layer gives each route its access as it is registered.
  await registerSecurity(app, {
    security: deps.config.security,
    host: deps.config.host,
    db: deps.db,
    metrics: deps.metrics,
    keys: deps.keys,
    replicaCredential: deps.replicaCredential,
    namespaceNames: () => deps.state.namespaces.keys(),
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    done(null, payload);
  });

  // The column graph loads after start (see server.ts): the routes that read it wait for it, up to a bound, then
  // answer 503 with Retry-After (the graph refuses to answer until it is in).
  app.addHook('preHandler', async (request) => {
    if (!NEEDS_COLUMN_GRAPH.test(request.routeOptions.url ?? '')) return;
    const loading = deps.columnLineageLoaded();
    if (loading === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      loading,
      new Promise((resolve) => (timer = setTimeout(resolve, COLUMN_GRAPH_WAIT_MS))),
    ]);
    clearTimeout(timer);
  });

  // Each route module is a plugin that declares what it needs (its *RouteDeps) and, not being encapsulated, registers
  // its routes on the root: the error and not-found handlers above, the security hooks and the shared schemas
  // (read-routes.ts) apply to all of them. Registered in this order, which is the OpenAPI document's.
  await app.register(httpCore, deps);
  // Before the other routes: its hook answers `?preview=` reads from the preview's own routes.
  await app.register(previewRoutes, deps);

  await app.register(healthRoutes, deps);
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, () => app.swagger());

  await app.register(ingestRoutes, deps);
  await app.register(readRoutes, deps);
  await app.register(legacyRoutes, deps);
  await app.register(lineageRoutes, deps);
  await app.register(columnLineageRoutes, deps);
  await app.register(aliasRoutes, deps);
  await app.register(ownerRoutes, deps);
  await app.register(analysisRoutes, deps);
  await app.register(incidentRoutes, deps);
  await app.register(securityRoutes, deps);
  await app.register(backupRoutes, deps);
  await app.register(webRoutes, {});
  return app;
}

/** Longest path parameter the router matches (a dataset name, say); longer ones get the 404 "No route". */
const MAX_PARAM_LENGTH = 8192;
