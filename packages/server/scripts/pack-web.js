// @ts-check
/**
 * The web app in the published package. `headwater serve` serves the explorer, which is built in another workspace
 * (packages/web/dist); a package installed from npm has no workspace beside it, so `npm pack` and `npm publish`
 * copy the build into this package's web/ folder, which package.json's `files` lists.
 *
 * `node scripts/pack-web.js copy` (prepack) builds the app first when its build is not the build of its current
 * sources (packages/web/build-stamp.js, as `npm start` does), so a pack never ships a stale app; `clean` (postpack)
 * deletes the copy again, so a checkout never has a second build that could drift from packages/web/dist.
 */
import { cpSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale, STAMP_FILE } from '../../web/build-stamp.js';

const serverRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const webRoot = path.resolve(serverRoot, '..', 'web');
const webDist = path.join(webRoot, 'dist');
const packaged = path.join(serverRoot, 'web');

const mode = process.argv[2];
if (mode === 'copy') {
  buildIfStale(webRoot);
  if (!existsSync(path.join(webDist, 'index.html')))
    throw new Error(
      `pack-web: ${webDist} has no index.html after the build; run npm run build and pack again`,
    );
  rmSync(packaged, { recursive: true, force: true });
  // The stamp describes the workspace's build (its inputs' paths are relative to packages/web): not the package's.
  cpSync(webDist, packaged, { recursive: true, filter: (source) => path.basename(source) !== STAMP_FILE });
} else if (mode === 'clean') {
  rmSync(packaged, { recursive: true, force: true });
} else {
  process.stderr.write(`pack-web: expected "copy" or "clean" as the argument, got ${mode ?? 'none'}\n`);
  process.exitCode = 1;
}
