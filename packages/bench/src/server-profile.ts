import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { formatProfileSummary, summarizeCpuProfileWindows, summarizeCpuProfile } from './cpu-profile.js';
import type { TimeWindow } from './stats.js';

/** A measurement's name and when it ran. */
export interface NamedWindow {
  readonly name: string;
  readonly window: TimeWindow;
}

const WINDOWS_FILE = 'windows.json';
const SUMMARY_FILE = 'summary.txt';

/**
 * Summarises the profiles of one server run, written by `node --cpu-prof` into `dir` (one file per thread: the main
 * thread, and the embedded store's worker when there is one): each measurement's window separately, so start-up
 * and the other measurements do not blur it. Saves the windows and the text beside the profiles.
 */
export async function summarizeServerProfiles(
  dir: string,
  title: string,
  windows: readonly NamedWindow[],
): Promise<string> {
  await writeFile(path.join(dir, WINDOWS_FILE), `${JSON.stringify(windows)}\n`);
  const text = await summarizeDir(dir, title, windows, 15);
  await writeFile(path.join(dir, SUMMARY_FILE), `${text}\n`);
  return `CPU profiles in ${dir}\n${text}`;
}

/**
 * Summarises again what an earlier run left: a folder from `--profile` (per measurement, with more functions
 * listed), or a single `.cpuprofile` of any origin (whole).
 */
export async function resummarize(target: string): Promise<string> {
  if ((await stat(target)).isDirectory()) {
    const windows = JSON.parse(await readFile(path.join(target, WINDOWS_FILE), 'utf8')) as NamedWindow[];
    return summarizeDir(target, path.basename(target), windows, 30);
  }
  return formatProfileSummary(target, await summarizeCpuProfile(target, undefined, 30));
}

async function summarizeDir(
  dir: string,
  title: string,
  windows: readonly NamedWindow[],
  top: number,
): Promise<string> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.cpuprofile')).sort(byThread);
  if (files.length === 0) throw new Error(`No .cpuprofile in ${dir}: did the server exit cleanly?`);
  const sections: string[] = [];
  for (const file of files) {
    const summaries = await summarizeCpuProfileWindows(
      path.join(dir, file),
      windows.map((entry) => entry.window),
      top,
    );
    summaries.forEach((summary, index) => {
      // A thread that did nothing in a window (the store's worker during lineage queries that hit no SQL) is noise.
      if (summary.busyMs < 1) return;
      sections.push(formatProfileSummary(`${title}, ${threadOf(file)}, ${windows[index]!.name}`, summary));
    });
  }
  return sections.join('\n\n');
}

/** Node names profiles CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile; thread 0 is the main thread. */
function threadOf(file: string): string {
  const threadId = file.split('.')[4];
  return threadId === '0' ? 'main thread' : `worker thread ${threadId ?? '?'}`;
}

function byThread(a: string, b: string): number {
  return Number(a.split('.')[4] ?? 0) - Number(b.split('.')[4] ?? 0);
}
