import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../../build-stamp.js';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Builds the web app with vite unless `dist` is the build of the current sources (build-stamp.js compares their
 * content, as `npm start` does), so the browser tests always see the code under test (`npm test` runs `tsc -b`,
 * which does not build the app).
 */
export function ensureWebBuilt(): void {
  buildIfStale(webDir, { log: () => undefined });
}
