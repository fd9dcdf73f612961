import { spawn, type ChildProcess } from 'node:child_process';
import { serverCliPath } from './server-internals.js';

/** Options of {@link startServerProcess}. */
export interface ServerProcessOptions {
  /** Extra `headwater serve` flags, e.g. the store's. */
  readonly serveArgs: readonly string[];
  /**
   * Write CPU profiles (`node --cpu-prof`) into this folder when the server exits: one per thread, so the
   * embedded store's worker thread gets its own.
   */
  readonly cpuProfileDir?: string | undefined;
  /** How long the server may take to start listening. @default 120000 */
  readonly startTimeoutMs?: number;
  /** The command run: the server, or the OpenLineage proxy (which takes `serveArgs` as its flags). @default 'serve' */
  readonly command?: 'serve' | 'proxy';
}

/** A Headwater server running in a child process. */
export interface ServerProcess {
  readonly url: string;
  /** The API key clients send when the benchmark runs with authentication on. */
  bearer?: string | undefined;
  readonly pid: number;
  /** True when the server writes to PostgreSQL, whose backends then do part of its work in other processes. */
  readonly usesPostgres: boolean;
  /** Set once the child has exited, e.g. because it crashed mid-run. */
  readonly exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The last lines the server wrote to stderr, for error reports. */
  stderrTail(): string;
  /** SIGTERM (the server commits in-flight events and closes the store), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<{ killed: boolean }>;
}

const LISTENING = /headwater (?:proxy )?listening on (\S+)/;

/**
 * Starts `headwater serve --port 0` (or `headwater proxy`) in a child process and resolves once it prints the URL it listens on. The
 * server gets its own process, and so its own event loop and core: a load generator in the same process would
 * time its own work along with the server's.
 */
export function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  const nodeArgs: string[] = [];
  if (options.cpuProfileDir !== undefined) {
    // No --cpu-prof-name: every thread would write to that one name; Node's default names carry the thread id.
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`);
  }
  // The server reads DATABASE_URL and HEADWATER_* itself: the harness passes the store explicitly instead, so
  // that the embedded run cannot silently use the PostgreSQL of the caller's environment.
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key !== 'DATABASE_URL' && !key.startsWith('HEADWATER_')) env[key] = value;
  }
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      serverCliPath,
      options.command ?? 'serve',
      '--port',
      '0',
      '--log-level',
      'warn',
      ...options.serveArgs,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let exited: ServerProcess['exited'];
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr.push(text);
    if (stderr.length > 50) stderr.shift();
  });
  const stderrTail = () => stderr.join('').split('\n').slice(-20).join('\n').trim();

  return new Promise<ServerProcess>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `The server did not start within ${options.startTimeoutMs ?? 120_000} ms.\n${stderrTail()}`,
        ),
      );
    }, options.startTimeoutMs ?? 120_000);
    const onData = (text: string) => {
      stdout += text;
      const match = LISTENING.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      // Keep draining stdout so that a chatty server never blocks on a full pipe.
      child.stdout.resume();
      resolve(
        handle(
          child,
          match[1]!,
          options.serveArgs.includes('--database-url'),
          () => exited,
          exit,
          stderrTail,
        ),
      );
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    void exit.then(() => {
      clearTimeout(timer);
      reject(
        new Error(
          `The server exited before listening (code ${exited?.code ?? 'none'}, signal ${exited?.signal ?? 'none'}).\n${stderrTail()}`,
        ),
      );
    });
  });
}

function handle(
  child: ChildProcess,
  url: string,
  usesPostgres: boolean,
  exited: () => ServerProcess['exited'],
  exit: Promise<void>,
  stderrTail: () => string,
): ServerProcess {
  return {
    url,
    pid: child.pid ?? 0,
    usesPostgres,
    get exited() {
      return exited();
    },
    stderrTail,
    async stop(graceMs = 60_000) {
      if (exited()) return { killed: false };
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        exit.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (!timedOut) return { killed: false };
      child.kill('SIGKILL');
      await exit;
      return { killed: true };
    },
  };
}
