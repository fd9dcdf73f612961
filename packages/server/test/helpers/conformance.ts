import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFORMANCE_DIR } from '../../../openlineage/src/test-support/shared-corpus.js';

/** ../shared/conformance beside the repository. */
export const conformanceDir = CONFORMANCE_DIR;
/**
 * Whether the tests that need the conformance corpus may run: true when it is there; on a plain clone false
 * (with a message); in CI a missing corpus fails the run.
 */
export { hasConformance } from '../../../openlineage/src/test-support/shared-corpus.js';

interface ManifestEntry {
  readonly group: string;
  readonly file: string;
  readonly status: string;
}

/** Event files (`group/file.json`) by manifest status, in emission order within each group. */
export function conformanceFiles(statuses: readonly string[]): string[] {
  const manifest = JSON.parse(readFileSync(path.join(conformanceDir, 'manifest.json'), 'utf8')) as {
    files: ManifestEntry[];
  };
  return manifest.files
    .filter((entry) => statuses.includes(entry.status))
    .map((entry) => `${entry.group}/${entry.file}`)
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/** The events in a conformance file (some files hold an array). */
export function readEvents(file: string): unknown[] {
  const parsed = JSON.parse(
    readFileSync(path.join(conformanceDir, 'openlineage-events', file), 'utf8'),
  ) as unknown;
  return Array.isArray(parsed) ? parsed : [parsed];
}
