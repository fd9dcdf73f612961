import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const webDist = path.join(repoRoot, 'packages', 'web', 'dist');

/** Every file below `dir`, relative to it, with `/` separators (npm's). */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

test('the published server package holds the built web app it serves, and no benchmark', async () => {
  // prepack builds the app when it is stale and copies it into the package; postpack deletes the copy.
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '-w', 'headwater'], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [pack] = JSON.parse(stdout) as [{ name: string; files: { path: string }[] }];
  expect(pack.name).toBe('headwater');
  const files = pack.files.map((file) => file.path);

  expect(files).toContain('bin/headwater.js');
  expect(files).toContain('dist/cli/main.js');
  expect(files).toContain('web/index.html');
  // The whole build, as the workspace has it, less the stamp that describes the workspace's sources.
  const packedWeb = files.filter((file) => file.startsWith('web/')).map((file) => file.slice('web/'.length));
  const built = filesBelow(webDist).filter((file) => file !== '.build-stamp.json');
  expect(packedWeb.sort()).toEqual(built.sort());
  expect(built.some((file) => /^assets\/index-[\w-]+\.js$/.test(file))).toBe(true);

  const bench = files.filter((file) => /(^|\/)bench\//.test(file));
  expect(
    bench,
    'benchmark files in the package (after the benchmark moved to packages/bench, a checkout built before it ' +
      'keeps packages/server/dist/bench: delete that folder)',
  ).toEqual([]);
  expect(existsSync(path.join(repoRoot, 'packages', 'server', 'web'))).toBe(false);
});
