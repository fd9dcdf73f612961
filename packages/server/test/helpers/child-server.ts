import { spawn, type ChildProcess } from 'node:child_process';
import { assertCliBuilt, cliPath } from './cli.js';

/** A `headwater serve` process started from the built package. */
export interface ChildServer {
  readonly url: string;
  readonly process: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<number | null>;
  /** Everything it has written to stdout and stderr so far, for failure messages. */
  output(): string;
}

/**
 * Starts `headwater serve` in a child process on a free port and resolves once it listens. Needs the built
 * package (npm test builds it first; alone, run `npx tsc -b`).
 */
export async function spawnServer(
  args: readonly string[],
  command: 'serve' | 'proxy' = 'serve',
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<ChildServer> {
  const child = spawnCli(command, args, extraEnv);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return { url, process: child, exited, output: () => output };
}

function spawnCli(command: 'serve' | 'proxy', args: readonly string[], extraEnv: NodeJS.ProcessEnv) {
  assertCliBuilt();
  // The store is the one `args` name: without --database-url it is the embedded store in --data-dir, even where
  // DATABASE_URL is set (CI sets it for the suite), or tests meant for separate stores would share one database.
  const env = { ...process.env };
  delete env.DATABASE_URL;
  return spawn(process.execPath, [cliPath, command, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, ...extraEnv },
  });
}

/**
 * Runs `headwater serve` (or proxy) with `args` until it exits by itself, and returns its exit code and everything
 * it wrote; one still running after `timeoutMs` is SIGKILLed (its code is then null).
 */
export async function runToExit(
  args: readonly string[],
  timeoutMs: number,
  command: 'serve' | 'proxy' = 'serve',
): Promise<{ code: number | null; output: string }> {
  const child = spawnCli(command, args, {});
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) =>
    child.once('exit', (exitCode) => resolve(exitCode)),
  );
  clearTimeout(timer);
  return { code, output };
}
