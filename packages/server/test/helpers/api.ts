import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { checkResponse, type DocumentedRoute } from './openapi.js';

/**
 * Sends a request to the API (`path` from the root, query included) and resolves to the answer as `fetch()`
 * gives it, so a test reads it the same whether the server listens on a socket or answers in-process.
 */
export type Send = (path: string, init?: RequestInit) => Promise<Response>;

/** Requests over a socket to the server listening at `url`. */
export function overSocket(url: string): Send {
  return (path, init) => fetch(`${url}${path}`, init);
}

/** Statuses whose answers have no body (a `Response` refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * Requests answered in-process by `app.inject()`: the same routes, hooks and serialisation as over a socket,
 * without one. The request is built as `fetch()` builds it: the URL normalised, the body encoded, its
 * content-type set. (The API answers no redirect, so none is followed.)
 */
export function inProcess(app: FastifyInstance): Send {
  return async (path, init = {}) => {
    const request = new Request(new URL(path, 'http://localhost'), init);
    const url = new URL(request.url);
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = { accept: '*/*', ...Object.fromEntries(request.headers) };
    const answer = await app.inject({
      method: request.method,
      url: `${url.pathname}${url.search}`,
      headers,
      ...(body === undefined ? {} : { payload: body }),
    });
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) answerHeaders.append(name, String(one));
    }
    const empty = NO_BODY.has(answer.statusCode) || request.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(answer.rawPayload), {
      status: answer.statusCode,
      headers: answerHeaders,
    });
  };
}

/**
 * A client of the API for tests: GETs that must answer 200, and event posts that must be accepted.
 * With `documented` (see documentedRoutes), every answer must also match the schema the OpenAPI document gives it.
 */
export function apiOf(send: () => Send, documented?: () => readonly DocumentedRoute[]) {
  return {
    async get<T>(path: string): Promise<T> {
      const response = await send()(path);
      const body = await response.text();
      // The body is in the comparison so that a failure shows the server's error.
      expect({ path, status: response.status, body: response.status === 200 ? '' : body }).toEqual({
        path,
        status: 200,
        body: '',
      });
      const parsed = JSON.parse(body) as T;
      if (documented) checkResponse(documented(), 'GET', path.replace(/^\/api\/v1/, ''), 200, parsed);
      return parsed;
    },
    async status(path: string): Promise<number> {
      const response = await send()(path);
      await response.body?.cancel();
      return response.status;
    },
    async post(...events: unknown[]): Promise<void> {
      for (const event of events) {
        const response = await send()('/api/v1/lineage', {
          method: 'POST',
          body: JSON.stringify(event),
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(201);
      }
    },
  };
}
