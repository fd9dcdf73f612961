#!/usr/bin/env node
// The `headwater` command. It is a file in the repository, not in dist/, because npm links a package's bins when it
// installs, before anything is built: a bin pointing into dist/ is skipped on a fresh clone (no `headwater` in
// node_modules/.bin, `npx headwater` fails) until a second install after the build. This file exists from the
// clone on, so `npm install` links it, and it loads the built CLI or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  process.stderr.write(
    `headwater: the CLI is not built yet (${fileURLToPath(main)} is missing). Run \`npm run build\` ` +
      `(or \`npm start\`, which builds and serves) in ${root}, then run this command again.\n`,
  );
  process.exit(1);
}
await import(main.href);
