import { browserAvailable } from './helpers/browser.js';
import { ensureWebBuilt } from './helpers/web-build.js';

/**
 * Builds the app once, before any test file runs. Each browser test file checks that the build is up to date, and
 * two of them starting at once in two workers could each build it into the same `dist`, one emptying it while the
 * other's server served from it.
 */
export default function setup(): void {
  if (browserAvailable()) ensureWebBuilt();
}
