import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cruise, type IReporterOutput } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';
import rules, { SERVER_LAYERS } from '../../../.dependency-cruiser.mjs';

// `npm run lint` checks the real tree; this shows that the rules it checks against refuse what they should.
const tree = mkdtempSync(path.join(os.tmpdir(), 'headwater-layers-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

/** Writes `files` under a fresh tree shaped like the repository and returns the rules each import breaks. */
async function violationsOf(name: string, files: Record<string, string>): Promise<string[]> {
  const root = path.join(tree, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  const previous = process.cwd();
  process.chdir(root);
  let result: IReporterOutput;
  try {
    const { tsConfig: _tsConfig, ...options } = rules.options;
    result = await cruise(['packages'], {
      ...options,
      validate: true,
      ruleSet: { forbidden: rules.forbidden },
    });
  } finally {
    process.chdir(previous);
  }
  if (typeof result.output === 'string') throw new Error(result.output);
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}

describe('the import direction', () => {
  it('lets a layer import the layers below it', async () => {
    expect(
      await violationsOf('down', {
        'packages/server/src/api/routes.ts': "import { run } from '../store/db.js';\nexport const x = run;\n",
        'packages/server/src/store/db.ts':
          "import type { Id } from '../core/ids.js';\nexport const run = (id: Id) => id;\n",
        'packages/server/src/core/ids.ts': 'export type Id = string;\n',
      }),
    ).toEqual([]);
  });

  it('refuses an import of a layer above, a type-only one too', async () => {
    expect(
      await violationsOf('up', {
        'packages/server/src/store/db.ts':
          "import type { Route } from '../api/routes.js';\nexport type R = Route;\n",
        'packages/server/src/api/routes.ts': 'export type Route = string;\n',
        'packages/server/src/core/ids.ts':
          "import { y } from '../model/run-state.js';\nexport const x = y;\n",
        'packages/server/src/model/run-state.ts': 'export const y = 1;\n',
      }),
    ).toEqual([
      'layer-core: packages/server/src/core/ids.ts -> packages/server/src/model/run-state.ts',
      'layer-store: packages/server/src/store/db.ts -> packages/server/src/api/routes.ts',
    ]);
  });

  it('refuses a folder that has no place in the layers, and a cycle', async () => {
    const found = await violationsOf('unknown', {
      'packages/server/src/api/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'packages/server/src/api/b.ts':
        "import { a } from './a.js';\nimport { c } from '../misc/c.js';\nexport const b = () => a() + c;\n",
      'packages/server/src/misc/c.ts': 'export const c = 1;\n',
    });
    expect(found).toContain(
      'server-folder-known: packages/server/src/api/b.ts -> packages/server/src/misc/c.ts',
    );
    expect(found.filter((v) => v.startsWith('no-circular'))).toHaveLength(1);
  });

  it('orders every folder of the server once', () => {
    expect(new Set(SERVER_LAYERS).size).toBe(SERVER_LAYERS.length);
  });
});
