import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig, strictFlagArgs } from '../src/config/server-config.js';
import { backends, startApp } from './helpers/backends.js';
import { overSocket, type Send } from './helpers/api.js';
import { spawnServer } from './helpers/child-server.js';
import { conformanceFiles, hasConformance, readEvents } from './helpers/conformance.js';

// Validation does not depend on the store; the embedded one is enough here.
const [embedded] = backends();

type Event = Record<string, unknown>;

/** What the pyspark job of the interop suite sent (Spark listener 1.53), recorded in the repository. */
const sparkEvents = readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'producers', 'spark.ndjson'),
  'utf8',
)
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line) as Event);

/** The `dataSource.uri` values of an event's datasets that are not URIs (no scheme), e.g. Spark's `file`. */
function schemelessUris(event: Event): string[] {
  const datasets = [
    ...((event.inputs as Event[] | undefined) ?? []),
    ...((event.outputs as Event[] | undefined) ?? []),
  ];
  return datasets.flatMap((dataset) => {
    const uri = ((dataset.facets as Event | undefined)?.dataSource as Event | undefined)?.uri;
    return typeof uri === 'string' && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri) ? [uri] : [];
  });
}

interface Reply {
  readonly status: number;
  readonly errors: readonly string[];
}

async function post(send: Send, event: unknown): Promise<Reply> {
  const response = await send('/api/v1/lineage', {
    method: 'POST',
    body: JSON.stringify(event),
    headers: { 'content-type': 'application/json' },
  });
  const text = await response.text();
  return {
    status: response.status,
    errors: text === '' ? [] : (JSON.parse(text) as { errors: string[] }).errors,
  };
}

/** A real Spark event with one facet changed (a deep copy: the fixture stays as recorded). */
function sparkEventWith(change: (event: Event & { outputs: Event[] }) => void): Event {
  const source = sparkEvents.find((event) => Array.isArray(event.outputs) && event.outputs.length > 0)!;
  const event = structuredClone(source) as Event & { outputs: Event[] };
  change(event);
  return event;
}

describe('strict mode configuration', () => {
  it('needs no folder: the schemas are bundled with the client package', () => {
    expect(resolveConfig({ strict: 'structure' }, {})).toMatchObject({
      strict: 'structure',
      specDir: undefined,
    });
  });

  it('reads the level from --strict or HEADWATER_STRICT: true means structure; lenient stays the default', () => {
    const level = (flags: Record<string, string | boolean>, env: Record<string, string> = {}) =>
      resolveConfig(flags, env).strict;
    expect(level({})).toBe(false);
    expect(level({ strict: true })).toBe('structure');
    expect(level({ strict: 'formats' })).toBe('formats');
    expect(level({}, { HEADWATER_STRICT: 'true' })).toBe('structure');
    expect(level({}, { HEADWATER_STRICT: '1' })).toBe('structure');
    expect(level({}, { HEADWATER_STRICT: 'structure' })).toBe('structure');
    expect(level({}, { HEADWATER_STRICT: 'formats' })).toBe('formats');
    expect(level({}, { HEADWATER_STRICT: 'false' })).toBe(false);
    expect(level({}, { HEADWATER_STRICT: '0' })).toBe(false);
    expect(() => level({}, { HEADWATER_STRICT: 'yes' })).toThrow(
      'HEADWATER_STRICT must be structure or formats (true or 1 mean structure; false or 0 lenient); got "yes".',
    );
    expect(() => level({ strict: 'format' })).toThrow(/--strict must be structure or formats/);
  });

  it('takes --strict bare or with a level on the command line', () => {
    expect(strictFlagArgs(['--strict', '--port', '5000'])).toEqual(['--strict=structure', '--port', '5000']);
    expect(strictFlagArgs(['--port', '5000', '--strict'])).toEqual(['--port', '5000', '--strict=structure']);
    expect(strictFlagArgs(['--strict', 'formats'])).toEqual(['--strict=formats']);
    expect(strictFlagArgs(['--strict', 'structure', '--host', 'h'])).toEqual([
      '--strict=structure',
      '--host',
      'h',
    ]);
    expect(strictFlagArgs(['--strict=formats'])).toEqual(['--strict=formats']);
  });

  it('says that --spec-dir is optional when the folder it names is missing', () => {
    expect(() => resolveConfig({ strict: 'structure', 'spec-dir': '/nonexistent/spec' }, {})).toThrow(
      /--spec-dir \/nonexistent\/spec does not exist\. It is optional/,
    );
  });
});

describe('strict mode with the bundled schemas, on real Spark events', () => {
  let structure: Awaited<ReturnType<typeof startApp>>;
  let formats: Awaited<ReturnType<typeof startApp>>;

  beforeAll(async () => {
    [structure, formats] = await Promise.all([
      startApp(embedded!, { strict: 'structure', specDir: undefined }),
      startApp(embedded!, { strict: 'formats', specDir: undefined }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([structure?.stop(), formats?.stop()]);
  });

  it('structure accepts every event the Spark listener sent; formats rejects those naming dataSource.uri "file"', async () => {
    const outcomes = [];
    for (const event of sparkEvents) {
      const uris = schemelessUris(event);
      const [atStructure, atFormats] = [
        await post(structure.request, event),
        await post(formats.request, event),
      ];
      outcomes.push({ uris, atStructure, atFormats });
      expect(atStructure).toEqual({ status: 201, errors: [] });
      if (uris.length === 0) {
        expect(atFormats).toEqual({ status: 201, errors: [] });
      } else {
        expect(atFormats.status).toBe(422);
        expect(atFormats.errors.length).toBeGreaterThan(0);
        for (const error of atFormats.errors) {
          expect(error).toMatch(
            /^\$\.(inputs|outputs)\[\d+\]\.facets\.dataSource\.uri: must be a valid uri, got "file" \(per DatasourceDatasetFacet 1-0-1\)$/,
          );
        }
      }
    }
    expect(outcomes).toHaveLength(29);
    expect(outcomes.filter(({ atFormats }) => atFormats.status === 422)).toHaveLength(24);
  });

  it('structure still rejects wrong types, missing required fields and unknown enum values, with 422 naming each', async () => {
    const cases: [string, Event, string[]][] = [
      [
        'a number of rows as text',
        sparkEventWith((event) => {
          event.outputs[0]!.outputFacets = {
            outputStatistics: { _producer: 'https://p', _schemaURL: 'https://s', rowCount: 'many' },
          };
        }),
        [
          '$.outputs[0].outputFacets.outputStatistics.rowCount: must be of type integer, got "many" ' +
            '(per OutputStatisticsOutputDatasetFacet 1-0-2)',
        ],
      ],
      [
        'a schema field without a name',
        sparkEventWith((event) => {
          event.outputs[0]!.facets = {
            ...(event.outputs[0]!.facets as Event),
            schema: { _producer: 'https://p', _schemaURL: 'https://s', fields: [{ type: 'long' }] },
          };
        }),
        ['$.outputs[0].facets.schema.fields[0].name: is required (per SchemaDatasetFacet 1-2-0)'],
      ],
      [
        'a facet without _producer',
        sparkEventWith((event) => {
          const facets = event.outputs[0]!.facets as Event;
          const { _producer, ...dataSource } = facets.dataSource as Event;
          void _producer;
          event.outputs[0]!.facets = { ...facets, dataSource };
        }),
        ['$.outputs[0].facets.dataSource._producer: is required (per OpenLineage 2-0-2 RunEvent)'],
      ],
      [
        'no schemaURL',
        sparkEventWith((event) => {
          delete event.schemaURL;
        }),
        ['$.schemaURL: is required (per OpenLineage 2-0-2 RunEvent)'],
      ],
      [
        'a lifecycle state that does not exist',
        sparkEventWith((event) => {
          event.outputs[0]!.facets = {
            ...(event.outputs[0]!.facets as Event),
            lifecycleStateChange: {
              _producer: 'https://p',
              _schemaURL: 'https://s',
              lifecycleStateChange: 'MOVE',
            },
          };
        }),
        [
          '$.outputs[0].facets.lifecycleStateChange.lifecycleStateChange: must be one of "ALTER", "CREATE", ' +
            '"DROP", "OVERWRITE", "RENAME", "TRUNCATE", got "MOVE" (per LifecycleStateChangeDatasetFacet 1-0-1)',
        ],
      ],
    ];
    for (const [name, event, errors] of cases) {
      expect({ name, reply: await post(structure.request, event) }).toEqual({
        name,
        reply: { status: 422, errors },
      });
    }
  });

  it('rejects one event of a batch alone, and stores the rest', async () => {
    const bad = sparkEventWith((event) => {
      event.outputs[0]!.outputFacets = {
        outputStatistics: { _producer: 'https://p', _schemaURL: 'https://s', rowCount: -1.5 },
      };
    });
    const response = await structure.request('/api/v1/lineage/batch', {
      method: 'POST',
      body: JSON.stringify([sparkEvents[0], bad, sparkEvents[1]]),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: 'partial_success',
      summary: { received: 3, successful: 2, failed: 1 },
      failed_events: [{ index: 1 }],
    });
  });
});

describe('headwater serve and proxy with --strict from the command line', { timeout: 120_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-strict-cli-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const withUri = sparkEvents.find((event) => schemelessUris(event).length > 0)!;
  const typeError = sparkEventWith((event) => {
    event.outputs[0]!.outputFacets = {
      outputStatistics: { _producer: 'https://p', _schemaURL: 'https://s', rowCount: 'many' },
    };
  });

  it('proxy --strict (bare, last): structure; Spark events pass to the sinks, type errors are refused', async () => {
    const configFile = path.join(dir, 'proxy.yml');
    await writeFile(configFile, 'sinks:\n  archive: { type: archive, dir: strict-archive }\n');
    const proxy = await spawnServer(['--config', configFile, '--strict'], 'proxy');
    try {
      expect(await post(overSocket(proxy.url), withUri)).toEqual({ status: 201, errors: [] });
      expect((await post(overSocket(proxy.url), typeError)).status).toBe(422);
    } finally {
      proxy.process.kill('SIGTERM');
      await proxy.exited;
    }
  });

  it('serve --strict formats: the same Spark event is refused for its uri', async () => {
    const server = await spawnServer([
      '--data-dir',
      path.join(dir, 'store'),
      '--strict',
      'formats',
      '--log-level',
      'silent',
    ]);
    try {
      const reply = await post(overSocket(server.url), withUri);
      expect(reply.status).toBe(422);
      expect(reply.errors[0]).toMatch(/dataSource\.uri: must be a valid uri, got "file"/);
    } finally {
      server.process.kill('SIGTERM');
      await server.exited;
    }
  });
});

// The conformance corpus beside the repository: skipped with a message on a plain clone, required in CI.
describe.skipIf(!hasConformance())('strict mode on the conformance corpus', () => {
  let structure: Awaited<ReturnType<typeof startApp>>;
  let formats: Awaited<ReturnType<typeof startApp>>;

  beforeAll(async () => {
    [structure, formats] = await Promise.all([
      startApp(embedded!, { strict: 'structure' }),
      startApp(embedded!, { strict: 'formats' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([structure?.stop(), formats?.stop()]);
  });

  it('rejects the fluentd negative cases with 422 naming the facet', async () => {
    const expected: Record<string, string> = {
      'event_invalid_dataset_facet.json': '$.outputs[0].facets.ownership.owners[0].name',
      'event_invalid_input_dataset_facet.json': '$.inputs[0].inputFacets.dataQualityMetrics.columnMetrics',
      'event_invalid_output_dataset_facet.json': '$.outputs[0].outputFacets.outputStatistics.rowCount',
      'event_invalid_job_facet.json': '$.job.facets.ownership.owners[0].name',
      'event_invalid_run_facet.json': '$.run.facets.parent.run.runId',
      'event_no_run_id.json': '$.run.runId',
    };
    for (const [file, path] of Object.entries(expected)) {
      const [event] = readEvents(`fluentd-proxy/${file}`);
      const reply = await post(formats.request, event);
      expect({
        file,
        status: reply.status,
        paths: reply.errors.map((error) => error.split(': ')[0]),
      }).toEqual({
        file,
        status: 422,
        paths: [path],
      });
    }
  });

  it('formats accepts every event the manifest marks valid and rejects the others', async () => {
    for (const file of conformanceFiles(['valid'])) {
      for (const event of readEvents(file))
        expect({ file, status: (await post(formats.request, event)).status }).toEqual({ file, status: 201 });
    }
    for (const file of conformanceFiles(['facet-invalid', 'invalid'])) {
      for (const event of readEvents(file))
        expect({ file, status: (await post(formats.request, event)).status }).toEqual({ file, status: 422 });
    }
  });

  it('structure accepts exactly the events formats rejects only for formats', async () => {
    const tally = { acceptedByBoth: 0, onlyFormats: 0, rejectedByBoth: 0 };
    for (const file of conformanceFiles(['valid', 'facet-invalid', 'invalid'])) {
      for (const event of readEvents(file)) {
        const atFormats = await post(formats.request, event);
        const onlyFormats =
          atFormats.status === 422 && atFormats.errors.every((e) => / must be a valid /.test(e));
        const atStructure = await post(structure.request, event);
        const expected = atFormats.status === 201 || onlyFormats ? 201 : 422;
        expect({ file, status: atStructure.status }).toEqual({ file, status: expected });
        if (atFormats.status === 201) tally.acceptedByBoth++;
        else if (onlyFormats) tally.onlyFormats++;
        else tally.rejectedByBoth++;
      }
    }
    // 108 real events: Airflow, Spark, Marquez's fixtures, the Python client, fluentd's negative cases...
    expect(tally).toEqual({ acceptedByBoth: 69, onlyFormats: 20, rejectedByBoth: 19 });
  });

  it('structure accepts every real Spark event of the corpus (formats rejects the dataSource.uri ones)', async () => {
    const spark = conformanceFiles(['valid', 'facet-invalid', 'invalid']).filter((file) =>
      file.startsWith('spark'),
    );
    let rejectedByFormats = 0;
    let count = 0;
    for (const file of spark) {
      for (const event of readEvents(file)) {
        count++;
        expect({ file, reply: await post(structure.request, event) }).toEqual({
          file,
          reply: { status: 201, errors: [] },
        });
        if ((await post(formats.request, event)).status === 422) rejectedByFormats++;
      }
    }
    expect(count).toBe(37);
    expect(rejectedByFormats).toBe(13);
  });
});
