/**
 * Reading settings the way every command does: a flag, else its environment variable (an empty variable counts
 * as unset), with the value checked and any error naming the flag or variable it came from.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { HeadwaterError } from './errors.js';

/** Flags as parsed from the command line (all strings or booleans, unvalidated). */
export type ConfigFlags = Readonly<Record<string, string | boolean | string[] | undefined>>;

/** Reads one setting: its flag, else its environment variable (an empty variable counts as unset). */
export interface ConfigReader {
  readonly pick: (flag: string, variable: string) => { value: string | undefined; source: string };
  /** A whole number within [min, max], or `fallback` when unset; throws naming the flag or variable. */
  readonly integer: (flag: string, variable: string, fallback: number, min: number, max: number) => number;
  /** A duration of at least 1 s ({@link parseDurationMs}) in ms, or `fallbackMs` when unset. */
  readonly duration: (flag: string, variable: string, fallbackMs: number) => number;
}

/** The readers of flags-then-environment every part of the configuration uses. */
export function configReader(flags: ConfigFlags, env: NodeJS.ProcessEnv): ConfigReader {
  const pick = (flag: string, variable: string): { value: string | undefined; source: string } => {
    const fromFlag = flags[flag];
    if (typeof fromFlag === 'string') return { value: fromFlag, source: `--${flag}` };
    const fromEnv = env[variable];
    return { value: fromEnv === '' ? undefined : fromEnv, source: variable };
  };
  const integer = (flag: string, variable: string, fallback: number, min: number, max: number): number => {
    const { value, source } = pick(flag, variable);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      throw new HeadwaterError(
        'INVALID_CONFIG',
        `${source} must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}.`,
      );
    }
    return parsed;
  };
  const duration = (flag: string, variable: string, fallbackMs: number): number => {
    const { value, source } = pick(flag, variable);
    if (value === undefined) return fallbackMs;
    const ms = parseDurationMs(value);
    if (ms === undefined || ms < 1000) {
      throw new HeadwaterError(
        'INVALID_CONFIG',
        `${source} must be a duration of at least 1s, such as 90m, 6h or 2d (a bare number is seconds); ` +
          `got ${JSON.stringify(value)}.`,
      );
    }
    return ms;
  };
  return { pick, integer, duration };
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** One or more numbers with a unit, as in `90s`, `10m`, `1h30m`, `2d`, `250ms`. */
export const DURATION_PATTERN = '^(?:\\d+(?:\\.\\d+)?(?:ms|s|m|h|d))+$';
const DURATION = new RegExp(DURATION_PATTERN);

/**
 * Milliseconds of a duration such as `90s`, `10m`, `1h30m`, `2d` or `250ms`; with `bareSeconds`, a bare number
 * is seconds too (the flags' and variables' old form). Undefined when the text is none of these.
 * @example parseDurationMs('1h30m') // 5400000
 */
export function parseDurationMs(text: string, { bareSeconds = true } = {}): number | undefined {
  const trimmed = text.trim();
  if (bareSeconds && /^\d+(?:\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  if (!DURATION.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g))
    total += Number(amount) * DURATION_UNITS_MS[unit!]!;
  return Math.round(total);
}

/** The items of a comma-separated setting, trimmed, empty ones left out. */
export const commaList = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);

/**
 * The parsed content of a YAML (or JSON, which is YAML) config file.
 * @param what What the file is, for the error, e.g. `the forwarding config`.
 * @throws HeadwaterError INVALID_CONFIG naming the file when it cannot be read or parsed.
 */
export function readConfigFile(file: string, what: string): unknown {
  try {
    return parseYaml(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    throw new HeadwaterError('INVALID_CONFIG', `cannot read ${what} ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
