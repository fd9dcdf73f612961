import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';

const [embedded] = backends();

describe('the OpenAPI document', () => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    ctx = await startApp(embedded!);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('documents every API route the server answers', async () => {
    const document = (await (await ctx.request('/api/v1/openapi.json')).json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toMatch(/^3\./);
    // Every route Fastify registered under /api/v1, in OpenAPI's {param} form, must be in the document.
    // printRoutes draws a tree whose children carry the rest of their parent's path.
    const routes = new Set<string>();
    const stack: string[] = [];
    for (const line of ctx.server.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const match = /^(.*?)[├└]── (\S+) \(([A-Z, ]+)\)$/.exec(line);
      if (!match) continue;
      const level = match[1]!.length / 4;
      stack.length = level;
      stack.push(match[2]!);
      const path = stack.join('');
      if (!path.startsWith('/api/v1') || path === '/api/v1/openapi.json') continue;
      for (const method of match[3]!.split(', ')) {
        if (method !== 'HEAD') routes.add(`${method.toLowerCase()} ${path.replace(/:([A-Za-z]+)/g, '{$1}')}`);
      }
    }
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method} ${path}`),
      ),
    );
    expect(routes.size).toBeGreaterThan(30);
    expect([...routes].filter((route) => !documented.has(route))).toEqual([]);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['Run', 'DatasetData', 'JobData']),
    );
  });
});
