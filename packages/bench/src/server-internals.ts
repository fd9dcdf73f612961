/**
 * Every piece of the server the benchmark uses, in one module: when the server's folders move, this is the one file
 * of the benchmark whose paths change.
 *
 * Relative paths into `packages/server/dist`, not a subpath of the `headwater` package's `exports`: those exports
 * are the published package's public API, and internals listed there would ship to every user as a promise to keep
 * them. This package is private and lives in the same checkout. With `tsc -b`, the project reference to the
 * server's tsconfig.build.json builds the server first, so these imports resolve to its emitted `.d.ts` files; at
 * run time Node loads the same `dist` files that `headwater serve` runs, so the benchmark measures the built server.
 * The path is the same from `src/` (type checking) and from `dist/` (run time): both are one folder below
 * `packages/bench`.
 */
import { fileURLToPath } from 'node:url';

export { resolveConfig } from '../../server/dist/config/server-config.js';
export { createApiKey } from '../../server/dist/security/keys.js';
export { openEmbeddedDb, openPostgresDb } from '../../server/dist/store/db.js';
export { migrate } from '../../server/dist/store/migrate.js';

/** The built `headwater` CLI, which the benchmark starts as a child process for each server it measures. */
export const serverCliPath = fileURLToPath(new URL('../../server/dist/cli/main.js', import.meta.url));
