import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { CHROMIUM_PATH, gpuProcessSeconds } from '../src/ui-bench.js';

const runs = process.platform === 'linux' && existsSync(CHROMIUM_PATH);
if (!runs && process.env.CI === 'true' && process.platform === 'linux')
  throw new Error(
    `CI=true but ${CHROMIUM_PATH} is missing: the UI bench's GPU-process reading is not tested`,
  );

describe.skipIf(!runs)("the UI bench's CPU time of Chromium's GPU process", () => {
  test('is read from /proc for the Chromium of a profile, and grows while it draws; none for another profile', async () => {
    const profile = await mkdtemp(path.join(os.tmpdir(), 'headwater-gpu-test-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const page = await context.newPage();
      await page.setContent('<canvas width="800" height="600"></canvas>');
      const before = await gpuProcessSeconds(profile);
      expect(before).toBeTypeOf('number');
      // Half a second of frames for the software compositor.
      // A string, not a function: this package compiles without the DOM library.
      await page.evaluate(`new Promise((resolve) => {
        const canvas = document.querySelector('canvas');
        const context = canvas.getContext('2d');
        const started = performance.now();
        const frame = (now) => {
          context.fillStyle = 'hsl(' + (now % 360) + ' 80% 50%)';
          context.fillRect(0, 0, 800, 600);
          canvas.style.transform = 'translateX(' + (now % 50) + 'px)';
          if (now - started < 500) requestAnimationFrame(frame);
          else resolve();
        };
        requestAnimationFrame(frame);
      })`);
      expect(await gpuProcessSeconds(profile)).toBeGreaterThan(before!);
      expect(await gpuProcessSeconds(`${profile}-not-running`)).toBeUndefined();
    } finally {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    }
  });
});
