import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { ServerConfig } from '../config/server-config.js';
import { HeadwaterError } from '../core/errors.js';
import { ROLES } from '../security/access.js';
import { auditJson, listAudit, recordAudit } from '../store/queries/audit.js';
import { apiKeyJson, createApiKey, listApiKeys, revokeApiKey } from '../security/keys.js';
import type { AppDeps } from './deps.js';
import { Ref } from '../core/json-schema.js';
import { parseJsonBody } from './json-body.js';
import { pageParams, type PageQuery } from './paging.js';
import { ErrorSchema, responses } from './schemas/common.js';

const keySchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: [...ROLES] },
    namespaces: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
    revokedAt: { type: ['string', 'null'], format: 'date-time' },
    state: { type: 'string', enum: ['active', 'expired', 'revoked'] },
  },
  required: ['id', 'name', 'role', 'namespaces', 'createdAt', 'state'],
} as const;

const globalAdmin = { access: 'admin', global: true } as const;

/** What the security routes need: the store (keys, audit), the key verifier, the metrics and the security config. */
export type SecurityRouteDeps = Pick<AppDeps, 'db' | 'keys' | 'metrics'> & {
  readonly config: Pick<ServerConfig, 'security'>;
};

/**
 * /api/v1/auth (what a sign-in screen needs, and who the caller is), /api/v1/keys (API keys) and /api/v1/audit
 * (the audit log): the last two for admins over every namespace.
 */
export const securityRoutes = fastifyPlugin<SecurityRouteDeps>(registerSecurityRoutes, {
  name: 'security-routes',
});

function registerSecurityRoutes(
  app: FastifyInstance,
  deps: SecurityRouteDeps,
  done: (error?: Error) => void,
): void {
  const { db, keys } = deps;
  const { oidc, anonymousRead } = deps.config.security;

  app.get(
    '/api/v1/auth/config',
    {
      config: { access: 'public' },
      schema: {
        tags: ['Security'],
        summary:
          'How to sign in: whether credentials are needed, and the OIDC issuer and client the explorer uses',
        response: responses({
          type: 'object',
          properties: {
            authRequired: { type: 'boolean' },
            anonymousRead: { type: 'boolean' },
            oidc: {
              type: ['object', 'null'],
              properties: {
                issuer: { type: 'string' },
                clientId: { type: 'string' },
                scopes: { type: 'string' },
              },
            },
          },
          required: ['authRequired', 'anonymousRead', 'oidc'],
        }),
      },
    },
    // Says nothing a request to any other route does not: a 401 there tells that credentials are needed.
    async () => ({
      authRequired: oidc !== undefined || (await keys.anyKey()),
      anonymousRead: anonymousRead.length > 0,
      oidc:
        oidc?.clientId === undefined
          ? null
          : { issuer: oidc.issuer, clientId: oidc.clientId, scopes: oidc.scopes },
    }),
  );

  app.get(
    '/api/v1/auth/me',
    {
      schema: {
        tags: ['Security'],
        summary: 'Who the caller is (the key or token subject) and the grants it holds',
        response: responses(
          {
            type: 'object',
            properties: {
              subject: { type: 'string' },
              name: { type: 'string' },
              grants: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    role: { type: 'string', enum: [...ROLES] },
                    namespaces: { type: 'array', items: { type: 'string' } },
                  },
                },
              },
            },
          },
          401,
        ),
      },
    },
    (request) => ({
      subject: request.principal.subject,
      name: request.principal.name,
      grants: request.principal.grants,
    }),
  );

  app.get(
    '/api/v1/keys',
    {
      config: globalAdmin,
      schema: {
        tags: ['Security'],
        summary: 'List API keys (never their secrets), newest first',
        response: responses(
          { type: 'object', properties: { keys: { type: 'array', items: keySchema } } },
          401,
        ),
      },
    },
    async () => ({ keys: (await listApiKeys(db)).map((record) => apiKeyJson(record)) }),
  );

  app.post<{ Body: { name: string; role: string; namespaces: string[]; expiresAt?: string } }>(
    '/api/v1/keys',
    {
      config: globalAdmin,
      schema: {
        tags: ['Security'],
        summary: 'Create an API key; the answer holds its secret, shown this once',
        body: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            role: { type: 'string', enum: [...ROLES] },
            namespaces: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
            expiresAt: { type: 'string', format: 'date-time' },
          },
          required: ['name', 'role', 'namespaces'],
          additionalProperties: false,
        },
        response: {
          400: Ref(ErrorSchema),
          401: Ref(ErrorSchema),
          201: { type: 'object', properties: { key: { type: 'string' }, ...keySchema.properties } },
        },
      },
      preValidation: parseJsonBody,
    },
    async (request, reply) => {
      const { name, role, namespaces, expiresAt } = request.body;
      const { record, token } = await createApiKey(db, {
        name,
        role,
        namespaces,
        expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt),
      });
      keys.invalidate();
      return reply.status(201).send({ key: token, ...apiKeyJson(record) });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/keys/:id',
    {
      config: globalAdmin,
      schema: {
        tags: ['Security'],
        summary: 'Revoke an API key (by id or name); it stops working at once',
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        response: responses(
          { type: 'object', properties: { keys: { type: 'array', items: keySchema } } },
          404,
        ),
      },
    },
    async (request) => {
      const revoked = await revokeApiKey(db, request.params.id);
      keys.invalidate();
      if (revoked.length === 0)
        throw new HeadwaterError(
          'NOT_FOUND',
          `No active key has the id or name ${JSON.stringify(request.params.id)}.`,
        );
      await recordAudit(db, {
        at: new Date(),
        actor: request.principal.subject,
        action: 'keys.revoke',
        target: revoked.map((key) => key.id).join(','),
        status: 200,
        address: request.ip,
      });
      return { keys: revoked.map((record) => apiKeyJson(record)) };
    },
  );

  app.get<{ Querystring: PageQuery & { since?: string; until?: string; actor?: string; action?: string } }>(
    '/api/v1/audit',
    {
      config: globalAdmin,
      schema: {
        tags: ['Security'],
        summary: 'The audit log, newest first: every write other than ingest, and every refused credential',
        querystring: {
          type: 'object',
          properties: {
            since: { type: 'string', format: 'date-time' },
            until: { type: 'string', format: 'date-time' },
            actor: { type: 'string', description: "key:<id>, oidc:<subject> or 'anonymous'" },
            action: { type: 'string', description: "Entries whose action starts with this, e.g. 'auth.'" },
            ...pageParams(),
          },
        },
        response: responses(
          {
            type: 'object',
            properties: {
              entries: { type: 'array', items: { type: 'object', additionalProperties: true } },
              totalCount: { type: 'integer' },
            },
          },
          400,
          401,
        ),
      },
    },
    async (request) => {
      const { since, until, actor, action, limit, offset } = request.query;
      const { entries, totalCount } = await listAudit(db, {
        since: since === undefined ? undefined : new Date(since),
        until: until === undefined ? undefined : new Date(until),
        actor,
        action,
        limit,
        offset,
      });
      return { entries: entries.map(auditJson), totalCount };
    },
  );

  app.get(
    '/metrics',
    { config: { access: 'read', global: true }, schema: { hide: true } },
    async (_request, reply) => {
      const { contentType, text } = await deps.metrics.expose();
      return reply.type(contentType).send(text);
    },
  );
  done();
}
