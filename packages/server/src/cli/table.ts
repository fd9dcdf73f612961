/**
 * What the analysis commands (root-cause, impact, schema-diff, diff, lineage) share: plain-text tables for a
 * terminal, the GET of one JSON answer, and the shell of a command (flags, --help, --json, exit codes).
 */
import { parseArgs } from 'node:util';
import { CliError, errorMessageOf, processIo, request, resolveServerUrl, type CommandIo } from './http.js';

/**
 * Lays out rows under a header, each column as wide as its widest cell, two spaces apart; the last column is
 * not padded. Cells may not hold line breaks (they are replaced by spaces).
 *
 * @example
 * formatTable(['A', 'B'], [['1', 'two']]); // 'A  B\n1  two\n'
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (cell: string) => cell.replace(/\s*\n\s*/g, ' ');
  const all = [header, ...rows].map((row) => row.map(clean));
  const widths = header.map((_, index) => Math.max(...all.map((row) => (row[index] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** GETs `path` (with `query`) from the server and returns the parsed JSON; a CliError for an error status. */
export async function getJson<T>(
  baseUrl: string,
  path: string,
  query: Record<string, string | number | undefined>,
): Promise<T> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const response = await request(`${baseUrl}${path}?${params.toString()}`);
  if (!response.ok) throw new CliError(await errorMessageOf(response));
  return (await response.json()) as T;
}

/** The flags every analysis command takes besides its own. */
export const commonOptions = {
  url: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A string flag of a command; `multiple` ones may be given more than once (`--map A=B --map C=D`). */
export type StringOptions = Record<string, { type: 'string'; multiple?: true; short?: string }>;

/** What a command's body gets: its flags, positional arguments, the server URL and where to write. */
export interface CommandContext {
  readonly values: Record<string, string | undefined>;
  /** The values of the flags given more than once (`multiple`), in order; [] when not given. */
  readonly lists: Record<string, string[]>;
  readonly positionals: string[];
  readonly json: boolean;
  readonly url: string;
  readonly io: CommandIo;
}

/**
 * Runs an analysis command: parses `args` (its `options` plus --url, --json, --help), checks the number of
 * positional arguments, and turns a CliError into one line on stderr and its exit code (2 for usage errors).
 */
export async function runClientCommand(
  name: string,
  usage: string,
  args: string[],
  io: CommandIo = processIo,
  options: StringOptions,
  positionals: number | readonly [min: number, max: number],
  body: (context: CommandContext) => Promise<number>,
): Promise<number> {
  const [min, max] = typeof positionals === 'number' ? [positionals, positionals] : positionals;
  let parsed: { values: Record<string, string | string[] | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args,
      options: { ...options, ...commonOptions },
      allowPositionals: true,
      strict: true,
    });
    const count = parsed.positionals.length;
    if (!parsed.values.help && (count < min || count > max)) {
      const expected = min === max ? String(min) : `${min} to ${max}`;
      throw new Error(`expected ${expected} argument${max === 1 ? '' : 's'}, got ${count}`);
    }
  } catch (error) {
    io.stderr.write(`headwater ${name}: ${(error as Error).message}\n\n${usage}\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  try {
    const url = resolveServerUrl(parsed.values.url as string | undefined, io.env);
    const keys = Object.keys(options);
    const values = Object.fromEntries(
      keys
        .filter((key) => !options[key]!.multiple)
        .map((key) => [key, parsed.values[key] as string | undefined]),
    );
    const lists = Object.fromEntries(
      keys
        .filter((key) => options[key]!.multiple)
        .map((key) => [key, (parsed.values[key] as string[]) ?? []]),
    );
    return await body({
      values,
      lists,
      positionals: parsed.positionals,
      json: parsed.values.json === true,
      url,
      io,
    });
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    io.stderr.write(`headwater ${name}: ${error.message}\n`);
    return error.exitCode;
  }
}

/** Writes an answer as indented JSON (for --json). */
export function writeJson(io: CommandIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The part of a nodeId after its type (`dataset:ns:name` -> `ns:name`), shorter in tables. */
export const shortId = (nodeId: string): string => nodeId.slice(nodeId.indexOf(':') + 1);
