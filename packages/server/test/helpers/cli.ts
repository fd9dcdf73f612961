import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CommandIo } from '../../src/cli/http.js';

/** The built CLI's entry point: tests that run `headwater` as a program need the package built (`npx tsc -b`). */
export const cliPath = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Throws, saying how to build it, when the built CLI is missing. */
export function assertCliBuilt(): void {
  if (!existsSync(cliPath))
    throw new Error(`${cliPath} is missing: run \`npx tsc -b\` (npm test does it) before this test.`);
}

/** A CLI command as the commands' modules export it. */
export type Command = (args: string[], io?: CommandIo) => Promise<number>;

/** Runs a command in-process, capturing what it writes. */
export async function runCommand(
  command: Command,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  };
  const code = await command(args, io);
  return { code, stdout, stderr };
}

/** What a run of the CLI as a program left: its exit code, and what it wrote. */
export interface CliRun {
  /** Null when a signal ended it. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Stdout and stderr interleaved as they arrived, as a terminal would show them. */
  readonly output: string;
}

/**
 * Runs the built CLI (or `entry`, another script such as the package's bin) in a child process to its end, with
 * an empty environment so that the test run's own variables (DATABASE_URL, HEADWATER_*) cannot change what it does.
 */
export function runCli(args: readonly string[], options: { entry?: string } = {}): Promise<CliRun> {
  const entry = options.entry ?? cliPath;
  if (entry === cliPath) assertCliBuilt();
  const child = spawn(process.execPath, [entry, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: {} });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, output }));
  });
}
