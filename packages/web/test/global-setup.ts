import { browserAvailable } from './helpers/browser.js';
import { ensureWebBuilt } from './helpers/web-build.js';

/**
 * Builds the app once, before any test file runs, if it is missing or older than its sources. Built by each browser
 * test file instead, two of them starting at once in two workers could each build it into the same `dist`, one
 * emptying it while the other's server served from it.
 */
export default function setup(): void {
  if (browserAvailable()) ensureWebBuilt();
}
