import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll's default of 1 s is too short for a browser's chain of requests on a loaded CI machine.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    globalSetup: ['packages/server/test/global-setup.ts', 'packages/web/test/global-setup.ts'],
  },
});
