/**
 * Where the team's shared folder (`../shared` beside the repository: the conformance corpus and the published
 * OpenLineage schemas) lives, and whether a test that needs it may run. One rule for every package's tests:
 * present, they run; absent on a plain clone, they skip with a message; absent in CI (CI=true), the run fails,
 * since CI checks the corpus out beside the repository and must never test less silently.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The monorepo root (`/work/main` in development). */
export const REPO_ROOT = path.resolve(here, '..', '..', '..', '..');
/** The shared conformance folder beside the repository. */
export const CONFORMANCE_DIR = path.resolve(REPO_ROOT, '..', 'shared', 'conformance');

let warned = false;

/**
 * True when the conformance corpus is beside the repository. When it is absent: in CI throws (so the test file
 * fails instead of skipping), elsewhere warns once and returns false, for `describe.skipIf(!hasConformance())`.
 */
export function hasConformance(): boolean {
  if (existsSync(path.join(CONFORMANCE_DIR, 'manifest.json'))) return true;
  if (process.env.CI === 'true') {
    throw new Error(
      `CI=true but the conformance corpus is missing at ${CONFORMANCE_DIR}: CI must run the tests that need it; ` +
        'check the shared folder out beside the repository.',
    );
  }
  if (!warned) {
    warned = true;
    console.warn(
      `The conformance corpus is not at ${CONFORMANCE_DIR}: skipping the tests that need it (real events, ` +
        'the spec sources); schema checks use the bundled copies. Put the shared folder beside the repository ' +
        'to run them all.',
    );
  }
  return false;
}
