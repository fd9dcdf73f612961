import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURES, type ScenarioNames } from './scenario.js';

/** packages/server/test/fixtures/producers: the events the real producers sent, recorded by the interop suite. */
export const FIXTURE_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'producers',
);

/** What the recorded events are named after, and the producer versions that sent them. */
export interface RecordedScenario {
  readonly names: ScenarioNames;
  readonly producers: Record<string, string>;
}

/**
 * Writes every event the server at `url` stored, one NDJSON file per producer (by job namespace, in event-time
 * order, each as stored, on one line), and scenario.json.
 */
export async function recordFixtures(url: string, scenario: RecordedScenario): Promise<void> {
  const response = await fetch(
    `${url}/api/v1/events/lineage?kind=run&kind=dataset&kind=job&sortDirection=asc&limit=100000`,
  );
  if (!response.ok) throw new Error(`events: ${response.status}`);
  const { events } = (await response.json()) as { events: { job?: { namespace?: string } }[] };
  await mkdir(FIXTURE_DIR, { recursive: true });
  let written = 0;
  for (const fixture of FIXTURES) {
    const mine = events.filter((e) =>
      (fixture.namespaces as readonly string[]).includes(e.job?.namespace ?? ''),
    );
    written += mine.length;
    await writeFile(
      path.join(FIXTURE_DIR, fixture.file),
      mine.map((e) => JSON.stringify(e)).join('\n') + '\n',
    );
  }
  if (written !== events.length)
    throw new Error(`${events.length - written} events belong to no fixture's job namespace`);
  await writeFile(path.join(FIXTURE_DIR, 'scenario.json'), JSON.stringify(scenario, null, 2) + '\n');
}

/** The recorded scenario and its fixtures' NDJSON bodies, in the order the producers sent them. */
export async function readFixtures(): Promise<{ scenario: RecordedScenario; bodies: string[] }> {
  const scenario = JSON.parse(
    await readFile(path.join(FIXTURE_DIR, 'scenario.json'), 'utf8'),
  ) as RecordedScenario;
  const bodies = await Promise.all(
    FIXTURES.map((fixture) => readFile(path.join(FIXTURE_DIR, fixture.file), 'utf8')),
  );
  return { scenario, bodies };
}
