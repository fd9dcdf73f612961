import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import fastifyPlugin from 'fastify-plugin';

/**
 * The web app a server whose package folder is `serverRoot` serves. In a checkout of the repository (the server's
 * sources beside its dist/, also through `npm install -g ./packages/server`'s link) it is the workspace's build,
 * packages/web/dist, which `npm run build` and `npm start` keep current. The published package has no sources; it
 * serves the copy that `npm pack` put into its web/ folder (scripts/pack-web.js).
 *
 * A checkout never serves its web/: that copy exists only while a pack runs (postpack deletes it, or an interrupted
 * pack leaves it behind, stale), and a server started meanwhile would serve files deleted under it or an old app.
 * An installed package never looks beside itself: `../web/dist` there is another package's folder.
 */
export function webDistDirOf(serverRoot: string): string {
  const checkout = existsSync(path.join(serverRoot, 'src'));
  return `${checkout ? path.join(serverRoot, '..', 'web', 'dist') : path.join(serverRoot, 'web')}${path.sep}`;
}

/**
 * The web app this server serves ({@link webDistDirOf}). The same relative URL finds the package folder from
 * `src/api` (tests, tsx) and from `dist/api` (the built CLI): both are two folders below it.
 */
export const defaultWebDistDir = webDistDirOf(fileURLToPath(new URL('../../', import.meta.url)));

/** Vite fingerprints everything under `assets/`, so those files never change under the same name. */
const immutableMaxAgeMs = 365 * 24 * 3600 * 1000;

const notBuiltPage = (distDir: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Headwater: web UI not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1f2937}
code{background:#f3f4f6;padding:.1rem .3rem;border-radius:4px}</style></head>
<body><h1>The Headwater web UI is not built</h1>
<p>This server found no web app in <code>${escapeHtml(distDir)}</code>.</p>
<p>Run <code>npm run build</code> at the root of the Headwater repository, then reload this page.
The API is available meanwhile under <a href="/api/v1/openapi.json"><code>/api/v1</code></a>.</p>
</body></html>
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Requests that belong to the API or to probes never get the app's HTML, even from a browser. */
function isServerPath(urlPath: string): boolean {
  return urlPath === 'healthcheck' || urlPath === 'api' || urlPath.startsWith('api/');
}

/** A file of the build (the icon), never a path that climbs out of it. */
function isFileIn(root: string, relative: string): boolean {
  const file = path.resolve(root, relative);
  if (!file.startsWith(path.resolve(root) + path.sep)) return false;
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Browsers navigating to a page send `Accept: text/html`; fetches of data and scripts do not. */
function acceptsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

/**
 * Serves the built web app (packages/web/dist, or the published package's copy) at `/`: hashed assets with a
 * one-year immutable cache, other files as they are, and `index.html` (never cached, so a new build is picked up
 * at once) for every other browser navigation, so that any URL of the app can be pasted into a ticket and opened
 * directly.
 * When the app is not built, browsers get a page that says how to build it.
 */
export const webRoutes = fastifyPlugin<WebRouteDeps>(registerWebRoutes, { name: 'web-routes' });

/** What the web app's routes need: where the built app is. */
export interface WebRouteDeps {
  /**
   * The built app.
   * @default {@link defaultWebDistDir}
   */
  readonly distDir?: string;
}

function registerWebRoutes(
  app: FastifyInstance,
  { distDir = defaultWebDistDir }: WebRouteDeps,
  done: (error?: Error) => void,
): void {
  const indexFile = `${distDir.replace(/\/$/, '')}/index.html`;
  // An encapsulated plugin: @fastify/static's reply.sendFile is only needed here. `serve: false` because its own
  // wildcard route would answer before the SPA fallback and the API's JSON 404s.
  void app.register(async (instance) => {
    await instance.register(fastifyStatic, { root: distDir, serve: false, index: false });

    const sendIndex = (reply: FastifyReply) => {
      // Checked per request (a stat): building the app while the server runs then works without a restart.
      if (!existsSync(indexFile))
        return reply.status(503).type('text/html; charset=utf-8').send(notBuiltPage(distDir));
      return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    };

    instance.get('/*', { schema: { hide: true } }, (request, reply) => {
      const urlPath = (request.params as { '*': string })['*'];
      if (isServerPath(urlPath)) return reply.callNotFound();
      if (urlPath === '' || urlPath === 'index.html') return sendIndex(reply);
      if (urlPath.startsWith('assets/'))
        return reply.sendFile(urlPath, { maxAge: immutableMaxAgeMs, immutable: true });
      if (isFileIn(distDir, urlPath)) return reply.sendFile(urlPath, { maxAge: 3600 * 1000 });
      if (acceptsHtml(request)) return sendIndex(reply);
      return reply.callNotFound();
    });
  });
  done();
}
