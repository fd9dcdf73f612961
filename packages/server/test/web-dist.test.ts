import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { webDistDirOf, webRoutes } from '../src/api/web-routes.js';

describe('the web app a server serves', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'headwater-web-dir-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A page that says which copy it is, in `dir`. */
  const writeApp = async (dir: string, name: string) => {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'index.html'), `<!doctype html><title>${name}</title>`);
  };

  test("in a checkout is the workspace's packages/web/dist, even while a pack's copy exists", async () => {
    const server = path.join(root, 'packages', 'server');
    await mkdir(path.join(server, 'src'), { recursive: true });
    await writeApp(path.join(root, 'packages', 'web', 'dist'), 'workspace');
    await writeApp(path.join(server, 'web'), 'packed copy');
    expect(webDistDirOf(server)).toBe(`${path.join(root, 'packages', 'web', 'dist')}${path.sep}`);
  });

  test('installed from the package is its own web/ copy, never a folder beside the package', async () => {
    const server = path.join(root, 'node_modules', 'headwater');
    await mkdir(path.join(server, 'dist'), { recursive: true });
    await writeApp(path.join(server, 'web'), 'packed copy');
    // node_modules/web is some other package, whatever it holds.
    await writeApp(path.join(root, 'node_modules', 'web', 'dist'), 'another package');
    const dir = webDistDirOf(server);
    expect(dir).toBe(`${path.join(server, 'web')}${path.sep}`);

    const app = Fastify();
    await app.register(webRoutes, { distDir: dir });
    const page = await app.inject({ url: '/lineage?node=x', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>packed copy</title>');
    await app.close();
  });
});
