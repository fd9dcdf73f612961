import type { FastifyInstance } from 'fastify';
import { HeadwaterError } from '../errors.js';
import { ROLES } from '../security/access.js';
import { auditJson, listAudit, recordAudit } from '../security/audit.js';
import { apiKeyJson, createApiKey, listApiKeys, revokeApiKey } from '../security/keys.js';
import type { AppDeps } from './app.js';
import { pageParams, parseJsonBody, responses, schemaRef, type PageQuery } from './shapes.js';

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

/** /api/v1/keys (API keys) and /api/v1/audit (the audit log): for admins over every namespace. */
export function registerSecurityRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keys } = deps;

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
          400: schemaRef('Error'),
          401: schemaRef('Error'),
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
}
