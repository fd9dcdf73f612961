import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONFORMANCE_DIR as conformanceDir,
  hasConformance,
} from '../../../openlineage/src/test-support/shared-corpus.js';
import type { EventKind } from '../model/normalize.js';
import type { ValidationIssue, ValidationResult, Validator } from './validate.js';
import { createValidator, eventKindOf } from './validate.js';

// The conformance data lives beside the repository and is read in place, never copied. On a plain clone it is
// absent and the tests that need it (real events, upstream's facet examples) skip; strict mode itself needs
// nothing beside the repository (the schemas are bundled with @headwater/openlineage).
const corpus = hasConformance();

type Status = 'valid' | 'facet-invalid' | 'invalid' | 'partial' | 'template';
interface ManifestEntry {
  readonly group: string;
  readonly file: string;
  readonly n: number;
  readonly kind: 'RunEvent' | 'DatasetEvent' | 'JobEvent';
  readonly status: Status;
  readonly notes: string;
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
const manifest = (corpus ? readJson(path.join(conformanceDir, 'manifest.json')) : { files: [] }) as {
  files: ManifestEntry[];
};
// partial and template files are harness expectations (placeholders, fields left out), not real events.
const realEntries = manifest.files.filter((entry) =>
  ['valid', 'facet-invalid', 'invalid'].includes(entry.status),
);
const KIND: Record<ManifestEntry['kind'], EventKind> = {
  RunEvent: 'run',
  DatasetEvent: 'dataset',
  JobEvent: 'job',
};
const NO_RUN_ID = 'fluentd-proxy/event_no_run_id.json';

function eventsOf(entry: ManifestEntry): unknown[] {
  const data = readJson(path.join(conformanceDir, 'openlineage-events', entry.group, entry.file));
  const events = Array.isArray(data) ? data : [data];
  expect(events).toHaveLength(entry.n);
  return events;
}

const lenient = createValidator({ strict: false });
let strictValidator: Validator | undefined;
let structureValidator: Validator | undefined;
/**
 * The strict validator with formats asserted, as the manifest's statuses were computed (created on first use:
 * only tests that need it call it).
 */
const strict = (): Validator => (strictValidator ??= createValidator({ strict: 'formats' }));
/** The strict validator at its default level: structure, no formats. */
const structure = (): Validator => (structureValidator ??= createValidator({ strict: 'structure' }));

const pathsOf = (result: ValidationResult): string[] => (result.ok ? [] : result.issues.map((i) => i.path));
const issuesOf = (result: ValidationResult): readonly ValidationIssue[] => (result.ok ? [] : result.issues);

/** The JSON paths named by a manifest note such as "run/runId: 'x' is not a 'uuid'; (root): 'schemaURL' is ...". */
function notedPaths(notes: string): string[] {
  const paths: string[] = [];
  for (const chunk of notes.split('; ')) {
    const root = /^\(root\): '([^']+)' is a required property/.exec(chunk);
    if (root) paths.push(`$.${root[1]}`);
    const located = /^([A-Za-z_][\w.[\]/-]*): /.exec(chunk);
    if (located) paths.push(`$.${located[1]!.replace(/\//g, '.')}`);
  }
  return paths;
}

const FACET_PATH =
  /^\$\.(?:run|job|dataset|inputs\[\d+\]|outputs\[\d+\])\.(?:facets|inputFacets|outputFacets)\./;

const PRODUCER = 'https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark';

// Tests break events in arbitrary ways; a loose type keeps each mutation to one readable line.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LooseEvent = Record<string, any>;

/** A complete, schema-valid RunEvent (strict mode accepts it), rebuilt for each test to mutate freely. */
function runEvent(): LooseEvent {
  return {
    eventType: 'START',
    eventTime: '2024-05-01T12:30:00.000Z',
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: '0190f2a4-8c1e-7c3b-9a5e-3f1d2c4b5a69', facets: {} },
    job: { namespace: 'spark://cluster', name: 'daily_orders', facets: {} },
    inputs: [{ namespace: 'postgres://db:5432', name: 'shop.public.orders', facets: {}, inputFacets: {} }],
    outputs: [{ namespace: 's3://lake', name: 'orders/daily', facets: {}, outputFacets: {} }],
  };
}

function facet(fields: Record<string, unknown>): Record<string, unknown> {
  return { _producer: PRODUCER, _schemaURL: 'https://example.com/schemas/facet.json', ...fields };
}

describe.skipIf(!corpus)('conformance events', () => {
  it('covers the real producer events of the manifest', () => {
    expect(realEntries.length).toBeGreaterThanOrEqual(100);
    expect(realEntries.map((e) => `${e.group}/${e.file}`)).toContain(NO_RUN_ID);
  });

  describe.each(realEntries)('$group/$file ($status)', (entry) => {
    const name = `${entry.group}/${entry.file}`;

    it(
      name === NO_RUN_ID ? 'is rejected in lenient mode at $.run.runId' : 'is accepted in lenient mode',
      () => {
        for (const event of eventsOf(entry)) {
          if (name === NO_RUN_ID) {
            expect(lenient.validate(event)).toEqual({
              ok: false,
              kind: 'run',
              issues: [{ path: '$.run.runId', message: 'is required: a run needs a runId (a UUID)' }],
            });
          } else {
            expect(lenient.validate(event)).toEqual({ ok: true, kind: KIND[entry.kind] });
          }
        }
      },
    );

    it(entry.status === 'valid' ? 'is accepted in strict mode' : 'is rejected in strict mode', () => {
      for (const event of eventsOf(entry)) {
        const result = strict().validate(event);
        if (entry.status === 'valid') {
          expect(result).toEqual({ ok: true, kind: KIND[entry.kind] });
          continue;
        }
        expect(result.ok).toBe(false);
        expect(result.kind).toBe(KIND[entry.kind]);
        const paths = pathsOf(result);
        // Each location the manifest's reference validator named is reported, at it or beneath it.
        for (const noted of notedPaths(entry.notes)) {
          expect(paths.some((p) => p === noted || p.startsWith(`${noted}.`))).toBe(true);
        }
        if (entry.status === 'facet-invalid') expect(paths.every((p) => FACET_PATH.test(p))).toBe(true);
        else expect(paths.some((p) => !FACET_PATH.test(p))).toBe(true);
      }
    });
  });

  it.each([
    [
      'event_invalid_run_facet.json',
      '$.run.facets.parent.run.runId',
      'is required (per ParentRunFacet 1-2-0)',
    ],
    [
      'event_invalid_job_facet.json',
      '$.job.facets.ownership.owners[0].name',
      'is required (per OwnershipJobFacet 1-0-1)',
    ],
    [
      'event_invalid_dataset_facet.json',
      '$.outputs[0].facets.ownership.owners[0].name',
      'is required (per OwnershipDatasetFacet 1-0-1)',
    ],
    [
      'event_invalid_input_dataset_facet.json',
      '$.inputs[0].inputFacets.dataQualityMetrics.columnMetrics',
      'is required (per DataQualityMetricsInputDatasetFacet 1-0-3)',
    ],
    [
      'event_invalid_output_dataset_facet.json',
      '$.outputs[0].outputFacets.outputStatistics.rowCount',
      'must be of type integer, got "wrong" (per OutputStatisticsOutputDatasetFacet 1-0-2)',
    ],
  ])('strict mode rejects fluentd-proxy/%s at the offending facet', (file, issuePath, message) => {
    const event = readJson(path.join(conformanceDir, 'openlineage-events', 'fluentd-proxy', file));
    expect(strict().validate(event)).toEqual({
      ok: false,
      kind: 'run',
      issues: [{ path: issuePath, message }],
    });
    expect(lenient.validate(event)).toEqual({ ok: true, kind: 'run' });
  });

  it('lists every uri violation of a Spark event, including ones the manifest note leaves out', () => {
    const event = readJson(path.join(conformanceDir, 'openlineage-events', 'spark-cll', '5.json'));
    expect(strict().validate(event)).toEqual({
      ok: false,
      kind: 'run',
      issues: ['$.inputs[0]', '$.inputs[1]', '$.outputs[0]'].map((dataset) => ({
        path: `${dataset}.facets.dataSource.uri`,
        message: 'must be a valid uri, got "file" (per DatasourceDatasetFacet 1-0-1)',
      })),
    });
  });
});

describe.skipIf(!corpus)('strict mode: standard facets', () => {
  // spec/tests holds { "<facetKey>": {...} } fragments that upstream validates against each facet schema.
  const testsDir = path.join(conformanceDir, 'spec', 'tests');
  const fragments = (corpus ? readdirSync(testsDir, { withFileTypes: true }) : [])
    .filter((entry) => entry.isDirectory())
    .flatMap((dir) =>
      readdirSync(path.join(testsDir, dir.name))
        .filter((file) => file.endsWith('.json'))
        .map((file) => ({
          facetSchema: dir.name,
          file,
          fragment: readJson(path.join(testsDir, dir.name, file)),
        })),
    )
    .map(({ facetSchema, file, fragment }) => {
      const [key, value] = Object.entries(fragment as Record<string, Record<string, unknown>>)[0]!;
      const schemaUrl = String(value._schemaURL);
      // The container follows the base the facet extends; three schemas are not named after theirs.
      const container =
        facetSchema === 'DataQualityAssertionsDatasetFacet' || schemaUrl.includes('InputSubset')
          ? 'inputFacets'
          : schemaUrl.endsWith('LineageJobFacet')
            ? 'job'
            : facetSchema.endsWith('RunFacet')
              ? 'run'
              : facetSchema.endsWith('JobFacet')
                ? 'job'
                : facetSchema.endsWith('InputDatasetFacet')
                  ? 'inputFacets'
                  : facetSchema.endsWith('OutputDatasetFacet')
                    ? 'outputFacets'
                    : 'facets';
      return { name: `${facetSchema}/${file}`, key, value, container };
    });

  function withFacet(container: string, key: string, value: unknown): LooseEvent {
    const event = runEvent();
    if (container === 'run' || container === 'job') event[container].facets[key] = value;
    else if (container === 'outputFacets') event.outputs[0].outputFacets[key] = value;
    else event.inputs[0][container][key] = value;
    return event;
  }

  it('reads the 46 upstream facet examples', () => {
    expect(fragments).toHaveLength(46);
  });

  it.each(fragments)('accepts the upstream example $name in $container', ({ container, key, value }) => {
    expect(strict().validate(withFacet(container, key, value))).toEqual({ ok: true, kind: 'run' });
  });

  it('accepts a complete base event', () => {
    expect(strict().validate(runEvent())).toEqual({ ok: true, kind: 'run' });
  });

  it('picks the subset schema by container (input vs output condition)', () => {
    const subset = fragments.find((f) => f.key === 'subset')!.value;
    expect(strict().validate(withFacet('inputFacets', 'subset', subset))).toEqual({ ok: true, kind: 'run' });
    const asOutput = strict().validate(withFacet('outputFacets', 'subset', subset));
    expect(issuesOf(asOutput)).toContainEqual({
      path: '$.outputs[0].outputFacets.subset.outputCondition',
      message: 'is required (per OutputSubsetOutputDatasetFacet 1-0-0)',
    });
  });

  it('validates the same key against the schema of its container', () => {
    const event = runEvent();
    event.run.facets.tags = facet({ tags: [{ key: 'team' }] });
    event.job.facets.tags = facet({ tags: [{ key: 'team' }] });
    event.outputs[0].facets.tags = facet({ tags: [{ key: 'team' }] });
    event.job.facets.documentation = facet({});
    event.outputs[0].facets.documentation = facet({});
    expect(issuesOf(strict().validate(event))).toEqual([
      { path: '$.run.facets.tags.tags[0].value', message: 'is required (per TagsRunFacet 1-0-0)' },
      { path: '$.job.facets.tags.tags[0].value', message: 'is required (per TagsJobFacet 1-0-0)' },
      {
        path: '$.job.facets.documentation.description',
        message: 'is required (per DocumentationJobFacet 1-1-0)',
      },
      { path: '$.outputs[0].facets.tags.tags[0].value', message: 'is required (per TagsDatasetFacet 1-0-0)' },
      {
        path: '$.outputs[0].facets.documentation.description',
        message: 'is required (per DocumentationDatasetFacet 1-1-0)',
      },
    ]);
  });

  it('accepts custom facets with any content, and names odd keys in bracket notation', () => {
    const event = runEvent();
    event.run.facets['spark.logicalPlan'] = facet({ plan: [{ anything: true }] });
    event.job.facets.airflow = facet({ dag: 42 });
    expect(strict().validate(event)).toEqual({ ok: true, kind: 'run' });
    delete event.run.facets['spark.logicalPlan']._producer;
    expect(issuesOf(strict().validate(event))).toEqual([
      {
        path: "$.run.facets['spark.logicalPlan']._producer",
        message: 'is required (per OpenLineage 2-0-2 RunEvent)',
      },
    ]);
  });

  it('does not apply facet schemas to a facet marked _deleted', () => {
    const event = runEvent();
    event.job.facets.sql = facet({ _deleted: true });
    expect(strict().validate(event)).toEqual({ ok: true, kind: 'run' });
    event.job.facets.sql = facet({});
    expect(issuesOf(strict().validate(event))).toEqual([
      { path: '$.job.facets.sql.query', message: 'is required (per SQLJobFacet 1-1-0)' },
    ]);
  });

  it('validates DatasetEvent facets against dataset facet schemas', () => {
    const event = {
      eventTime: '2024-05-01T12:30:00Z',
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
      dataset: {
        namespace: 's3://lake',
        name: 'orders',
        facets: { schema: facet({ fields: [{ type: 'int' }] }) },
      },
    };
    expect(strict().validate(event)).toEqual({
      ok: false,
      kind: 'dataset',
      issues: [
        {
          path: '$.dataset.facets.schema.fields[0].name',
          message: 'is required (per SchemaDatasetFacet 1-2-0)',
        },
      ],
    });
  });
});

describe('strict mode: core and reporting', () => {
  it('reports lenient issues first, then schema issues, each path once', () => {
    const event = runEvent();
    event.eventTime = '2024-05-01';
    event.job.name = '';
    delete event.run.runId;
    delete event.schemaURL;
    event.producer = 'spark';
    event.run.facets.nominalTime = facet({ nominalStartTime: 'yesterday' });
    expect(strict().validate(event)).toEqual({
      ok: false,
      kind: 'run',
      issues: [
        {
          path: '$.eventTime',
          message:
            'must be an ISO-8601 date-time with at least hours and minutes, such as "2024-05-01T12:30:00.000Z", got "2024-05-01"',
        },
        { path: '$.run.runId', message: 'is required: a run needs a runId (a UUID)' },
        { path: '$.job.name', message: 'must be a non-empty string (the job name), got ""' },
        { path: '$.schemaURL', message: 'is required (per OpenLineage 2-0-2 RunEvent)' },
        { path: '$.producer', message: 'must be a valid uri, got "spark" (per OpenLineage 2-0-2 RunEvent)' },
        {
          path: '$.run.facets.nominalTime.nominalStartTime',
          message: 'must be a valid date-time, got "yesterday" (per NominalTimeRunFacet 1-0-1)',
        },
      ],
    });
  });

  it('rejects a runId that is not a UUID and an eventTime without offset', () => {
    const event = runEvent();
    event.run.runId = 'run_id';
    event.eventTime = '2024-05-01T12:30:00.123456';
    expect(pathsOf(strict().validate(event))).toEqual(['$.eventTime', '$.run.runId']);
    expect(lenient.validate(event)).toEqual({ ok: true, kind: 'run' });
  });

  it('validates the facets of a JobEvent', () => {
    const event = {
      eventTime: '2024-05-01T12:30:00Z',
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent',
      job: { namespace: 'ns', name: 'j', facets: { sql: facet({ query: 'select 1' }) } },
      inputs: [{ namespace: 'ns', name: 'd', inputFacets: { dataQualityMetrics: facet({ rowCount: 3 }) } }],
    };
    expect(strict().validate(event)).toEqual({
      ok: false,
      kind: 'job',
      issues: [
        {
          path: '$.inputs[0].inputFacets.dataQualityMetrics.columnMetrics',
          message: 'is required (per DataQualityMetricsInputDatasetFacet 1-0-3)',
        },
      ],
    });
    event.inputs[0]!.inputFacets.dataQualityMetrics = facet({ rowCount: 3, columnMetrics: {} });
    expect(strict().validate(event)).toEqual({ ok: true, kind: 'job' });
  });

  it('structure level: types, required fields and enums, but no formats', () => {
    const event = runEvent();
    event.run.runId = 'run_id';
    event.producer = 'spark';
    event.inputs[0].facets.dataSource = facet({ name: 'file', uri: 'file' });
    event.run.facets.nominalTime = facet({ nominalStartTime: 'yesterday' });
    expect(structure().validate(event)).toEqual({ ok: true, kind: 'run' });
    expect(pathsOf(strict().validate(event))).toEqual([
      '$.producer',
      '$.run.runId',
      '$.run.facets.nominalTime.nominalStartTime',
      '$.inputs[0].facets.dataSource.uri',
    ]);
    event.eventType = 'DONE';
    event.run.facets.nominalTime = facet({ nominalStartTime: 20240501 });
    event.outputs[0].facets.schema = facet({ fields: [{ type: 'long' }] });
    expect(structure().validate(event)).toEqual({
      ok: false,
      kind: 'run',
      issues: [
        {
          path: '$.eventType',
          message: 'must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER, got "DONE"',
        },
        {
          path: '$.run.facets.nominalTime.nominalStartTime',
          message: 'must be of type string, got 20240501 (per NominalTimeRunFacet 1-0-1)',
        },
        {
          path: '$.outputs[0].facets.schema.fields[0].name',
          message: 'is required (per SchemaDatasetFacet 1-2-0)',
        },
      ],
    });
  });

  it('needs no specDir; one given adds schemas (the newest facet version applies), and one that is wrong is named', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'headwater-spec-'));
    try {
      const parentSchema = (version: string, extra: Record<string, unknown>) => ({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: `https://openlineage.io/spec/facets/${version}/ParentRunFacet.json`,
        $defs: {
          ParentRunFacet: {
            allOf: [
              { $ref: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet' },
              { type: 'object', required: ['run', 'job', 'owner'], ...extra },
            ],
          },
        },
        type: 'object',
        properties: { parent: { $ref: '#/$defs/ParentRunFacet' } },
      });
      mkdirSync(path.join(dir, 'facets', '9-0-0'), { recursive: true });
      writeFileSync(
        path.join(dir, 'facets', '9-0-0', 'ParentRunFacet.json'),
        JSON.stringify(parentSchema('9-0-0', {})),
      );
      const event = runEvent();
      event.run.facets.parent = facet({
        run: { runId: '0190f3c2-7b1e-7cc0-9a55-5b3f4a0d1e12' },
        job: { namespace: 'ns', name: 'parent' },
      });
      expect(createValidator({ strict: 'structure' }).validate(event)).toEqual({ ok: true, kind: 'run' });
      expect(createValidator({ strict: 'structure', specDir: dir }).validate(event)).toEqual({
        ok: false,
        kind: 'run',
        issues: [{ path: '$.run.facets.parent.owner', message: 'is required (per ParentRunFacet 9-0-0)' }],
      });

      const missing = path.join(dir, 'no-such-dir');
      expect(() => createValidator({ strict: 'structure', specDir: missing })).toThrow(missing);
      writeFileSync(
        path.join(dir, 'facets', '9-0-0', 'ParentRunFacet.json'),
        JSON.stringify(parentSchema('9-0-0', { $ref: 'https://example.com/missing.json' })),
      );
      expect(() => createValidator({ strict: 'formats', specDir: dir })).toThrow(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('lenient mode', () => {
  it('accepts the base event, a JobEvent and a DatasetEvent', () => {
    expect(lenient.validate(runEvent())).toEqual({ ok: true, kind: 'run' });
    const job = { eventTime: '2024-05-01T12:30Z', producer: 'me', job: { namespace: 'ns', name: 'j' } };
    expect(lenient.validate(job)).toEqual({ ok: true, kind: 'job' });
    const dataset = {
      eventTime: '2024-05-01T12:30Z',
      producer: 'me',
      dataset: { namespace: 'ns', name: 'd' },
    };
    expect(lenient.validate(dataset)).toEqual({ ok: true, kind: 'dataset' });
  });

  it('reports a missing eventTime', () => {
    const event = runEvent();
    delete event.eventTime;
    expect(lenient.validate(event)).toEqual({
      ok: false,
      kind: 'run',
      issues: [
        {
          path: '$.eventTime',
          message:
            'is required: the time the event occurred, an ISO-8601 date-time such as "2024-05-01T12:30:00.000Z"',
        },
      ],
    });
  });

  it.each([
    ['2024-05-01T12:30:00.000Z', true],
    ['2024-05-01T12:30:00.123456', true], // no offset: Python client and Marquez accept it
    ['2024-05-01T12:30:00.123456789+02:00', true], // nanoseconds
    ['2024-05-01T12:30+0530', true],
    ['2024-05-01 12:30:00-07', true],
    ['2024-02-29T00:00:00Z', true],
    ['2024-12-31T23:59:60Z', true], // leap second
    ['2024-05-01', false], // a date alone
    ['2023-02-29T00:00:00Z', false],
    ['2024-13-01T00:00:00Z', false],
    ['2024-05-01T24:00:00Z', false],
    ['2024-05-01T12:30:00+25:00', false],
    ['2024-05-01T12', false],
    ['1714566600000', false],
    ['', false],
  ])('eventTime %j: accepted %s', (eventTime, accepted) => {
    const result = lenient.validate({ ...runEvent(), eventTime });
    expect(result.ok).toBe(accepted);
    expect(pathsOf(result)).toEqual(accepted ? [] : ['$.eventTime']);
  });

  it.each([null, 42, 'event', true, []])('rejects the body %j as not an object', (body) => {
    expect(lenient.validate(body)).toEqual({
      ok: false,
      kind: undefined,
      issues: [
        {
          path: '$',
          message: expect.stringMatching(
            /^must be a JSON object \(an OpenLineage RunEvent, DatasetEvent or JobEvent\), got /,
          ),
        },
      ],
    });
  });

  it('says what an array body is', () => {
    expect(issuesOf(lenient.validate([runEvent()]))[0]?.message).toMatch(/got an array$/);
  });

  it('rejects an event with an eventType but no run, unless its schemaURL says JobEvent: a RunEvent needs its run', () => {
    const { run: _run, ...event } = runEvent();
    expect(lenient.validate(event)).toEqual({
      ok: false,
      kind: 'job',
      issues: [
        {
          path: '$.run',
          message:
            'is required: an event with an eventType is a RunEvent, which needs the run it reports on ' +
            '({ "runId": "<a UUID>" }); add the run, or remove eventType (or give the JobEvent schemaURL) ' +
            'to send a JobEvent',
        },
      ],
    });
    // A RunEvent schemaURL does not make it one without its run.
    const runEventUrl = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
    expect(lenient.validate({ ...event, schemaURL: runEventUrl }).ok).toBe(false);
    // The JobEvent schemaURL says what it is: accepted as a JobEvent, as Marquez accepts its own test event.
    const jobEventUrl = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent';
    expect(lenient.validate({ ...event, schemaURL: jobEventUrl })).toEqual({ ok: true, kind: 'job' });
    // Without eventType it is a JobEvent; a null eventType counts as absent.
    const { eventType: _type, ...jobEvent } = event;
    expect(lenient.validate(jobEvent)).toEqual({ ok: true, kind: 'job' });
    expect(lenient.validate({ ...jobEvent, eventType: null })).toEqual({ ok: true, kind: 'job' });
  });

  it('rejects an object with none of run, dataset and job', () => {
    const { run: _run, job: _job, ...event } = runEvent();
    expect(lenient.validate(event)).toEqual({
      ok: false,
      kind: undefined,
      issues: [{ path: '$', message: expect.stringContaining('it has none of run, dataset and job') }],
    });
  });

  it.each<[string, (event: LooseEvent) => void, string[]]>([
    ['missing job.name', (e) => delete e.job.name, ['$.job.name']],
    ['missing job', (e) => delete e.job, ['$.job']],
    ['wrong eventType', (e) => (e.eventType = 'FINISHED'), ['$.eventType']],
    ['inputs not an array', (e) => (e.inputs = { namespace: 'ns', name: 'n' }), ['$.inputs']],
    ['input without name', (e) => delete e.inputs[0].name, ['$.inputs[0].name']],
    ['output not an object', (e) => (e.outputs = ['s3://lake/orders']), ['$.outputs[0]']],
    ['empty runId', (e) => (e.run.runId = ''), ['$.run.runId']],
    ['run facets an array', (e) => (e.run.facets = []), ['$.run.facets']],
    ['inputFacets a string', (e) => (e.inputs[0].inputFacets = 'x'), ['$.inputs[0].inputFacets']],
    ['producer a number', (e) => (e.producer = 1), ['$.producer']],
  ])('reports %s', (_name, mutate, paths) => {
    const event = runEvent();
    mutate(event);
    expect(pathsOf(lenient.validate(event))).toEqual(paths);
  });

  it('reports every issue at once, each with what is expected', () => {
    const event = runEvent();
    delete event.eventTime;
    event.producer = '';
    event.eventType = 'finished';
    event.run.runId = 42;
    delete event.job.name;
    event.inputs = [...event.inputs, { namespace: 'ns', facets: 'none' }];
    event.outputs = {};
    expect(lenient.validate(event)).toEqual({
      ok: false,
      kind: 'run',
      issues: [
        {
          path: '$.eventTime',
          message:
            'is required: the time the event occurred, an ISO-8601 date-time such as "2024-05-01T12:30:00.000Z"',
        },
        {
          path: '$.producer',
          message: 'must be a non-empty string (a URI naming the code that emitted the event), got ""',
        },
        {
          path: '$.eventType',
          message: 'must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER, got "finished"',
        },
        { path: '$.run.runId', message: 'must be a non-empty string (a UUID), got 42' },
        { path: '$.job.name', message: 'is required: a job needs a name' },
        { path: '$.inputs[1].name', message: 'is required: an input dataset needs a name' },
        {
          path: '$.inputs[1].facets',
          message: 'must be an object mapping facet names to facets, got "none"',
        },
        {
          path: '$.outputs',
          message: 'must be an array of output datasets ({ namespace, name }), got an object',
        },
      ],
    });
  });

  it.skipIf(!corpus)('keeps what strict mode would reject but the server can store', () => {
    const event = runEvent();
    event.run.runId = 'run_id';
    delete event.schemaURL;
    event.eventTime = '2020-12-28T19:51:01.641499';
    event.run.facets.parent = { run: {} }; // a malformed standard facet is kept verbatim
    event.inputs[0].facets.dataSource = facet({ uri: 'file' });
    event.eventType = null;
    event.outputs = null;
    expect(lenient.validate(event)).toEqual({ ok: true, kind: 'run' });
    expect(strict().validate(event).ok).toBe(false);
  });

  it('checks dataset and job names of DatasetEvents and JobEvents', () => {
    const dataset = { eventTime: '2024-05-01T12:30Z', producer: 'me', dataset: { namespace: 'ns' } };
    expect(pathsOf(lenient.validate(dataset))).toEqual(['$.dataset.name']);
    const job = { eventTime: '2024-05-01T12:30Z', producer: 'me', job: { name: 'j' }, inputs: [{}] };
    expect(pathsOf(lenient.validate(job))).toEqual([
      '$.job.namespace',
      '$.inputs[0].namespace',
      '$.inputs[0].name',
    ]);
  });
});

describe('eventKindOf', () => {
  it.each<[unknown, EventKind | undefined]>([
    [{ run: {}, job: {} }, 'run'],
    [{ run: null }, 'run'],
    [{ run: {}, dataset: {}, job: {} }, 'run'],
    [{ dataset: {}, job: {} }, 'dataset'],
    [{ dataset: {} }, 'dataset'],
    [{ job: {} }, 'job'],
    [{ eventTime: '2024-05-01T12:30Z' }, undefined],
    [[{ run: {} }], undefined],
    [null, undefined],
    ['run', undefined],
  ])('%j -> %s', (event, kind) => {
    expect(eventKindOf(event)).toBe(kind);
  });
});

describe('properties', () => {
  const isPlainObject = (value: unknown): boolean =>
    typeof value === 'object' && value !== null && !Array.isArray(value);

  function checkInvariants(value: unknown, result: ValidationResult): void {
    expect(result.kind).toBe(eventKindOf(value));
    if (!result.ok) {
      expect(result.issues.length).toBeGreaterThan(0);
      for (const issue of result.issues) expect(issue.path).toMatch(/^\$/);
    }
  }

  it('lenient mode never throws and rejects every value that is not an object', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue()), (value) => {
        const result = lenient.validate(value);
        checkInvariants(value, result);
        if (!isPlainObject(value)) {
          expect(result).toMatchObject({ ok: false, kind: undefined, issues: [{ path: '$' }] });
        }
      }),
      { numRuns: 2000 },
    );
  });

  // Event-shaped values reach the deeper checks that arbitrary values rarely get to.
  const anyOr = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof(arbitrary, fc.jsonValue());
  const text = fc.oneof(fc.constant(''), fc.string(), fc.constant('2024-05-01T12:30:00Z'), fc.uuid());
  const facets = anyOr(fc.dictionary(fc.constantFrom('schema', 'parent', 'sql', 'x'), fc.jsonValue()));
  const dataset = anyOr(
    fc.record(
      { namespace: anyOr(text), name: anyOr(text), facets, inputFacets: facets, outputFacets: facets },
      { requiredKeys: [] },
    ),
  );
  const eventLike = fc.record(
    {
      eventTime: anyOr(text),
      producer: anyOr(text),
      eventType: anyOr(fc.constantFrom('START', 'COMPLETE', 'DONE')),
      run: anyOr(fc.record({ runId: anyOr(text), facets }, { requiredKeys: [] })),
      job: anyOr(fc.record({ namespace: anyOr(text), name: anyOr(text), facets }, { requiredKeys: [] })),
      dataset,
      inputs: anyOr(fc.array(dataset, { maxLength: 3 })),
      outputs: anyOr(fc.array(dataset, { maxLength: 3 })),
    },
    { requiredKeys: [] },
  );

  it.skipIf(!corpus)(
    'both modes never throw on event-shaped values, and strict never accepts what lenient rejects',
    () => {
      fc.assert(
        fc.property(eventLike, (value) => {
          const lenientResult = lenient.validate(value);
          const strictResult = strict().validate(value);
          checkInvariants(value, lenientResult);
          checkInvariants(value, strictResult);
          if (!lenientResult.ok) expect(strictResult.ok).toBe(false);
        }),
        { numRuns: 1000 },
      );
    },
  );
});
