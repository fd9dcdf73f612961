/**
 * Marquez's own clients against a real `headwater serve`: every call that passes against Marquez 0.51.1 itself
 * (the reference fixtures in marquez-clients/, with how they were made) must pass against Headwater. The
 * clients come from their registries through marquez-clients/ci/setup.sh (cached); without them the suite skips
 * with a message, and with CI=true it fails instead. The one exception is a client its registry does not serve
 * (setup.sh records Maven Central's answer): it is skipped with that answer, in CI too, since no setup can help.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawnServer, type ChildServer } from '../helpers/child-server.js';

const here = path.join(path.dirname(fileURLToPath(import.meta.url)), 'marquez-clients');
const SETUP = 'packages/server/test/interop/marquez-clients/ci/setup.sh';

/** One call of a client's calls script, as it prints it. */
interface CallResult {
  readonly call: string;
  readonly pass: boolean;
  readonly status?: number | null;
  readonly error?: string | null;
}

/** What a reference fixture holds: the calls against Marquez 0.51.1, and how that was done. */
interface Reference {
  readonly client: string;
  readonly made: string;
  readonly calls: readonly CallResult[];
}

/**
 * Calls that pass against Marquez and wait for another part of issue 25 to pass here: shown as todos, not
 * required, until that part lands (then remove the entry: the call is required from then on).
 */
const PENDING: Readonly<Record<string, string>> = {};

const cache =
  process.env.HEADWATER_MARQUEZ_CLIENTS_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'headwater-marquez-clients');

/** A client, how to run its calls script against a server, and whether it is here. */
interface Client {
  readonly name: string;
  readonly reference: Reference;
  /** Command and arguments that run the calls against `url`, with names kept apart by `suffix`. */
  readonly command: (url: string, suffix: string) => [string, string[]];
  /** Undefined when the client is here; else why not, and whether CI must fail for it. */
  readonly missing: { readonly message: string; readonly failInCi: boolean } | undefined;
}

const reference = (file: string) => JSON.parse(readFileSync(path.join(here, file), 'utf8')) as Reference;
const python = path.join(cache, 'python-venv', 'bin', 'python');
const javaLib = path.join(cache, 'java', 'lib');
const javaUnavailable = path.join(cache, 'java', 'unavailable');

const clients: Client[] = [
  {
    name: 'marquez-python 0.50.0',
    reference: reference('marquez-python.reference.json'),
    command: (url, suffix) => [python, [path.join(here, 'python_calls.py'), url, suffix]],
    missing:
      existsSync(path.join(cache, 'python-venv', '.complete')) && existsSync(python)
        ? undefined
        : { message: `marquez-python is not provisioned (${python}); run ${SETUP}`, failInCi: true },
  },
  {
    name: 'marquez-java 0.51.1',
    reference: reference('marquez-java.reference.json'),
    // Java runs the single source file directly (no build step), with the client's jars on the class path.
    command: (url, suffix) => [
      'java',
      ['-cp', path.join(javaLib, '*'), path.join(here, 'JavaCalls.java'), url, suffix],
    ],
    missing: existsSync(path.join(cache, 'java', '.complete'))
      ? undefined
      : existsSync(javaUnavailable)
        ? {
            message: `Maven Central does not serve marquez-java 0.51.1 here (${readFileSync(javaUnavailable, 'utf8').trim()})`,
            failInCi: false,
          }
        : { message: `marquez-java is not provisioned (${javaLib}); run ${SETUP}`, failInCi: true },
  },
];

for (const { name, missing } of clients) {
  if (!missing) continue;
  if (missing.failInCi && process.env.CI === 'true') throw new Error(`CI=true but ${missing.message}.`);
  console.warn(`skipping the ${name} interop test: ${missing.message}.`);
}

describe.each(clients)('$name against a Headwater server in a child process', (client) => {
  let server: ChildServer | undefined;
  let dataDir: string;
  let results: CallResult[] = [];

  beforeAll(async () => {
    if (client.missing) return;
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'headwater-marquez-clients-'));
    await cp(inject('embeddedTemplateDir'), dataDir, { recursive: true });
    server = await spawnServer(['--data-dir', dataDir, '--log-level', 'warn']);
    const [command, args] = client.command(server.url, String(process.pid));
    const { stdout } = await promisify(execFile)(command, args, {
      timeout: 150_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, PYTHONWARNINGS: 'ignore' },
    });
    // Only the result lines: a client may log to stdout too (the Java client's HTTP library does).
    results = stdout
      .split('\n')
      .filter((line) => line.startsWith('{"call"'))
      .map((line) => JSON.parse(line) as CallResult);
    console.info(
      `${client.name}: ${results.filter((result) => result.pass).length} of ${results.length} calls pass ` +
        `against Headwater, ${client.reference.calls.filter((call) => call.pass).length} against Marquez 0.51.1`,
    );
  }, 240_000);

  afterAll(async () => {
    if (server) {
      server.process.kill('SIGTERM');
      await server.exited;
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it.skipIf(client.missing !== undefined)(
    'makes the calls the reference was made with, in the same order',
    () => {
      expect(results.map((result) => result.call)).toEqual(client.reference.calls.map((call) => call.call));
    },
  );

  for (const call of client.reference.calls.filter((entry) => entry.pass)) {
    const pending = PENDING[`${client.name}: ${call.call}`];
    if (pending) {
      it.todo(`[pending: ${pending}] ${call.call}`);
      continue;
    }
    it.skipIf(client.missing !== undefined)(`${call.call} passes, as against Marquez 0.51.1`, () => {
      const result = results.find((entry) => entry.call === call.call);
      // The whole result is compared, so a failure shows what the server answered.
      expect(result).toEqual({ call: call.call, pass: true, status: null, error: null });
    });
  }
});
