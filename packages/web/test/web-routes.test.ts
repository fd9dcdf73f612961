import Fastify from 'fastify';
import { describe, expect, test } from 'vitest';
import { webRoutes } from '../../server/src/api/web-routes.js';

describe('web routes without a built app', () => {
  test('a browser gets a page saying to run npm run build; the API keeps its JSON 404', async () => {
    const app = Fastify();
    app.setNotFoundHandler((_request, reply) => reply.status(404).send({ error: 'NOT_FOUND' }));
    await app.register(webRoutes, { distDir: '/nonexistent/headwater-web-dist/' });
    const page = await app.inject({ url: '/lineage?node=x', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('The Headwater web UI is not built');
    expect(page.body).toContain('npm run build');
    const api = await app.inject({ url: '/api/v1/namespaces', headers: { accept: 'text/html' } });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ error: 'NOT_FOUND' });
    await app.close();
  });
});
