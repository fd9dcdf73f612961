import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What `ci/setup.sh` provisions: the producers' venv and the Spark listener jar, in one cache folder. */
export interface Toolchain {
  readonly cache: string;
  /** The venv's bin folder (python, dbt, dbt-ol). */
  readonly bin: string;
  readonly python: string;
  readonly sparkListenerJar: string;
  /** CI's PostgreSQL, where dbt builds its project (in a database of the run's own). */
  readonly adminUrl: string;
}

export const SETUP_SCRIPT = 'packages/server/test/interop/ci/setup.sh';

/** The cache folder setup.sh fills (the same default as the script's). */
export function interopCache(): string {
  return (
    process.env.HEADWATER_INTEROP_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'headwater-interop')
  );
}

/**
 * The real producers, or undefined with a message when they are not installed here. In CI (CI=true) a missing
 * part fails the run instead: the interop suite must run there.
 */
export function interopToolchain(): Toolchain | undefined {
  const cache = interopCache();
  const bin = path.join(cache, 'venv', 'bin');
  const sparkListenerJar = path.join(cache, 'jars', 'openlineage-spark_2.12-1.53.0.jar');
  const adminUrl = process.env.DATABASE_URL;
  const missing = [
    existsSync(path.join(cache, 'venv', '.complete')) && existsSync(path.join(bin, 'dbt-ol'))
      ? undefined
      : `the producers' venv (${path.join(cache, 'venv')})`,
    existsSync(sparkListenerJar) ? undefined : `the Spark listener jar (${sparkListenerJar})`,
    adminUrl ? undefined : 'DATABASE_URL (dbt builds its project on PostgreSQL)',
  ].filter((part) => part !== undefined);
  if (missing.length > 0 || !adminUrl) {
    const message = `real-producer interop suite: missing ${missing.join(', ')}; run ${SETUP_SCRIPT} and set DATABASE_URL`;
    if (process.env.CI === 'true') throw new Error(`CI=true but ${message}`);
    console.warn(`skipping the ${message}.`);
    return undefined;
  }
  return { cache, bin, python: path.join(bin, 'python'), sparkListenerJar, adminUrl };
}
