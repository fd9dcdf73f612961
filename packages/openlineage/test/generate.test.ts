import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { hasConformance } from '../src/test-support/shared-corpus.js';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

it.skipIf(!hasConformance())(
  'the committed src/generated is exactly what the generator makes from the shared spec',
  async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'openlineage-generate-'));
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', path.join(packageDir, 'scripts', 'generate-facets.ts'), '--out', out],
        { cwd: packageDir },
      );
      expect(stdout).toContain('Generated 46 facet types from 44 files');
      const committed = path.join(packageDir, 'src', 'generated');
      const files = (await readdir(out)).sort();
      expect(files).toEqual((await readdir(committed)).sort());
      for (const file of files) {
        const fresh = await readFile(path.join(out, file), 'utf8');
        expect(fresh, `${file} is stale: run npm run generate -w @headwater/openlineage`).toBe(
          await readFile(path.join(committed, file), 'utf8'),
        );
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  },
);
