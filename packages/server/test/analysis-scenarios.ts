/**
 * Small hand-made lineage scenarios for the analysis tests, as OpenLineage events. All in 2024, before the demo
 * week, so that a store holding both still has the demo's last event as its newest.
 */

const PRODUCER = 'https://example.com/headwater/analysis-test';
const RUN_EVENT = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';

const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});

/** A deterministic run id: scenario number and run number. */
export const runId = (scenario: number, n: number): string =>
  `00000000-0000-4000-8${scenario}00-${String(n).padStart(12, '0')}`;

export const schema = (fields: readonly (readonly [string, string])[]) =>
  facet('SchemaDatasetFacet', { fields: fields.map(([name, type]) => ({ name, type })) });

export const columnLineage = (
  namespace: string,
  fields: Record<string, readonly (readonly [dataset: string, field: string, subtype: string])[]>,
) =>
  facet('ColumnLineageDatasetFacet', {
    fields: Object.fromEntries(
      Object.entries(fields).map(([field, inputs]) => [
        field,
        {
          inputFields: inputs.map(([name, inputField, subtype]) => ({
            namespace,
            name,
            field: inputField,
            transformations: [{ type: subtype === 'FILTER' ? 'INDIRECT' : 'DIRECT', subtype }],
          })),
        },
      ]),
    ),
  });

const ownership = (...names: string[]) =>
  facet('OwnershipDatasetFacet', { owners: names.map((name) => ({ name, type: 'OWNER' })) });

interface Io {
  readonly name: string;
  readonly facets?: Record<string, unknown>;
  readonly inputFacets?: Record<string, unknown>;
  readonly outputFacets?: Record<string, unknown>;
}

export interface RunSpec {
  readonly namespace: string;
  readonly job: string;
  readonly runId: string;
  readonly start: string;
  /** The terminal event's time; absent for a run that only starts (and reports RUNNING at `running`). */
  readonly end?: string;
  readonly running?: string;
  readonly ends?: 'COMPLETE' | 'FAIL';
  readonly error?: string;
  readonly inputs?: readonly Io[];
  readonly outputs?: readonly Io[];
  readonly jobFacets?: Record<string, unknown>;
}

export function runEvents(spec: RunSpec): unknown[] {
  const event = (eventType: string, eventTime: string, terminal: boolean) => ({
    eventType,
    eventTime,
    producer: PRODUCER,
    schemaURL: RUN_EVENT,
    run: {
      runId: spec.runId,
      facets:
        terminal && spec.error
          ? {
              errorMessage: facet('ErrorMessageRunFacet', {
                message: spec.error,
                programmingLanguage: 'sql',
              }),
            }
          : {},
    },
    job: { namespace: spec.namespace, name: spec.job, facets: spec.jobFacets ?? {} },
    inputs: (spec.inputs ?? []).map(({ outputFacets: _, inputFacets, ...io }) => ({
      namespace: spec.namespace,
      ...io,
      ...(terminal && inputFacets ? { inputFacets } : {}),
    })),
    outputs: (spec.outputs ?? []).map(({ inputFacets: _, outputFacets, ...io }) => ({
      namespace: spec.namespace,
      ...io,
      ...(terminal && outputFacets ? { outputFacets } : {}),
    })),
  });
  const events = [event('START', spec.start, false)];
  if (spec.running) events.push(event('RUNNING', spec.running, false));
  if (spec.end) events.push(event(spec.ends ?? 'COMPLETE', spec.end, true));
  return events;
}

const day = (d: number, time: string) => `2024-05-${String(d).padStart(2, '0')}T${time}Z`;

const assertions = (notNullOk: boolean) => ({
  dataQualityAssertions: facet('DataQualityAssertionsDatasetFacet', {
    assertions: [
      {
        assertion: 'not_null',
        column: 'id',
        success: notNullOk,
        expected: '0',
        actual: notNullOk ? '0' : '3',
      },
      { assertion: 'unique', column: 'id', success: true },
    ],
  }),
});

/**
 * ops: extract -> raw -> transform -> clean -> publish -> report. extract completes on days 1-3 only (raw goes
 * stale), transform completes on days 1-5 and fails on day 6, publish completes every day and its not_null
 * assertion on clean fails on day 6.
 */
export function opsScenario(): unknown[] {
  const ns = 'ops';
  const events: unknown[] = [];
  for (let d = 1; d <= 6; d++) {
    if (d <= 3) {
      events.push(
        ...runEvents({
          namespace: ns,
          job: 'extract',
          runId: runId(1, 100 + d),
          start: day(d, '01:00:00'),
          end: day(d, '01:10:00'),
          outputs: [{ name: 'raw' }],
        }),
      );
    }
    events.push(
      ...runEvents({
        namespace: ns,
        job: 'transform',
        runId: runId(1, 200 + d),
        start: day(d, '02:00:00'),
        end: day(d, d === 6 ? '02:03:00' : '02:05:00'),
        ends: d === 6 ? 'FAIL' : 'COMPLETE',
        ...(d === 6 ? { error: 'division by zero\nin transform.sql line 12' } : {}),
        inputs: [{ name: 'raw' }],
        outputs: [{ name: 'clean' }],
      }),
      ...runEvents({
        namespace: ns,
        job: 'publish',
        runId: runId(1, 300 + d),
        start: day(d, '03:00:00'),
        end: day(d, '03:01:00'),
        inputs: [{ name: 'clean', inputFacets: assertions(d !== 6) }],
        outputs: [{ name: 'report' }],
      }),
    );
  }
  return events;
}

/**
 * schema: load -> s_src -> model -> s_out -> viz -> s_dash, with column lineage. On day 2, s_src changes
 * (id int -> bigint, amount removed, region added) and model fails.
 */
export function schemaScenario(): unknown[] {
  const ns = 'schema';
  const v1 = schema([
    ['id', 'int'],
    ['amount', 'int'],
    ['note', 'string'],
  ]);
  const v2 = schema([
    ['id', 'bigint'],
    ['note', 'string'],
    ['region', 'string'],
  ]);
  const out = {
    name: 's_out',
    facets: {
      schema: schema([
        ['id', 'bigint'],
        ['total', 'bigint'],
        ['n', 'string'],
      ]),
      ownership: ownership('team:models'),
      columnLineage: columnLineage(ns, {
        id: [['s_src', 'id', 'IDENTITY']],
        total: [['s_src', 'amount', 'AGGREGATION']],
        n: [['s_src', 'note', 'IDENTITY']],
      }),
    },
  };
  return [
    ...runEvents({
      namespace: ns,
      job: 'load',
      runId: runId(2, 1),
      start: day(1, '01:00:00'),
      end: day(1, '01:01:00'),
      outputs: [{ name: 's_src', facets: { schema: v1 } }],
    }),
    ...runEvents({
      namespace: ns,
      job: 'model',
      runId: runId(2, 2),
      start: day(1, '02:00:00'),
      end: day(1, '02:01:00'),
      inputs: [{ name: 's_src' }],
      outputs: [
        {
          ...out,
          outputFacets: { outputStatistics: facet('OutputStatisticsOutputDatasetFacet', { rowCount: 100 }) },
        },
      ],
    }),
    ...runEvents({
      namespace: ns,
      job: 'viz',
      runId: runId(2, 3),
      start: day(1, '03:00:00'),
      end: day(1, '03:00:10'),
      jobFacets: {
        ownership: facet('OwnershipJobFacet', { owners: [{ name: 'team:viz', type: 'MAINTAINER' }] }),
      },
      inputs: [{ name: 's_out' }],
      outputs: [
        {
          name: 's_dash',
          facets: {
            schema: schema([
              ['total', 'number'],
              ['n', 'string'],
            ]),
            columnLineage: columnLineage(ns, {
              total: [['s_out', 'total', 'IDENTITY']],
              n: [['s_out', 'n', 'IDENTITY']],
            }),
          },
        },
      ],
    }),
    ...runEvents({
      namespace: ns,
      job: 'load',
      runId: runId(2, 4),
      start: day(2, '01:00:00'),
      end: day(2, '01:01:00'),
      outputs: [{ name: 's_src', facets: { schema: v2 } }],
    }),
    ...runEvents({
      namespace: ns,
      job: 'model',
      runId: runId(2, 5),
      start: day(2, '02:00:00'),
      end: day(2, '02:00:30'),
      ends: 'FAIL',
      error: 'column "amount" does not exist',
      inputs: [{ name: 's_src' }],
      outputs: [out],
    }),
  ];
}

/** stream: topic -> ingest_stream (START and RUNNING only) -> events_table -> agg -> agg_out. */
export function streamScenario(): unknown[] {
  const ns = 'stream';
  return [
    ...runEvents({
      namespace: ns,
      job: 'ingest_stream',
      runId: runId(3, 1),
      start: day(20, '00:00:00'),
      running: day(20, '06:00:00'),
      inputs: [{ name: 'topic' }],
      outputs: [{ name: 'events_table' }],
    }),
    ...runEvents({
      namespace: ns,
      job: 'agg',
      runId: runId(3, 2),
      start: day(20, '07:00:00'),
      end: day(20, '07:05:00'),
      inputs: [{ name: 'events_table' }],
      outputs: [{ name: 'agg_out' }],
    }),
  ];
}
