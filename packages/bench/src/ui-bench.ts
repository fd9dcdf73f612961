import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, BrowserType, CDPSession } from 'playwright-core';
import type { ServerProcess } from './server-process.js';
import { percentiles, type Percentiles } from './stats.js';

/** Debian's Chromium; playwright never downloads a browser here. HEADWATER_CHROMIUM overrides it. */
export const CHROMIUM_PATH = process.env.HEADWATER_CHROMIUM ?? '/usr/bin/chromium';

/** What `/bench/graph` publishes on `window.__headwaterBench` (packages/web/src/routes/BenchGraphPage.tsx). */
export interface GraphRender {
  readonly nodes: number;
  readonly edges: number;
  readonly layoutMs: number;
  /** From the end of the layout until nodes and edges are drawn. */
  readonly renderMs: number;
  /** From the page's first render until nodes and edges are drawn: layout plus render. */
  readonly totalMs: number;
  /** From the page's first render until node names are drawn readable (at least 11 px tall on screen). */
  readonly readableMs: number;
  /** Measured here: from page.goto() until the result appeared (also loading and parsing the app). */
  readonly wallMs: number;
}

/** Pan and zoom driven once per frame after the graph is drawn (`/bench/graph?interact=1`). */
export interface PanZoom {
  readonly frames: number;
  readonly fps: number;
  readonly p50FrameMs: number;
  readonly p95FrameMs: number;
  readonly maxFrameMs: number;
  /**
   * CPU time of the page's main thread per frame during the pan and zoom (Chromium's `ThreadTime` counter,
   * through the DevTools protocol). Unlike frames/s it hardly depends on what else the machine runs.
   */
  readonly mainThreadCpuMsPerFrame: number;
  /** The same for the whole renderer process (main thread, compositor and raster threads). */
  readonly rendererCpuMsPerFrame: number;
  /**
   * The same for Chromium's GPU process, where `--disable-gpu` composites every frame in software (its
   * compositor thread draws each layer's quads): from /proc, null where there is none to read.
   */
  readonly gpuProcessCpuMsPerFrame: number | null;
}

/** Frames per second panning and zooming a large graph, and the time until it is readable, per load. */
export interface PanZoomResult {
  readonly nodes: number;
  readonly edges: number;
  readonly loads: readonly (PanZoom & { readonly readableMs: number })[];
  readonly fps: Percentiles;
  /** The slowest load's frame rate. */
  readonly fpsMin: number;
  readonly p95FrameMs: Percentiles;
  readonly readableMs: Percentiles;
  readonly mainThreadCpuMsPerFrame: Percentiles;
  readonly rendererCpuMsPerFrame: Percentiles;
  /** Null where the GPU process's CPU time could not be read (not Linux). */
  readonly gpuProcessCpuMsPerFrame: Percentiles | null;
}

/** How many nodes the pan-and-zoom measurement draws. */
export const PAN_ZOOM_NODES = 5000;

/** The graph page's render times, or why they could not be measured. */
export type GraphRenderResult =
  | {
      readonly status: 'measured';
      readonly nodesRequested: number;
      /** The unmeasured first load (cold caches, JIT). */
      readonly warmup: GraphRender;
      readonly runs: readonly GraphRender[];
      readonly totalMs: Percentiles;
      readonly layoutMs: Percentiles;
      readonly renderMs: Percentiles;
      readonly wallMs: Percentiles;
      readonly readableMs: Percentiles;
      readonly panZoom: PanZoomResult;
      readonly chromium: string;
    }
  | { readonly status: 'missing'; readonly note: string };

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

/**
 * Then opens `/bench/graph?nodes=5000&interact=1` `runs` times: the page pans and zooms the drawn graph once per
 * animation frame for 300 frames and reports the frame rate (target: at least 30 frames/s) and when the graph
 * became readable.
 *
 * Opens `/bench/graph?nodes=N` of the server's web app `runs` times in headless Chromium (a fresh profile, one
 * new tab per load) and collects the timings the page publishes; the first load is a warm-up. The page
 * generates the graph in the browser, lays it out and renders it with the lineage page's own code.
 */
export async function runGraphRender(
  server: ServerProcess,
  nodes: number,
  runs: number,
): Promise<GraphRenderResult> {
  if (!existsSync(CHROMIUM_PATH)) {
    return { status: 'missing', note: `chromium missing (${CHROMIUM_PATH}; apt-get install -y chromium)` };
  }
  let chromium: BrowserType;
  try {
    // Loaded on demand: playwright-core is a devDependency of the repository, not of the published server.
    ({ chromium } = await import('playwright-core'));
  } catch {
    return { status: 'missing', note: 'playwright-core missing (npm install at the repository root)' };
  }
  const profile = await mkdtemp(path.join(os.tmpdir(), 'headwater-bench-chromium-'));
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1440, height: 900 },
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    // A persistent context has no Browser object to ask; the user agent carries the version.
    const blank = context.pages()[0] ?? (await context.newPage());
    const userAgent = String(await blank.evaluate('navigator.userAgent'));
    const version = /Chrome\/([\d.]+)/.exec(userAgent)?.[1] ?? 'unknown version';
    const loads: GraphRender[] = [];
    for (let i = 0; i < runs; i++) loads.push(await renderOnce(context, server.url, nodes, profile));
    const [warmup, ...measured] = loads as [GraphRender, ...GraphRender[]];
    const of = (key: 'totalMs' | 'layoutMs' | 'renderMs' | 'wallMs' | 'readableMs') =>
      percentiles(measured.map((run) => run[key]));
    // Pan and zoom at 5,000 nodes: one load per run, each a fresh tab; the first is a warm-up too.
    const interactive: (GraphRender & { panZoom: PanZoom })[] = [];
    for (let i = 0; i < runs; i++)
      interactive.push(
        (await renderOnce(context, server.url, PAN_ZOOM_NODES, profile, true)) as GraphRender & {
          panZoom: PanZoom;
        },
      );
    const panLoads = interactive.slice(1).map((load) => ({ ...load.panZoom, readableMs: load.readableMs }));
    const panZoom: PanZoomResult = {
      nodes: interactive[0]!.nodes,
      edges: interactive[0]!.edges,
      loads: panLoads,
      fps: percentiles(panLoads.map((l) => l.fps)),
      fpsMin: Math.min(...panLoads.map((l) => l.fps)),
      p95FrameMs: percentiles(panLoads.map((l) => l.p95FrameMs)),
      readableMs: percentiles(panLoads.map((l) => l.readableMs)),
      mainThreadCpuMsPerFrame: percentiles(panLoads.map((l) => l.mainThreadCpuMsPerFrame)),
      rendererCpuMsPerFrame: percentiles(panLoads.map((l) => l.rendererCpuMsPerFrame)),
      gpuProcessCpuMsPerFrame: panLoads.every((l) => l.gpuProcessCpuMsPerFrame !== null)
        ? percentiles(panLoads.map((l) => l.gpuProcessCpuMsPerFrame!))
        : null,
    };
    return {
      status: 'measured',
      nodesRequested: nodes,
      warmup,
      runs: measured,
      totalMs: of('totalMs'),
      layoutMs: of('layoutMs'),
      renderMs: of('renderMs'),
      wallMs: of('wallMs'),
      readableMs: of('readableMs'),
      panZoom,
      chromium: `Chromium ${version}`,
    };
  } finally {
    await context?.close().catch(() => undefined);
    await rm(profile, { recursive: true, force: true });
  }
}

interface CpuTimes {
  /** Seconds of CPU the page's main thread has used. */
  readonly thread: number;
  /** Seconds of CPU the renderer process has used. */
  readonly process: number;
}

async function cpuTimes(session: CDPSession): Promise<CpuTimes> {
  const { metrics } = await session.send('Performance.getMetrics');
  const value = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0;
  return { thread: value('ThreadTime'), process: value('ProcessTime') };
}

/**
 * Seconds of CPU (user and system) the GPU process of the Chromium using `profile` has used, from /proc: the
 * DevTools protocol's counters cover the renderer only. Undefined where there is no /proc or no such process.
 */
export async function gpuProcessSeconds(profile: string): Promise<number | undefined> {
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    try {
      // Chromium rewrites its processes' titles, so the arguments may be one string: search it whole.
      const command = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      if (!command.includes('--type=gpu-process') || !command.includes(profile)) continue;
      // The fields after the command's name in parentheses: utime and stime are the 12th and 13th.
      const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      continue;
    }
  }
  return undefined;
}

async function renderOnce(
  context: BrowserContext,
  baseUrl: string,
  nodes: number,
  profile: string,
  interact = false,
): Promise<GraphRender> {
  const page = await context.newPage();
  try {
    const startedAt = performance.now();
    const response = await page.goto(
      `${baseUrl}/bench/graph?nodes=${nodes}${interact ? '&interact=1&hold=1' : ''}`,
    );
    if (response?.status() === 503) {
      throw new Error('the web app is not built (packages/web/dist): run npm run build first');
    }
    // Strings, not functions: this package compiles without the DOM library, so `window` has no type here.
    let cpu: { before: CpuTimes; gpu: number | undefined; session: CDPSession } | undefined;
    if (interact) {
      await page.waitForFunction('window.__headwaterBenchReady !== undefined', undefined, {
        timeout: 120_000,
      });
      const session = await context.newCDPSession(page);
      await session.send('Performance.enable');
      cpu = { before: await cpuTimes(session), gpu: await gpuProcessSeconds(profile), session };
      await page.evaluate('window.__headwaterBenchGo = true');
    }
    await page.waitForFunction('window.__headwaterBench !== undefined', undefined, { timeout: 120_000 });
    const wallMs = performance.now() - startedAt;
    const result = await page.evaluate<
      Omit<GraphRender, 'wallMs'> & {
        panZoom?: Omit<
          PanZoom,
          'mainThreadCpuMsPerFrame' | 'rendererCpuMsPerFrame' | 'gpuProcessCpuMsPerFrame'
        >;
      }
    >('window.__headwaterBench');
    if (cpu && result.panZoom) {
      const after = await cpuTimes(cpu.session);
      const gpuAfter = await gpuProcessSeconds(profile);
      const perFrame = (seconds: number) => Math.round(((seconds * 1000) / result.panZoom!.frames) * 10) / 10;
      return {
        ...result,
        panZoom: {
          ...result.panZoom,
          mainThreadCpuMsPerFrame: perFrame(after.thread - cpu.before.thread),
          rendererCpuMsPerFrame: perFrame(after.process - cpu.before.process),
          gpuProcessCpuMsPerFrame:
            cpu.gpu === undefined || gpuAfter === undefined ? null : perFrame(gpuAfter - cpu.gpu),
        },
        wallMs,
      } as GraphRender;
    }
    return { ...result, wallMs };
  } finally {
    await page.close();
  }
}
