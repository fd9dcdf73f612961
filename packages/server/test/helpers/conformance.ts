import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** ../shared/conformance beside the repository. */
export const conformanceDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  '..',
  '..',
  'shared',
  'conformance',
);

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
