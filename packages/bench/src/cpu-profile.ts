import { readFile } from 'node:fs/promises';
import type { TimeWindow } from './stats.js';

/** The parts of a V8 `.cpuprofile` (as written by `node --cpu-prof`) that the summary reads. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
    readonly children?: readonly number[];
  }[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Time attributed to one function or area. */
export interface ProfileEntry {
  readonly name: string;
  readonly ms: number;
  /** Share of busy (non-idle) time, 0 to 100. */
  readonly pct: number;
}

/** Where a server process spent its CPU. */
export interface ProfileSummary {
  readonly sampledMs: number;
  readonly busyMs: number;
  /** Self time by area: a Headwater folder (ingest, store, ...), an npm package, node internals, GC. */
  readonly areas: readonly ProfileEntry[];
  /** Functions with the most self time. */
  readonly selfTop: readonly ProfileEntry[];
  /** Headwater functions with the most total time (self plus everything they called). */
  readonly headwaterTotalTop: readonly ProfileEntry[];
}

interface Frame {
  readonly key: string;
  readonly area: string;
  readonly headwater: boolean;
  readonly idle: boolean;
}

/**
 * Summarises a `.cpuprofile`: self time by area and by function, and total time of Headwater's own functions,
 * which is where the question "what does one event cost, and where" is answered. With `window`, only samples
 * taken inside it count (V8 stamps samples with CLOCK_MONOTONIC, the clock of {@link TimeWindow}), so one server
 * run yields a profile per measurement, free of start-up and of the other measurements.
 */
export async function summarizeCpuProfile(
  file: string,
  window?: TimeWindow,
  top = 15,
): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  return summarize(profile, window, top);
}

/** Reads a profile once and summarises each of `windows`. */
export async function summarizeCpuProfileWindows(
  file: string,
  windows: readonly TimeWindow[],
  top = 15,
): Promise<ProfileSummary[]> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  return windows.map((window) => summarize(profile, window, top));
}

function summarize(profile: CpuProfile, window: TimeWindow | undefined, top: number): ProfileSummary {
  const frames = new Map<number, Frame>();
  const parents = new Map<number, number>();
  for (const node of profile.nodes) {
    frames.set(node.id, describeFrame(node.callFrame));
    for (const child of node.children ?? []) parents.set(child, node.id);
  }
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const totals = new Map<string, number>();
  let sampledUs = 0;
  let busyUs = 0;
  const { samples, timeDeltas } = profile;
  let at = profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i] ?? 0;
    if (window && (at < window.startUs || at > window.endUs)) continue;
    // timeDeltas[i] is the gap before sample i; the time until the next sample belongs to this one.
    const us = timeDeltas[i + 1] ?? 0;
    const id = samples[i]!;
    const frame = frames.get(id);
    if (!frame) continue;
    sampledUs += us;
    if (frame.idle) continue;
    busyUs += us;
    self.set(frame.key, (self.get(frame.key) ?? 0) + us);
    areas.set(frame.area, (areas.get(frame.area) ?? 0) + us);
    // Total time: count each Headwater function once per sample, however often it recurs on the stack.
    const counted = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parents.get(node)) {
      const onStack = frames.get(node);
      if (onStack?.headwater && !counted.has(onStack.key)) {
        counted.add(onStack.key);
        totals.set(onStack.key, (totals.get(onStack.key) ?? 0) + us);
      }
    }
  }
  const ranked = (map: Map<string, number>, count: number): ProfileEntry[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, us]) => ({ name, ms: us / 1000, pct: busyUs === 0 ? 0 : (100 * us) / busyUs }));
  return {
    sampledMs: sampledUs / 1000,
    busyMs: busyUs / 1000,
    areas: ranked(areas, top),
    selfTop: ranked(self, top),
    headwaterTotalTop: ranked(totals, top),
  };
}

function describeFrame(callFrame: CpuProfile['nodes'][number]['callFrame']): Frame {
  const { functionName, url, lineNumber } = callFrame;
  const name = functionName || '(anonymous)';
  if (url === '') {
    const idle = name === '(idle)' || name === '(root)';
    const area = name === '(garbage collector)' ? 'GC' : name.startsWith('(') ? name : 'native';
    return { key: name, area, headwater: false, idle };
  }
  const headwater = /\/packages\/server\/dist\/([^/]+)\//.exec(url);
  if (headwater) {
    const file = url.slice(url.lastIndexOf('/dist/') + 6);
    return {
      key: `${name} ${file}:${lineNumber + 1}`,
      area: `headwater ${headwater[1]!}/`,
      headwater: true,
      idle: false,
    };
  }
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 14);
    const parts = rest.split('/');
    const pkg = rest.startsWith('@') ? `${parts[0]!}/${parts[1]!}` : parts[0]!;
    const file = rest.slice(pkg.length + 1);
    return { key: `${name} ${pkg}/${file}:${lineNumber + 1}`, area: pkg, headwater: false, idle: false };
  }
  if (url.startsWith('node:')) {
    return { key: `${name} ${url}:${lineNumber + 1}`, area: 'node internals', headwater: false, idle: false };
  }
  // Only PGlite runs WebAssembly in the server: these frames are PostgreSQL itself, compiled to wasm.
  if (url.startsWith('wasm://'))
    return { key: name, area: 'PGlite wasm (PostgreSQL)', headwater: false, idle: false };
  return { key: `${name} ${url}:${lineNumber + 1}`, area: 'other', headwater: false, idle: false };
}

/** Renders a summary as indented text for the console and for a `.txt` beside the profile. */
export function formatProfileSummary(title: string, summary: ProfileSummary): string {
  const busyPct = summary.sampledMs === 0 ? 0 : (100 * summary.busyMs) / summary.sampledMs;
  const lines = [
    `${title}: ${(summary.sampledMs / 1000).toFixed(1)} s sampled, thread busy ${busyPct.toFixed(0)} % of it`,
  ];
  const section = (heading: string, entries: readonly ProfileEntry[]) => {
    lines.push(`  ${heading}`);
    for (const entry of entries) {
      lines.push(
        `    ${entry.pct.toFixed(1).padStart(5)} %  ${(entry.ms / 1000).toFixed(2).padStart(7)} s  ${entry.name}`,
      );
    }
  };
  section('self time by area (% of busy time)', summary.areas);
  section('top functions by self time', summary.selfTop);
  section('Headwater functions by total time (self + callees)', summary.headwaterTotalTop);
  return lines.join('\n');
}
