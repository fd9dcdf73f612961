import type { Plugin } from 'vite';

/** The stamp's file name in the build's output folder. */
export declare const STAMP_FILE: string;
/** Writes the stamp of a build just made of the package at `root` into `outDir`. */
export declare function writeStamp(root: string, outDir: string, moduleFiles: Iterable<string>): void;
/** Whether the build in `outDir` (default `root`/dist) is the build of the inputs as they are now. */
export declare function buildState(
  root: string,
  outDir?: string,
): { fresh: true } | { fresh: false; reason: string };
/** The plugins that write the stamp: `plugin` for the app's build, `workerPlugin` for `worker.plugins`. */
export declare function buildStampPlugins(root: string): { plugin: Plugin; workerPlugin: Plugin };
/** Builds the app at `root` with vite unless its build is fresh. */
export declare function buildIfStale(
  root: string,
  options?: { log?: (line: string) => void },
): 'fresh' | 'built';
