import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { aliasHelp } from '../src/cli/alias.js';
import { backupHelp } from '../src/cli/backup.js';
import { classifiedHelp } from '../src/cli/classified.js';
import { declaredHelp } from '../src/cli/declared.js';
import { demoHelp } from '../src/cli/demo.js';
import { diffHelp } from '../src/cli/diff.js';
import type { CommandHelp, Options } from '../src/cli/help.js';
import { impactHelp } from '../src/cli/impact.js';
import { alertsHelp, incidentsHelp } from '../src/cli/incidents.js';
import { ingestHelp } from '../src/cli/ingest.js';
import { auditHelp, keysHelp } from '../src/cli/keys.js';
import { lineageHelp } from '../src/cli/lineage.js';
import { MINIMUM_NODE_VERSION, nodeVersionProblem } from '../src/cli/node-version.js';
import { proxyHelp } from '../src/cli/proxy.js';
import { restoreHelp } from '../src/cli/restore.js';
import { rootCauseHelp } from '../src/cli/root-cause.js';
import { schemaDiffHelp } from '../src/cli/schema-diff.js';
import { serveHelp } from '../src/cli/serve.js';
import { runCli } from './helpers/cli.js';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = path.resolve(serverDir, '..', '..');
const bin = path.join(serverDir, 'bin', 'headwater.js');

const helps: (CommandHelp & { options: Options })[] = [
  serveHelp,
  proxyHelp,
  demoHelp,
  ingestHelp,
  lineageHelp,
  rootCauseHelp,
  impactHelp,
  classifiedHelp,
  schemaDiffHelp,
  diffHelp,
  declaredHelp,
  aliasHelp,
  incidentsHelp,
  alertsHelp,
  keysHelp,
  auditHelp,
  backupHelp,
  restoreHelp,
];

describe('the help of every command', () => {
  it('describes exactly the flags its parser takes', () => {
    for (const help of helps) {
      const parsed = Object.keys(help.options).filter((flag) => flag !== 'help');
      expect({ command: help.name, flags: Object.keys(help.flags).sort() }).toEqual({
        command: help.name,
        flags: parsed.sort(),
      });
    }
  });

  it.each(helps.map((help) => [help.name, help] as const))(
    '`headwater %s --help` (and `headwater help` of it) prints usage, every flag and an example, and exits 0',
    async (name, help) => {
      const flag = await runCli([name, '--help']);
      expect({ code: flag.code, stderr: flag.stderr }).toEqual({ code: 0, stderr: '' });
      expect(flag.stdout.startsWith(`Usage: headwater ${name} `)).toBe(true);
      for (const option of Object.keys(help.options)) expect(flag.stdout).toContain(`  --${option}`);
      expect(flag.stdout).toMatch(/\nExamples?:\n {2}headwater /);
      const defaults = Object.values(help.flags).filter((f) => f.default !== undefined);
      for (const f of defaults) expect(flag.stdout.replace(/\s+/g, ' ')).toContain(`default ${f.default}`);
      expect(await runCli(['help', name])).toEqual(flag);
      // -h and a --help among other arguments (a command that would otherwise start a server or need one).
      expect((await runCli([name, 'some-argument', '-h'])).stdout).toBe(flag.stdout);
    },
  );

  it('`headwater help` prints the usage of every command and exits 0; an unknown command exits 2', async () => {
    const help = await runCli(['help']);
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
    for (const { name } of helps) expect(help.stdout).toContain(`  headwater ${name} `);
    expect(help.stdout).toContain('headwater help [COMMAND]');
    const unknown = await runCli(['help', 'serv']);
    expect({ code: unknown.code, stdout: unknown.stdout }).toEqual({ code: 2, stdout: '' });
    expect(unknown.stderr).toMatch(/^headwater: unknown command "serv"\./);
    expect((await runCli(['serv'])).code).toBe(2);
    // Without a command: the usage, and exit 1, as before.
    expect((await runCli([])).code).toBe(1);
  });

  it('keeps usage errors at exit 2 with the parser message', async () => {
    for (const command of ['serve', 'proxy', 'keys create', 'audit', 'backup', 'restore']) {
      const bogus = await runCli([...command.split(' '), '--bogus']);
      const name = command.split(' ')[0];
      expect({ command, code: bogus.code, stderr: bogus.stderr }).toEqual({
        command,
        code: 2,
        stderr: expect.stringMatching(
          new RegExp(
            `^headwater: ${name}: Unknown option '--bogus'.* See \`headwater ${name} --help\`\\.\n$`,
          ),
        ),
      });
    }
    const demo = await runCli(['demo', '--bogus']);
    expect(demo.code).toBe(2);
    expect(demo.stderr).toMatch(/^headwater demo: Unknown option '--bogus'/);
  });
});

describe('the headwater bin', () => {
  it('is a file in the repository (not in dist/), so a fresh `npm install` links it', () => {
    const manifest = JSON.parse(readFileSync(path.join(serverDir, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      files: string[];
    };
    expect(manifest.bin).toEqual({ headwater: './bin/headwater.js' });
    expect(manifest.files).toContain('bin');
    const tracked = execFileSync('git', ['ls-files', '--error-unmatch', 'packages/server/bin/headwater.js'], {
      cwd: repoDir,
      encoding: 'utf8',
    });
    expect(tracked.trim()).toBe('packages/server/bin/headwater.js');
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(bin).mode & 0o111).not.toBe(0);
  });

  it('runs the built CLI, and says how to build it when it is not built', async () => {
    const built = await runCli(['help', 'demo'], { entry: bin });
    expect({ code: built.code, first: built.stdout.split('\n')[0] }).toEqual({
      code: 0,
      first: 'Usage: headwater demo [--url http://127.0.0.1:5000] [--end-date 2025-03-14]',
    });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-bin-'));
    try {
      mkdirSync(path.join(dir, 'packages', 'server', 'bin'), { recursive: true });
      const copy = path.join(dir, 'packages', 'server', 'bin', 'headwater.js');
      copyFileSync(bin, copy);
      const unbuilt = await runCli(['help'], { entry: copy });
      expect(unbuilt.code).toBe(1);
      expect(unbuilt.stderr).toContain('headwater: the CLI is not built yet');
      expect(unbuilt.stderr).toContain('Run `npm run build`');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the Node.js version', () => {
  it("is declared as the Kafka client's minimum in every package.json that declares one", () => {
    const kafka = JSON.parse(
      readFileSync(path.join(repoDir, 'node_modules', '@platformatic', 'kafka', 'package.json'), 'utf8'),
    ) as { engines: { node: string } };
    // ">= 20.19.4 || >= 22.18.0 || >= 24.6.0": the lowest bound is the minimum.
    const bounds = kafka.engines.node.split('||').map((part) => part.replace(/^\s*>=\s*/, '').trim());
    const lowest = bounds.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))[0];
    expect(lowest).toBe(MINIMUM_NODE_VERSION);
    const manifests = [
      'package.json',
      ...readdirSync(path.join(repoDir, 'packages')).map((p) => path.join('packages', p, 'package.json')),
    ].filter((file) => existsSync(path.join(repoDir, file)));
    const declared = manifests.flatMap((file) => {
      const engines = (
        JSON.parse(readFileSync(path.join(repoDir, file), 'utf8')) as { engines?: { node?: string } }
      ).engines;
      return engines?.node === undefined ? [] : [[file, engines.node]];
    });
    expect(declared.length).toBeGreaterThanOrEqual(3);
    expect(declared).toEqual(declared.map(([file]) => [file, `>=${MINIMUM_NODE_VERSION}`]));
  });

  it('stops serve and proxy on an older Node.js with what to do', () => {
    expect(nodeVersionProblem('serve', '20.11.1')).toMatch(
      /^headwater serve needs Node\.js 20\.19\.4 or newer \(the Kafka client it loads, @platformatic\/kafka, does\); this is Node\.js 20\.11\.1 .*Install a newer Node\.js/,
    );
    expect(nodeVersionProblem('proxy', 'v20.19.3')).toContain('this is Node.js 20.19.3');
    expect(nodeVersionProblem('serve', '18.20.0')).toBeDefined();
    for (const fine of ['20.19.4', '20.20.2', '22.0.0', '24.6.0', process.versions.node])
      expect({ fine, problem: nodeVersionProblem('serve', fine) }).toEqual({ fine, problem: undefined });
  });
});
