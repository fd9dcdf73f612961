/**
 * The README's commands run as written. Every fenced block of README.md names its language; each `sh` block runs
 * in bash (`set -euo pipefail`), in README order, against a server started the way `npm start` starts it, with the
 * clone's `node_modules/.bin` on PATH (what `npm install` puts there, so `headwater` and `npx headwater` are the
 * command a reader runs). The one change to a block's text: `http://127.0.0.1:5000` becomes the test server's URL,
 * and HEADWATER_URL names it too, since the port may be taken on the machine running the tests.
 *
 * A block that cannot run here is marked on the line before it, and only so:
 *   <!-- readme-test: skip setup -->           `npm install`, `npm start`: what this test stands in for
 *   <!-- readme-test: skip suite -->           runs a test suite (this one among them)
 *   <!-- readme-test: skip needs-postgres -->  names PostgreSQL servers or hosts of its own
 *   <!-- readme-test: skip needs-kafka -->     names Kafka brokers
 *   <!-- readme-test: exit N -->               runs, and must exit N (a check meant to fail, such as --fail-on)
 *   <!-- readme-test: serves -->               runs; its last command starts a server, which must say it listens,
 *                                              and exit 0 on SIGTERM (HEADWATER_PORT=0: any free port)
 * Any other marker, a marker on a block that is not `sh`, or a fence without a language fails the test, and so
 * does a run block that exits otherwise than expected or prints nothing. Skipped blocks are listed as skipped
 * tests, with their reason and first line.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const readme = readFileSync(path.join(repoDir, 'README.md'), 'utf8');

const SKIP_REASONS = ['setup', 'suite', 'needs-postgres', 'needs-kafka'] as const;
const LANGUAGES = ['sh', 'yaml', 'json', 'text'];

type Marker =
  | { kind: 'run'; exit: number }
  | { kind: 'serves' }
  | { kind: 'skip'; reason: (typeof SKIP_REASONS)[number] };

interface Block {
  readonly line: number;
  readonly language: string;
  readonly text: string;
  readonly marker: Marker | { kind: 'invalid'; text: string } | undefined;
}

/** The fenced blocks of a Markdown text, with the marker on the line before each. */
function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    const before = lines[start - 1] ?? '';
    const comment = /^<!--\s*readme-test:\s*(.*?)\s*-->$/.exec(before);
    let marker: Block['marker'];
    if (comment) {
      const words = comment[1]!.split(/\s+/);
      const reason = words[1] as (typeof SKIP_REASONS)[number];
      if (words[0] === 'skip' && words.length === 2 && SKIP_REASONS.includes(reason))
        marker = { kind: 'skip', reason };
      else if (words[0] === 'exit' && words.length === 2 && /^\d+$/.test(words[1]!))
        marker = { kind: 'run', exit: Number(words[1]) };
      else if (words[0] === 'serves' && words.length === 1) marker = { kind: 'serves' };
      else marker = { kind: 'invalid', text: before };
    } else if (before.includes('readme-test')) marker = { kind: 'invalid', text: before };
    blocks.push({
      line: start + 1,
      language: open[1]!.trim(),
      text: lines.slice(start + 1, end).join('\n'),
      marker,
    });
    i = end;
  }
  return blocks;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const blocks = fencedBlocks(readme);
const shBlocks = blocks.filter((block) => block.language === 'sh');
const runnable = shBlocks.filter((block) => block.marker?.kind !== 'skip');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('the README', () => {
  it('marks only sh blocks, with known markers, and names every fence', () => {
    expect(blocks.filter((block) => !LANGUAGES.includes(block.language)).map((b) => b.line)).toEqual([]);
    const invalid = blocks.filter((block) => block.marker?.kind === 'invalid');
    expect(
      invalid.map(
        (block) =>
          `README.md:${block.line - 1}: ${String(block.marker && 'text' in block.marker ? block.marker.text : '')}`,
      ),
    ).toEqual([]);
    const markedOther = blocks.filter((block) => block.language !== 'sh' && block.marker !== undefined);
    expect(markedOther.map((block) => block.line)).toEqual([]);
    // The walk-through and the quick start are what a newcomer runs first: they must stay runnable.
    expect(runnable.length).toBeGreaterThanOrEqual(7);
    expect(runnable.map((block) => block.text).join('\n')).toMatch(/^npx headwater demo\b/m);
  });

  it('links only to headings it has', () => {
    const headings = new Set(
      readme
        .split('\n')
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => slug(line.replace(/^#+ /, ''))),
    );
    const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!);
    expect(links.length).toBeGreaterThan(20);
    expect(links.filter((anchor) => !headings.has(anchor))).toEqual([]);
  });
});

describe('every sh block of the README, run as written against a server started as `npm start` does', () => {
  const workDir = path.join(repoDir, 'test-results', `readme-${randomUUID()}`);
  let server: ReturnType<typeof spawn> | undefined;
  let url = '';
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    const bin = path.join(repoDir, 'node_modules', '.bin', 'headwater');
    expect(existsSync(bin), `${bin} is missing: run \`npm install\``).toBe(true);
    expect(existsSync(path.join(repoDir, 'packages', 'server', 'dist', 'cli', 'main.js'))).toBe(true);
    // `npm start` builds, then runs this command; the build is the suite's own (`npm test` runs tsc -b first).
    const start = (
      JSON.parse(readFileSync(path.join(repoDir, 'package.json'), 'utf8')) as {
        scripts: { start: string };
      }
    ).scripts.start;
    const command = 'node packages/server/bin/headwater.js serve';
    expect(start.endsWith(`&& ${command}`)).toBe(true);
    await mkdir(workDir, { recursive: true });
    const { DATABASE_URL: _database, ...rest } = process.env;
    // The blocks' relative paths land in workDir, inside the clone, so that npx finds the clone's bin there; offline,
    // so that a bin missing from it fails instead of being fetched from the registry.
    env = {
      ...rest,
      PATH: `${path.join(repoDir, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
      HEADWATER_PORT: '0',
      npm_config_offline: 'true',
      npm_config_yes: 'false',
      npm_config_update_notifier: 'false',
    };
    server = spawn(
      process.execPath,
      [
        path.join(repoDir, 'packages', 'server', 'bin', 'headwater.js'),
        'serve',
        '--port',
        '0',
        '--data-dir',
        path.join(workDir, '.headwater'),
      ],
      { cwd: repoDir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    url = await listening(server, 60_000);
    env.HEADWATER_URL = url;
  }, 120_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await rm(workDir, { recursive: true, force: true });
  });

  for (const block of shBlocks) {
    const first = block.text.split('\n')[0]!;
    const marker = block.marker as Marker | undefined;
    if (marker?.kind === 'skip') {
      it.skip(`README.md:${block.line} (${marker.reason}): ${first}`, () => undefined);
      continue;
    }
    it(`README.md:${block.line}: ${first}`, { timeout: 120_000 }, async () => {
      const script = block.text.replaceAll('http://127.0.0.1:5000', url);
      if (marker?.kind === 'serves') {
        // The server replaces the shell (exec), so that SIGTERM reaches it alone and its exit code is the block's.
        const lines = script.trimEnd().split('\n');
        lines.push(`exec ${lines.pop()!}`);
        const child = spawn('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
          cwd: workDir,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
        await listening(child, 60_000);
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        return;
      }
      const ran = await runBash(script, workDir, env);
      expect({ code: ran.code, stderr: ran.stderr }).toEqual({
        code: marker?.kind === 'run' ? marker.exit : 0,
        stderr: expect.not.stringMatching(/command not found|ENOENT/),
      });
      expect(ran.stdout.trim()).not.toBe('');
    });
  }
});

function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Waits for a `headwater serve` child to say where it listens; its URL. Fails when it exits first or is slow. */
function listening(child: ReturnType<typeof spawn>, timeoutMs: number): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "headwater listening on" within ${timeoutMs} ms; output:\n${output}`)),
      timeoutMs,
    );
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /headwater listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on('data', seen);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before listening; output:\n${output}`));
    });
  });
}
