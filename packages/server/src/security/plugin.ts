import { randomUUID } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HeadwaterError } from '../core/errors.js';
import type { Metrics } from '../ops/metrics.js';
import type { Db } from '../store/db.js';
import { parseNodeId } from '../core/node-id.js';
import { LOCAL_PRINCIPAL, NOBODY, Principal, type Role, type RouteAccess } from './access.js';
import { recordAudit } from '../store/queries/audit.js';
import { findRunNamespaces } from '../store/queries/runs.js';
import type { SecurityConfig } from './config.js';
import type { ApiKeyVerifier } from './keys.js';
import {
  REPLICA_PATH,
  REPLICA_PRINCIPAL,
  REPLICA_TOKEN_PREFIX,
  type ReplicaCredential,
} from './replica-credential.js';
import { OidcVerifier } from './oidc.js';
import { redactAnswer } from './redact.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Refuses (throws INVALID_CONFIG) to serve an address beyond loopback without authentication: called just
     * before listening, so that a key made after the app was built counts.
     */
    assertSafeToServe(): Promise<void>;
  }
  interface FastifyRequest {
    /** Who is calling and what they may do (set before any handler runs). */
    principal: Principal;
    /** What the audit entry of this write adds to its route and path (a route sets it: an alias's two names). */
    auditDetail: string | undefined;
  }
  interface FastifyContextConfig {
    /**
     * What the route needs. Unset: public outside /api, ingest routes 'write', GET 'read', anything else
     * 'admin', so that a route added without thinking about it is closed, never open.
     */
    access?: RouteAccess;
    /** The route acts on the whole server (keys, the audit log, metrics): its role is needed over `*`. */
    global?: boolean;
  }
}

/** What the security layer needs. */
export interface SecurityDeps {
  readonly security: SecurityConfig;
  /** The address the server binds. */
  readonly host: string;
  readonly db: Db;
  readonly metrics: Metrics;
  readonly keys: ApiKeyVerifier;
  readonly replicaCredential: ReplicaCredential;
  /** The names of every namespace the store knows (the committed read model's). */
  readonly namespaceNames: () => Iterable<string>;
}

const PUBLIC_API_PATHS = new Set(['/api/v1/openapi.json']);
const WRITE_PATHS = new Set(['/api/v1/lineage', '/api/v1/lineage/batch']);
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const NEEDED: Record<Exclude<RouteAccess, 'public'>, Role> = {
  read: 'reader',
  write: 'writer',
  admin: 'admin',
};

/** Whether `host` (an address or name, without port) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** The access a route needs, from its config or the closed-by-default rule. */
function accessOf(method: string, url: string, config: { access?: RouteAccess } | undefined): RouteAccess {
  if (config?.access) return config.access;
  if (PUBLIC_API_PATHS.has(url)) return 'public';
  if (!url.startsWith('/api/')) return 'public';
  if (WRITE_PATHS.has(url) && method === 'POST') return 'write';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'admin';
}

/**
 * The security layer, as hooks on the root instance so that they see every route: Host and Origin checks,
 * authentication (API keys, OIDC tokens), rate limits, the role and namespace checks each route's `access`
 * needs, the filtering of every answer for a caller who may not read every namespace, and the audit log.
 * Registered before the routes (its onRoute hook gives each route its access).
 */
export async function registerSecurity(app: FastifyInstance, deps: SecurityDeps): Promise<void> {
  const { security, metrics, keys, db, replicaCredential } = deps;
  const oidc = security.oidc ? new OidcVerifier(security.oidc) : undefined;
  const anonymous =
    security.anonymousRead.length > 0
      ? new Principal('anonymous', 'anonymous', [{ role: 'reader', namespaces: security.anonymousRead }])
      : NOBODY;
  const wildcardBind = deps.host === '0.0.0.0' || deps.host === '::' || deps.host === '';
  const allowedHosts = new Set([...security.allowedHosts, deps.host.toLowerCase()]);

  // Set for every request by the first hooks below (an object default would be shared by all requests).
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('auditDetail', undefined);

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const access = accessOf(methods[0] ?? 'GET', route.url, route.config);
    route.config = { ...route.config, access };
  });

  app.decorate('assertSafeToServe', async () => {
    if (isLoopback(deps.host) || security.insecure || oidc) return;
    if (await keys.anyKey()) return;
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `Refusing to serve ${deps.host} without authentication: anyone who reaches it could read and delete ` +
        'everything. Create a key first (headwater keys create --name NAME --role admin --namespaces "*", with the ' +
        'same --data-dir or --database-url), or configure --oidc-issuer, or pass --insecure to serve it open.',
    );
  });

  if (security.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: [...security.corsOrigins],
      allowedHeaders: ['authorization', 'content-type', 'content-encoding', 'x-request-id'],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    });
  }

  const refuse = (request: FastifyRequest, reason: string, error: HeadwaterError): HeadwaterError => {
    metrics.authFailures.inc({ reason });
    audit(request, 'auth.failure', error.status, reason);
    return error;
  };
  const audit = (request: FastifyRequest, action: string, status: number, detail?: string) => {
    recordAudit(db, {
      at: new Date(),
      actor: request.principal.subject,
      action,
      target: request.url.slice(0, 2000),
      status,
      address: request.ip,
      detail,
    }).catch((error: unknown) => request.log.warn({ err: error }, 'could not write the audit log'));
  };

  // DNS rebinding and CSRF, before anything else is looked at.
  app.addHook('onRequest', (request, _reply, done) => {
    request.principal = NOBODY;
    const hostHeader = (request.headers.host ?? '').toLowerCase();
    const host = hostHeader.startsWith('[')
      ? hostHeader.slice(0, hostHeader.indexOf(']') + 1)
      : hostHeader.split(':')[0]!;
    if (
      !isLoopback(host) &&
      !allowedHosts.has(host) &&
      !(wildcardBind && security.allowedHosts.length === 0)
    ) {
      done(
        refuse(
          request,
          'host_not_allowed',
          new HeadwaterError(
            'FORBIDDEN',
            `Host ${JSON.stringify(hostHeader)} is not one this server answers to (a DNS-rebinding defence); ` +
              'add it with --allowed-hosts.',
          ),
        ),
      );
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !['GET', 'HEAD', 'OPTIONS'].includes(request.method)) {
      let originHost: string | undefined;
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        originHost = undefined;
      }
      let ownHost: string | undefined;
      try {
        // Through URL too, so that default ports compare equal (Host: localhost:80, Origin: http://localhost).
        ownHost = new URL(`${new URL(origin).protocol}//${hostHeader}`).host.toLowerCase();
      } catch {
        ownHost = hostHeader;
      }
      if (originHost !== ownHost && !security.corsOrigins.includes(origin)) {
        done(
          refuse(
            request,
            'cross_site',
            new HeadwaterError(
              'FORBIDDEN',
              `A ${request.method} from the web page at ${origin} is refused (cross-site request); allow that ` +
                'origin with --cors-origins if it is yours.',
            ),
          ),
        );
        return;
      }
    }
    done();
  });

  // Who is calling. A bad credential is remembered and refused after the rate limit has counted it.
  const failures = new WeakMap<FastifyRequest, { reason: string; message: string }>();
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    if (header === undefined) {
      const authOn = oidc !== undefined || (await keys.anyKey());
      request.principal = authOn ? anonymous : LOCAL_PRINCIPAL;
      return;
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      failures.set(request, {
        reason: 'malformed',
        message: 'The Authorization header must be "Bearer <key or token>".',
      });
      return;
    }
    const token = match[1]!;
    if (token.startsWith(REPLICA_TOKEN_PREFIX)) {
      const path = request.url.split('?', 1)[0];
      if (request.method !== 'POST' || path !== REPLICA_PATH)
        failures.set(request, {
          reason: 'replica_scope',
          message: `A replica credential is good for POST ${REPLICA_PATH} only.`,
        });
      else if (await replicaCredential.verify(token)) request.principal = REPLICA_PRINCIPAL;
      else
        failures.set(request, {
          reason: 'replica_invalid',
          message: "The replica credential is not this store's.",
        });
      return;
    }
    if (token.startsWith('hw_')) {
      const result = await keys.verify(token);
      if ('principal' in result) request.principal = result.principal;
      else
        failures.set(request, {
          reason: `key_${result.refused}`,
          message: `The API key is ${result.refused}.`,
        });
      return;
    }
    if (oidc && token.split('.').length === 3) {
      const result = await oidc.verify(token);
      if ('principal' in result) request.principal = result.principal;
      else
        failures.set(request, {
          reason: result.refused,
          message: `The token was refused: ${result.message}.`,
        });
      return;
    }
    failures.set(request, {
      reason: 'malformed',
      message: oidc
        ? 'The bearer credential is neither a Headwater API key nor a JWT.'
        : 'The bearer credential is not a Headwater API key.',
    });
  });

  await app.register(rateLimit, { global: false });
  // Local use and a replica's forwarded batches (already limited where they came in) are not limited.
  const limitOf = (request: FastifyRequest) =>
    request.principal === LOCAL_PRINCIPAL || request.principal === REPLICA_PRINCIPAL
      ? { by: 'none', max: 0, key: '' }
      : request.principal.authenticated && !failures.has(request)
        ? { by: 'key', max: security.rateLimitPerKey, key: `key:${request.principal.subject}` }
        : { by: 'address', max: security.rateLimitPerAddress, key: `address:${request.ip}` };
  app.addHook(
    'onRequest',
    app.rateLimit({
      timeWindow: security.rateLimitWindowSeconds * 1000,
      keyGenerator: (request) => limitOf(request).key,
      max: (request) => limitOf(request).max || Number.MAX_SAFE_INTEGER,
      allowList: (request) => limitOf(request).max === 0 || request.routeOptions.config.access === 'public',
      onExceeded: (request) => metrics.rateLimited.inc({ by: limitOf(request).by }),
      errorResponseBuilder: (_request, context) =>
        new HeadwaterError(
          'TOO_MANY_REQUESTS',
          `Rate limit of ${context.max} requests per ${security.rateLimitWindowSeconds} s exceeded; retry in ${context.after}.`,
          { retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)) },
        ),
    }),
  );

  const standIns = new WeakMap<FastifyRequest, Map<string, string>>();
  // What the route needs, and the namespaces the request names.
  app.addHook('onRequest', async (request) => {
    const { access, global } = request.routeOptions.config;
    if (access === undefined || access === 'public') return;
    const failure = failures.get(request);
    if (failure) throw refuse(request, failure.reason, unauthorized(failure.message));
    const principal = request.principal;
    const role = NEEDED[access];
    if (!principal.hasRole(role)) {
      if (!principal.authenticated)
        throw refuse(
          request,
          'missing',
          unauthorized('This server needs credentials: send "Authorization: Bearer <API key>".'),
        );
      throw refuse(
        request,
        'forbidden',
        new HeadwaterError(
          'FORBIDDEN',
          `This needs the ${role} role; the caller (${principal.name}) lacks it.`,
        ),
      );
    }
    const over = (namespace: string) =>
      access === 'admin'
        ? principal.canAdmin(namespace)
        : access === 'write'
          ? principal.canWrite(namespace)
          : principal.canRead(namespace);
    const named = namespacesNamed(request);
    if (
      global ||
      (access === 'admin' && named.length === 0 && (await runNamespaces(db, request)).length === 0)
    ) {
      const all =
        access === 'admin'
          ? principal.adminsAll
          : access === 'write'
            ? principal.writesAll
            : principal.readsAll;
      if (!all)
        throw refuse(
          request,
          'forbidden',
          new HeadwaterError(
            'FORBIDDEN',
            `This acts on the whole server: it needs the ${role} role over every namespace ('*').`,
          ),
        );
      return;
    }
    if (principal.readsAll && (access === 'read' || principal.adminsAll)) return;
    const runs = await runNamespaces(db, request);
    const hidden = new Set<string>();
    for (const namespace of [...named, ...runs.map((run) => run.namespace)]) {
      if (!principal.canRead(namespace)) {
        if (access !== 'read') throw notVisible();
        hidden.add(namespace);
        continue;
      }
      if (!over(namespace))
        throw refuse(
          request,
          'forbidden',
          new HeadwaterError(
            'FORBIDDEN',
            `The caller (${principal.name}) may read ${namespace} but lacks the ${role} role there.`,
          ),
        );
    }
    if (hidden.size > 0) {
      // The read goes on as if it named something that does not exist, so that its answer (a 404, or a 400
      // that a check after the lookup gives) is exactly the one such a name gets, and cannot tell the caller
      // that the hidden one exists. The stand-ins are put back in the answer, which then echoes the request.
      const swaps = new Map<string, string>();
      for (const namespace of hidden) swaps.set(namespace, `${STAND_IN}${swaps.size}`);
      for (const run of runs) if (hidden.has(run.namespace)) swaps.set(run.id, randomUUID());
      substitute(request, swaps);
      standIns.set(request, swaps);
    }
  });

  // Every JSON answer of a read for a caller who may not read everything is filtered; 404s all look alike, so
  // that a hidden name cannot be told from one that does not exist.
  app.addHook('onSend', async (request, reply, sent: unknown) => {
    const principal = request.principal;
    if (principal.readsAll || request.routeOptions.config.access === 'public') return sent;
    let payload = sent;
    const swaps = standIns.get(request);
    if (swaps && typeof payload === 'string') {
      for (const [original, standIn] of swaps) payload = (payload as string).replaceAll(standIn, original);
    }
    if (reply.statusCode === 404) {
      void reply.type('application/json; charset=utf-8');
      return JSON.stringify(NOT_VISIBLE_BODY);
    }
    if (reply.statusCode >= 300 || payload === null || payload === undefined || payload === '')
      return payload;
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.includes('json') || typeof payload !== 'string') {
      // Only JSON can be filtered: refuse other answers rather than send them unfiltered.
      reply.code(403);
      void reply.type('application/json; charset=utf-8');
      return JSON.stringify({
        code: 403,
        error: 'FORBIDDEN',
        message: 'This answer is only available as JSON to a caller who may not read every namespace.',
      });
    }
    const readable = () => [...deps.namespaceNames()].filter((name) => principal.canRead(name));
    return JSON.stringify(redactAnswer(JSON.parse(payload), principal, readable));
  });

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe(
      { method: request.method, route, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    if (request.routeOptions.config.access === 'admin' && request.method !== 'GET')
      audit(request, `${request.method} ${route}`, reply.statusCode, request.auditDetail);
    done();
  });
}

const NOT_VISIBLE_BODY = {
  code: 404,
  error: 'NOT_FOUND',
  message: 'Not found (or not visible to this caller).',
};

function notVisible(): HeadwaterError {
  return new HeadwaterError('NOT_FOUND', NOT_VISIBLE_BODY.message);
}

function unauthorized(message: string): HeadwaterError {
  return new HeadwaterError('UNAUTHORIZED', message);
}

/** What stands in for a hidden namespace in a request (no namespace can be named so: see substitute). */
const STAND_IN = `hidden-${randomUUID()}-`;

/** Replaces, in the request's path and query parameters, each hidden namespace and run id by its stand-in. */
function substitute(request: FastifyRequest, swaps: ReadonlyMap<string, string>): void {
  const swap = (text: string): string => {
    const direct = swaps.get(text) ?? swaps.get(text.toLowerCase());
    if (direct !== undefined) return direct;
    if (text.startsWith('run:')) return `run:${swap(text.slice(4))}`;
    const match = /^(dataset|job|datasetField):/.exec(text);
    if (!match) return text;
    try {
      const parsed = parseNodeId(text);
      if (parsed.type === 'run') return text;
      const standIn = swaps.get(parsed.namespace);
      return standIn === undefined
        ? text
        : `${match[1]}:${standIn}${text.slice(match[0].length + parsed.namespace.length)}`;
    } catch {
      return text;
    }
  };
  for (const bag of [request.params, request.query] as Record<string, unknown>[]) {
    if (!bag || typeof bag !== 'object') continue;
    for (const [key, value] of Object.entries(bag)) {
      if (typeof value === 'string') bag[key] = swap(value);
      else if (Array.isArray(value))
        bag[key] = value.map((item: unknown) => (typeof item === 'string' ? swap(item) : item));
    }
  }
}

/** The namespaces a request names: a `namespace` path parameter and every nodeId among its parameters. */
function namespacesNamed(request: FastifyRequest): string[] {
  const found: string[] = [];
  const params = (request.params ?? {}) as Record<string, unknown>;
  if (typeof params.namespace === 'string') found.push(params.namespace);
  for (const value of [
    ...Object.values(params),
    ...Object.values((request.query ?? {}) as Record<string, unknown>),
  ]) {
    for (const text of Array.isArray(value) ? value : [value]) {
      if (typeof text !== 'string' || !/^(dataset|job|datasetField):/.test(text)) continue;
      try {
        const parsed = parseNodeId(text);
        if (parsed.type !== 'run') found.push(parsed.namespace);
      } catch {
        // Not a nodeId: the route answers 400 for it.
      }
    }
  }
  return found;
}

/** The job namespaces of the runs a request names by UUID (a run id in the path, a run-diff's from and to). */
async function runNamespaces(db: Db, request: FastifyRequest): Promise<{ id: string; namespace: string }[]> {
  const ids: string[] = [];
  for (const value of [
    ...Object.values((request.params ?? {}) as Record<string, unknown>),
    ...Object.values((request.query ?? {}) as Record<string, unknown>),
  ]) {
    for (const text of Array.isArray(value) ? value : [value]) {
      if (typeof text !== 'string') continue;
      const id = text.startsWith('run:') ? text.slice(4) : text;
      if (UUID.test(id)) ids.push(id.toLowerCase());
    }
  }
  if (ids.length === 0) return [];
  return findRunNamespaces(db, ids);
}
