import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const builtIndex = path.join(webDir, 'dist', 'index.html');

function newestMtimeMs(entry: string): number {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestMtimeMs(path.join(entry, name)));
  return newest;
}

/**
 * Builds the web app with vite when `dist` is missing or older than a source file, so the browser tests
 * always see the code under test (`npm test` runs `tsc -b`, which does not build the app).
 */
export function ensureWebBuilt(): void {
  const sources = ['src', 'public', 'index.html', 'vite.config.ts', 'package.json'].map((p) =>
    path.join(webDir, p),
  );
  const newestSource = Math.max(...sources.filter(existsSync).map(newestMtimeMs));
  if (existsSync(builtIndex) && statSync(builtIndex).mtimeMs >= newestSource) return;
  execFileSync(
    process.execPath,
    [
      path.resolve(webDir, '..', '..', 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--logLevel',
      'warn',
    ],
    {
      cwd: webDir,
      stdio: 'inherit',
    },
  );
}
