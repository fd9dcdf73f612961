import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openEmbeddedDb } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    embeddedTemplateDir: string;
  }
}

/**
 * Creates one migrated embedded store that every test copies: PGlite's first start (initdb) takes seconds,
 * reopening a copy well under one.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-template-'));
  const db = await openEmbeddedDb(dir);
  await migrate(db);
  await db.close();
  project.provide('embeddedTemplateDir', dir);
  return () => rm(dir, { recursive: true, force: true });
}
