import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_VERSION, DEFAULT_PRODUCER } from './producer.js';

describe('producer', () => {
  it('matches the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(CLIENT_VERSION).toBe(pkg.version);
    expect(DEFAULT_PRODUCER).toContain(`v${pkg.version}`);
    expect(() => new URL(DEFAULT_PRODUCER)).not.toThrow();
  });
});
