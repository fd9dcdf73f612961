import { mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, buildState } from '../build-stamp.js';

/**
 * A small vite app in a temporary folder, built with the same plugins as the explorer: a module in src/, a worker,
 * a file outside the package that a module imports, and a public/ file.
 */
describe('the web build stamp (npm start rebuilds the app only when its inputs changed)', () => {
  let dir: string;
  let app: string;
  const logs: string[] = [];
  const build = () => buildIfStale(app, { log: (line) => logs.push(line) });
  /** The app's one script chunk. */
  const bundle = () => {
    const assets = path.join(app, 'dist', 'assets');
    const names = readdirSync(assets).filter((name) => name.startsWith('index-') && name.endsWith('.js'));
    expect(names).toHaveLength(1);
    return readFileSync(path.join(assets, names[0]!), 'utf8');
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-build-stamp-'));
    app = path.join(dir, 'app');
    mkdirSync(path.join(app, 'src'), { recursive: true });
    mkdirSync(path.join(app, 'public'));
    const plugin = pathToFileURL(path.resolve(import.meta.dirname, '..', 'build-stamp.js')).href;
    writeFileSync(
      path.join(app, 'vite.config.mjs'),
      `import { buildStampPlugins } from ${JSON.stringify(plugin)};\n` +
        'const stamp = buildStampPlugins(import.meta.dirname);\n' +
        'export default { root: import.meta.dirname, logLevel: "warn", plugins: [stamp.plugin], ' +
        'worker: { plugins: () => [stamp.workerPlugin] } };\n',
    );
    writeFileSync(path.join(app, 'index.html'), '<script type="module" src="/src/main.js"></script>\n');
    writeFileSync(
      path.join(app, 'src', 'main.js'),
      "import { word } from '../../shared.js';\n" +
        "new Worker(new URL('./work.js', import.meta.url), { type: 'module' });\n" +
        "document.body.textContent = 'first ' + word;\n",
    );
    writeFileSync(path.join(app, 'src', 'work.js'), "import { helper } from './helper.js';\nhelper();\n");
    writeFileSync(path.join(app, 'src', 'helper.js'), "export const helper = () => postMessage('one');\n");
    writeFileSync(path.join(dir, 'shared.js'), "export const word = 'outside-one';\n");
    writeFileSync(path.join(app, 'public', 'logo.txt'), 'logo\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('builds a missing app, then leaves a fresh one alone', () => {
    expect(buildState(app)).toEqual({ fresh: false, reason: 'dist/.build-stamp.json is missing' });
    expect(build()).toBe('built');
    expect(bundle()).toContain('outside-one');
    const stamp = JSON.parse(readFileSync(path.join(app, 'dist', '.build-stamp.json'), 'utf8'));
    // The file outside the package that the app imports is an input, found by the plugin.
    expect(stamp.outside).toEqual(['../shared.js']);
    expect(Object.keys(stamp.inputs)).toEqual(
      expect.arrayContaining([
        'index.html',
        'vite.config.mjs',
        'src/main.js',
        'src/helper.js',
        'public/logo.txt',
      ]),
    );
    expect(build()).toBe('fresh');
    expect(logs.at(-1)).toBe('web app: dist/ is the build of the current sources; not rebuilt');
  });

  it('rebuilds after a source change even when the changed file is older than the build', () => {
    const main = path.join(app, 'src', 'main.js');
    writeFileSync(main, readFileSync(main, 'utf8').replace("'first '", "'second '"));
    // As `cp -p`, an unpacked archive or a checkout with an old time would leave it.
    utimesSync(main, new Date('2001-01-01'), new Date('2001-01-01'));
    expect(buildState(app)).toEqual({ fresh: false, reason: 'src/main.js changed' });
    expect(build()).toBe('built');
    expect(bundle()).toContain('second ');
    expect(build()).toBe('fresh');
  });

  it('rebuilds when a module of the worker, a file outside the package, public/ or the output changes', () => {
    const cases: [string, () => void, string][] = [
      [
        'worker module',
        () =>
          writeFileSync(
            path.join(app, 'src', 'helper.js'),
            "export const helper = () => postMessage('two');\n",
          ),
        'src/helper.js changed',
      ],
      [
        'outside file',
        () => writeFileSync(path.join(dir, 'shared.js'), "export const word = 'outside-two';\n"),
        '../shared.js changed',
      ],
      [
        'new public file',
        () => writeFileSync(path.join(app, 'public', 'new.txt'), 'new\n'),
        'public/new.txt is new',
      ],
      ['deleted source', () => rmSync(path.join(app, 'public', 'logo.txt')), 'public/logo.txt is gone'],
      [
        'output changed',
        () => writeFileSync(path.join(app, 'dist', 'index.html'), 'edited\n'),
        'the built index.html is missing or changed',
      ],
    ];
    for (const [what, change, reason] of cases) {
      change();
      expect({ what, state: buildState(app) }).toEqual({ what, state: { fresh: false, reason } });
      expect({ what, result: build() }).toEqual({ what, result: 'built' });
      expect({ what, state: buildState(app) }).toEqual({ what, state: { fresh: true } });
    }
    expect(bundle()).toContain('outside-two');
  });
});
