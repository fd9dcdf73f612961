import type { CommandIo } from '../../src/cli/http.js';

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
