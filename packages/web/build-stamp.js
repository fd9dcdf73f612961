// @ts-check
/**
 * Whether the built app (dist/) is the build of the sources as they are now, so that `npm start` builds it only when
 * it is not. The build writes dist/.build-stamp.json: a SHA-256 of every input (each file of src/ and public/,
 * index.html, vite.config.ts, this file, the package's package.json, the repository's package-lock.json for the
 * dependencies, and any file outside the package that the build read) and of every output. The app is fresh when
 * all of them hash the same again and no file came or went in src/ or public/.
 *
 * Content, not modification times: a checkout, a copy with `cp -p`, an unpacked archive or a clock change can give a
 * changed source an older mtime than the build, and a stale app would then be served without a word.
 *
 * Run as a script: `node packages/web/build-stamp.js --if-stale` builds only when needed; without the flag it says
 * whether the build is fresh (exit 0) or not (exit 1), and why.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const STAMP_FILE = '.build-stamp.json';

/** The inputs that are not modules of the bundle, relative to the package folder. */
const FIXED_INPUTS = [
  'index.html',
  'vite.config.ts',
  'vite.config.js',
  'vite.config.mjs',
  'build-stamp.js',
  'package.json',
];
/** Folders whose every file is an input (public/ is copied whole; a new file in src/ may be imported). */
const INPUT_DIRS = ['src', 'public'];

/** @param {string} file */
const hashFile = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * Every file below `dir`, relative to `base`, sorted.
 * @param {string} base
 * @param {string} dir
 * @returns {string[]}
 */
function filesBelow(base, dir) {
  const absolute = path.join(base, dir);
  if (!existsSync(absolute)) return [];
  /** @type {string[]} */
  const out = [];
  for (const entry of readdirSync(absolute, { withFileTypes: true })) {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesBelow(base, relative));
    else if (entry.isFile()) out.push(relative);
  }
  return out.sort();
}

/**
 * The repository's lockfile (what the dependencies are), found upwards from the package.
 * @param {string} root
 */
function lockfileOf(root) {
  for (let dir = root; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package-lock.json');
    if (existsSync(file)) return file;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The input files of a build of the package at `root`, as paths relative to it: the package's own inputs, the
 * lockfile, and `extra` (files outside the package that a build read).
 * @param {string} root
 * @param {readonly string[]} extra
 */
function inputsOf(root, extra) {
  const own = [
    ...FIXED_INPUTS.filter((file) => existsSync(path.join(root, file))),
    ...INPUT_DIRS.flatMap((d) => filesBelow(root, d)),
  ];
  const lockfile = lockfileOf(root);
  const outside = [...(lockfile ? [path.relative(root, lockfile)] : []), ...extra];
  return [...new Set([...own, ...outside])].sort();
}

/**
 * @typedef {{ inputs: Record<string, string>, outputs: Record<string, string>, outside: string[] }} Stamp
 */

/**
 * Writes the stamp of a build just made.
 * @param {string} root the package folder
 * @param {string} outDir the build's output folder
 * @param {Iterable<string>} moduleFiles absolute paths of the files the build read as modules
 */
export function writeStamp(root, outDir, moduleFiles) {
  const outside = [...moduleFiles]
    .filter(
      (file) => path.isAbsolute(file) && !file.split(path.sep).includes('node_modules') && existsSync(file),
    )
    .map((file) => path.relative(root, file))
    .filter((file) => file.startsWith('..'))
    .sort();
  const inputs = Object.fromEntries(
    inputsOf(root, outside).map((file) => [file, hashFile(path.join(root, file))]),
  );
  const outputs = Object.fromEntries(
    filesBelow(outDir, '.')
      .filter((file) => file !== STAMP_FILE)
      .map((file) => [file, hashFile(path.join(outDir, file))]),
  );
  /** @type {Stamp} */
  const stamp = { inputs, outputs, outside };
  writeFileSync(path.join(outDir, STAMP_FILE), `${JSON.stringify(stamp, null, 1)}\n`);
}

/**
 * Whether the build in `outDir` is the build of the inputs as they are now; `reason` says why not.
 * @param {string} root the package folder
 * @param {string} [outDir]
 * @returns {{ fresh: true } | { fresh: false, reason: string }}
 */
export function buildState(root, outDir = path.join(root, 'dist')) {
  const stampFile = path.join(outDir, STAMP_FILE);
  if (!existsSync(stampFile)) return { fresh: false, reason: `${path.relative(root, stampFile)} is missing` };
  /** @type {Stamp} */
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return { fresh: false, reason: `${stampFile} is not JSON` };
  }
  const now = inputsOf(root, stamp.outside ?? []);
  const before = Object.keys(stamp.inputs ?? {});
  const added = now.filter((file) => !(file in stamp.inputs));
  if (added.length > 0) return { fresh: false, reason: `${added[0]} is new` };
  for (const file of before) {
    const absolute = path.join(root, file);
    if (!existsSync(absolute) || !statSync(absolute).isFile())
      return { fresh: false, reason: `${file} is gone` };
    if (hashFile(absolute) !== stamp.inputs[file]) return { fresh: false, reason: `${file} changed` };
  }
  for (const [file, hash] of Object.entries(stamp.outputs ?? {})) {
    const absolute = path.join(outDir, file);
    if (!existsSync(absolute) || hashFile(absolute) !== hash)
      return { fresh: false, reason: `the built ${file} is missing or changed` };
  }
  return { fresh: true };
}

/**
 * The vite plugins that write the stamp once the build is written: `plugin` for the app's build, `workerPlugin` for
 * the worker's (`worker.plugins`), which only counts the worker's modules.
 * @param {string} root the package folder
 * @returns {{ plugin: import('vite').Plugin, workerPlugin: import('vite').Plugin }}
 */
export function buildStampPlugins(root) {
  /** @type {Set<string>} */
  const modules = new Set();
  /** @type {string | undefined} */
  let outDir;
  /** @type {import('vite').Plugin['buildEnd']} */
  const collect = function () {
    for (const id of this.getModuleIds()) modules.add(id.split('?')[0] ?? id);
  };
  return {
    plugin: {
      name: 'headwater-build-stamp',
      apply: 'build',
      configResolved(config) {
        outDir = path.resolve(config.root, config.build.outDir);
      },
      buildEnd: collect,
      closeBundle() {
        if (outDir !== undefined) writeStamp(root, outDir, modules);
      },
    },
    workerPlugin: { name: 'headwater-build-stamp-worker', apply: 'build', buildEnd: collect },
  };
}

/**
 * Builds the app at `root` with vite unless its build is fresh. Returns what it did.
 * @param {string} root
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {'fresh' | 'built'}
 */
export function buildIfStale(root, { log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const state = buildState(root);
  if (state.fresh) {
    log('web app: dist/ is the build of the current sources; not rebuilt');
    return 'fresh';
  }
  log(`web app: building (${state.reason})`);
  const vite = path.join(
    path.dirname(createRequire(import.meta.url).resolve('vite/package.json')),
    'bin',
    'vite.js',
  );
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0)
    throw new Error(`vite build in ${root} failed (exit ${result.status ?? result.signal})`);
  const after = buildState(root);
  if (!after.fresh) throw new Error(`vite build in ${root} did not leave a fresh build: ${after.reason}`);
  return 'built';
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.dirname(fileURLToPath(import.meta.url));
  if (process.argv.includes('--if-stale')) {
    try {
      buildIfStale(root);
    } catch (error) {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  } else {
    const state = buildState(root);
    process.stdout.write(state.fresh ? 'fresh\n' : `stale: ${state.reason}\n`);
    process.exitCode = state.fresh ? 0 : 1;
  }
}
