/**
 * The help of each command: `headwater CMD --help`, `headwater help CMD`, and the usage printed after a usage
 * error. Each command declares its help beside its parser, from the same options object, so a flag the parser
 * takes cannot be left out of the help (the type of `flags` asks for every option).
 */

/** How one flag is shown: its value's placeholder, where else it can be set, its default, what it does. */
export interface FlagHelp {
  /** Placeholder of the value (`N`, `URL`, `DIR`); none for a boolean flag. */
  readonly value?: string;
  /** The environment variable that sets it when the flag is not given. */
  readonly env?: string;
  /** The value used when neither the flag nor `env` is given. */
  readonly default?: string;
  readonly text: string;
}

/** A parseArgs options object, as the commands declare them. */
export type Options = Readonly<
  Record<string, { readonly type: 'string' | 'boolean'; readonly multiple?: boolean }>
>;

/** What a command's help says. */
export interface CommandHelp {
  readonly name: string;
  /** Synopsis lines, each without the leading `headwater `. */
  readonly usage: readonly string[];
  /** What the command does, in a few sentences. */
  readonly description: string;
  /** Every option of the parser (but `help`), in the order shown. */
  readonly flags: Readonly<Record<string, FlagHelp>>;
  /** Command lines that work as written against the demo (`headwater demo`), each without `headwater `. */
  readonly examples: readonly string[];
}

/**
 * Declares a command's help for the parser options `options`: `flags` must describe each of them (but `help`).
 *
 * @example
 * const help = defineHelp({ url: { type: 'string' } }, {
 *   name: 'demo', usage: ['demo [--url URL]'], description: 'Loads the demo.',
 *   flags: { url: { value: 'URL', default: 'http://127.0.0.1:5000', text: 'the server' } },
 *   examples: ['demo'],
 * });
 */
export function defineHelp<O extends Options>(
  options: O,
  help: Omit<CommandHelp, 'flags'> & {
    // Every option the type names; options built at run time (serve's Kafka settings) are checked by cli-help.test.ts.
    readonly flags: { readonly [K in Exclude<keyof O, 'help'>]: FlagHelp } & Readonly<
      Record<string, FlagHelp>
    >;
  },
): CommandHelp & { readonly options: O } {
  return { ...help, options };
}

/** The flags every client command (those that talk to a server over HTTP) takes. */
export const clientFlags = {
  url: {
    value: 'URL',
    env: 'HEADWATER_URL',
    default: 'http://127.0.0.1:5000',
    text: 'the Headwater server (HEADWATER_API_KEY, when set, is sent as its credential)',
  },
  json: { text: "print the server's JSON answer instead of tables" },
} as const satisfies Record<string, FlagHelp>;

/** The store flags of the commands that open a store themselves (keys, audit, backup, restore). */
export const storeFlags = {
  'data-dir': {
    value: 'DIR',
    env: 'HEADWATER_DATA_DIR',
    default: './.headwater',
    text: 'the embedded store to open',
  },
  'database-url': {
    value: 'URL',
    env: 'DATABASE_URL',
    text: 'a PostgreSQL database to open instead of the embedded store',
  },
} as const satisfies Record<string, FlagHelp>;

/** Lines of at most `width` characters (a longer word stands alone), the later ones indented by `indent`. */
function wrap(text: string, indent: number, width = 110): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.map((text, index) => (index === 0 ? text : `${' '.repeat(indent)}${text}`));
}

/** The help text: usage, description, flags with their defaults, examples. */
export function formatHelp(help: CommandHelp): string {
  // A synopsis line that starts with a space or a parenthesis continues the one before it.
  const lines = help.usage.map(
    (line, index) =>
      `${index === 0 ? 'Usage: ' : '       '}${/^[\s(]/.test(line) ? '          ' : 'headwater '}${line}`,
  );
  lines.push('', help.description, '', 'Flags:');
  const entries = [...Object.entries(help.flags), ['help', { text: 'this help' } as FlagHelp] as const];
  const names = entries.map(([flag, { value }]) => `  --${flag}${value === undefined ? '' : ` ${value}`}`);
  const width = Math.min(Math.max(...names.map((name) => name.length)) + 2, 34);
  for (const [index, [, flag]] of entries.entries()) {
    const name = names[index]!;
    const extra = [flag.env, flag.default === undefined ? undefined : `default ${flag.default}`].filter(
      Boolean,
    );
    const text = wrap(`${flag.text}${extra.length > 0 ? ` (${extra.join('; ')})` : ''}`, width).join('\n');
    lines.push(
      name.length + 2 > width ? `${name}\n${' '.repeat(width)}${text}` : `${name.padEnd(width)}${text}`,
    );
  }
  lines.push('', help.examples.length === 1 ? 'Example:' : 'Examples:');
  for (const example of help.examples) lines.push(`  headwater ${example}`);
  return `${lines.join('\n')}\n`;
}
