import { expect } from 'vitest';
import { checkResponse, type DocumentedRoute } from './openapi.js';

/**
 * A client of a running server for tests: GETs that must answer 200, and event posts that must be accepted.
 * With `documented` (see documentedRoutes), every answer must also match the schema the OpenAPI document gives it.
 */
export function apiOf(url: () => string, documented?: () => readonly DocumentedRoute[]) {
  return {
    async get<T>(path: string): Promise<T> {
      const response = await fetch(`${url()}${path}`);
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
      const response = await fetch(`${url()}${path}`);
      await response.body?.cancel();
      return response.status;
    },
    async post(...events: unknown[]): Promise<void> {
      for (const event of events) {
        const response = await fetch(`${url()}/api/v1/lineage`, {
          method: 'POST',
          body: JSON.stringify(event),
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status).toBe(201);
      }
    },
  };
}
