import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPostgresBinaries } from '../src/store/embedded-postgres.js';
import { embeddedPostgresProblem } from './global-setup.js';

const binaries = await findPostgresBinaries();

// Only root makes PostgreSQL run as another user (`postgres` or `nobody`), whose way to the binaries can be closed.
describe.runIf(process.getuid?.() === 0 && binaries !== undefined)(
  'the test setup, as root, with the binaries in a folder only root may enter',
  () => {
    let dir: string;
    let dataDir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-root-only-'));
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'headwater-data-'));
      await mkdir(path.join(dir, 'repo', 'bin'), { recursive: true });
      for (const name of ['initdb', 'postgres']) await writeFile(path.join(dir, 'repo', 'bin', name), '');
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    });
    const at = () => ({
      initdb: path.join(dir, 'repo', 'bin', 'initdb'),
      postgres: path.join(dir, 'repo', 'bin', 'postgres'),
    });

    it('says what is wrong and what to do instead of a bare EACCES', async () => {
      await chmod(dir, 0o700);
      const problem = await embeddedPostgresProblem(dataDir, at());
      expect(problem).toMatch(
        new RegExp(
          "^The tests cannot start the embedded store's PostgreSQL: they run as root, so PostgreSQL \\(which " +
            `refuses root\\) runs as the \`(postgres|nobody)\` user, who cannot enter ${dir} on the way to its ` +
            `binaries in ${path.join(dir, 'repo', 'bin')}\\. `,
        ),
      );
      expect(problem).toContain(`\`chmod o+x ${dir}\``);
      expect(problem).toContain('run `npm test` as a user other than root');
    });

    it('finds nothing wrong once the folder may be entered, nor for the binaries npm installed here', async () => {
      await chmod(dir, 0o711);
      expect(await embeddedPostgresProblem(dataDir, at())).toBeUndefined();
      expect(await embeddedPostgresProblem(dataDir)).toBeUndefined();
    });
  },
);
