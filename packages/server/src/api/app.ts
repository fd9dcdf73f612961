import { randomUUID } from 'node:crypto';
import type { Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import { AjvCompiler } from '@fastify/ajv-compiler';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { ServerConfig } from '../config.js';
import { HeadwaterError, asHeadwaterError } from '../errors.js';
import type { IngestFrontDoor } from '../ingest/front-door.js';
import type { IngestPipeline } from '../ingest/pipeline.js';
import type { Validator } from '../ingest/validate.js';
import type { ColumnGraph } from '../graph/column-graph.js';
import type { LineageGraph } from '../graph/lineage-graph.js';
import { isStoreUnavailable, type StoreHealth } from '../store/availability.js';
import type { Db } from '../store/db.js';
import type { ReadModel } from '../store/read-model.js';
import type { Metrics } from '../ops/metrics.js';
import type { ApiKeyVerifier } from '../security/keys.js';
import { registerSecurity } from '../security/plugin.js';
import { registerAnalysisRoutes } from './analysis-routes.js';
import { registerHealthRoutes } from './health-routes.js';
import { registerIngestRoutes } from './ingest-routes.js';
import { registerColumnLineageRoutes } from './column-lineage-routes.js';
import { registerLineageRoutes } from './lineage-routes.js';
import { registerReadRoutes } from './read-routes.js';
import { registerSecurityRoutes } from './security-routes.js';
import { registerWebRoutes } from './web-routes.js';
import { NO_NUL_PATTERN } from './shapes.js';

/** What the HTTP layer needs from the rest of the server. */
export interface AppDeps {
  readonly config: ServerConfig;
  readonly db: Db;
  /** What is committed: names and ids for readers (never the writer's mirror, which runs ahead of the store). */
  readonly state: ReadModel;
  readonly graph: LineageGraph;
  readonly columnGraph: ColumnGraph;
  readonly pipeline: IngestPipeline;
  readonly validator: Validator;
  /** The one way in for events: limits, validation, normalisation, group commit, an outcome per event. */
  readonly frontDoor: IngestFrontDoor;
  /** Whether the store can be reached and written now. */
  readonly health: StoreHealth;
  /** The package version. */
  readonly version: string;
  /** The Prometheus registry served at /metrics, which other parts register their series into. */
  readonly metrics: Metrics;
  /** Checks API keys (and tells whether any exists, which turns authentication on). */
  readonly keys: ApiKeyVerifier;
}

const fastifyErrorCodes: Record<string, HeadwaterError['code']> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_VALIDATION: 'BAD_REQUEST',
};

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
          return (route) => (route.httpPart === 'body' ? exact : coercing)(route);
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
    namespaceNames: () => deps.state.namespaces.keys(),
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    done(null, payload);
  });

  // Ingest keeps the body as text: it is parsed once, validated, and stored as the event's JSON text.
  app.removeAllContentTypeParsers();
  for (const type of [
    'application/json',
    'application/x-ndjson',
    'application/ndjson',
    'application/jsonl',
  ]) {
    app.addContentTypeParser(type, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  }
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined || encoding === 'identity') return done(null, payload);
    if (encoding === 'gzip' || encoding === 'deflate') {
      const inflated = payload.pipe(encoding === 'gzip' ? createGunzip() : createInflate()) as Transform & {
        receivedEncodedLength?: number;
      };
      // Fastify checks Content-Length against the bytes received on the wire, which it learns from here.
      inflated.receivedEncodedLength = 0;
      payload.on('data', (chunk: Buffer) => {
        inflated.receivedEncodedLength! += chunk.length;
      });
      return done(null, inflated);
    }
    done(
      new HeadwaterError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Encoding ${encoding} is not supported; use gzip.`,
      ),
    );
  });

  app.setErrorHandler((rawError: FastifyError | HeadwaterError | Error, request, reply) => {
    let error: HeadwaterError;
    const fastifyCode = 'code' in rawError && typeof rawError.code === 'string' ? rawError.code : undefined;
    if (rawError instanceof HeadwaterError) error = rawError;
    else if (fastifyCode !== undefined && fastifyErrorCodes[fastifyCode] !== undefined) {
      error = new HeadwaterError(
        fastifyErrorCodes[fastifyCode],
        describeFastifyError(fastifyCode, rawError, deps),
        {
          cause: rawError,
        },
      );
    } else if (
      'statusCode' in rawError &&
      typeof rawError.statusCode === 'number' &&
      rawError.statusCode < 500
    ) {
      error = new HeadwaterError('BAD_REQUEST', rawError.message, { cause: rawError });
    } else if (isStoreUnavailable(rawError)) {
      deps.health.markDown(rawError);
      error = deps.health.unavailableError(rawError);
      request.log.warn({ err: rawError }, 'store unavailable');
    } else {
      error = asHeadwaterError(rawError);
      request.log.error({ err: rawError }, 'request failed');
    }
    const body: Record<string, unknown> = { code: error.status, error: error.code, message: error.message };
    if (error.details) body.errors = error.details;
    if (error.retryAfterSeconds !== undefined)
      void reply.header('retry-after', String(error.retryAfterSeconds));
    else if (error.status === 503) void reply.header('retry-after', '1');
    void reply.status(error.status).send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({
      code: 404,
      error: 'NOT_FOUND',
      message: `No route ${request.method} ${request.url.split('?')[0]}; see /api/v1/openapi.json.`,
    });
  });

  registerHealthRoutes(app, deps);
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, () => app.swagger());

  registerIngestRoutes(app, deps);
  registerReadRoutes(app, deps);
  registerLineageRoutes(app, deps);
  registerColumnLineageRoutes(app, deps);
  registerAnalysisRoutes(app, deps);
  registerSecurityRoutes(app, deps);
  registerWebRoutes(app, deps);
  return app;
}

/** Longest path parameter the router matches (a dataset name, say); longer ones get the 404 "No route". */
const MAX_PARAM_LENGTH = 8192;

function describeFastifyError(code: string, error: Error, deps: AppDeps): string {
  switch (code) {
    case 'FST_ERR_VALIDATION':
      return describeValidation(error);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type: send OpenLineage events as application/json (or application/x-ndjson to the batch endpoint).';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `The request body is larger than ${deps.config.maxBodyBytes} bytes (--max-body-bytes); split it into smaller batches.`;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body is empty; send an OpenLineage event as JSON.';
    default:
      return error.message;
  }
}

/** A validation error, with the accepted values of an enum and the bounds of a number spelled out. */
function describeValidation(error: Error): string {
  const { validation, validationContext } = error as FastifyError;
  if (!validation || validation.length === 0) return error.message;
  return validation
    .map((issue) => {
      const where = `${validationContext ?? 'request'}${issue.instancePath}`;
      const params = issue.params;
      let text = `${where} ${issue.message ?? 'is invalid'}`;
      if (issue.keyword === 'enum' && Array.isArray(params.allowedValues))
        text += `: ${(params.allowedValues as unknown[]).join(', ')}`;
      if (issue.keyword === 'pattern' && params.pattern === NO_NUL_PATTERN)
        text = `${where} must not contain a NUL character (\\u0000)`;
      return text;
    })
    .join(', ');
}
