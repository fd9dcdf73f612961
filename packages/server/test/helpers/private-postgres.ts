import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@headwater/test-support';

export { freePort };

const run = promisify(execFile);

/** A PostgreSQL server of the test's own, which it may stop, kill and start without touching anyone else's. */
export interface PrivatePostgres {
  /** Connection URL of its `headwater` database. */
  readonly url: string;
  readonly port: number;
  /** Stops it; `immediate` is a crash-like stop (no checkpoint, clients cut off). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Runs SQL as the superuser, e.g. pg_terminate_backend. */
  psql(sql: string): Promise<string>;
  /** Stops it and deletes its files. */
  destroy(): Promise<void>;
}

/** The newest installed PostgreSQL's bin folder (Debian layout), or undefined. */
function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(path.join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? undefined : path.join(root, newest, 'bin');
}

/**
 * Why a private PostgreSQL cannot be started here, or undefined if it can: it needs Debian's PostgreSQL
 * binaries and root (to run the server as the `postgres` user, which initdb requires).
 */
export function privatePostgresUnavailable(): string | undefined {
  if (binDir() === undefined)
    return 'no PostgreSQL binaries under /usr/lib/postgresql (apt-get install postgresql)';
  if (process.getuid?.() !== 0) return 'not root: a private PostgreSQL is run as the postgres user';
  return undefined;
}

/** Initialises and starts a PostgreSQL cluster in a temporary folder, on a free loopback port. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (!bin) throw new Error(privatePostgresUnavailable());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-pg-'));
  await chown(dir, ...(await ids()));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const asPostgres = (command: string, args: string[]) =>
    run('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args], { cwd: dir });
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'headwater', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=50`;
  const start = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']).catch(() => undefined);
  };
  await start();
  const psql = async (sql: string) =>
    (
      await run(path.join(bin, 'psql'), [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'headwater',
        '-d',
        'postgres',
        '-tAc',
        sql,
      ])
    ).stdout;
  await psql('CREATE DATABASE headwater');
  return {
    url: `postgres://headwater@127.0.0.1:${port}/headwater`,
    port,
    stop,
    start,
    psql,
    async destroy() {
      await stop('immediate');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function ids(): Promise<[number, number]> {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: group } = await run('id', ['-g', 'postgres']);
  return [Number(stdout.trim()), Number(group.trim())];
}
