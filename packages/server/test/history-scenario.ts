import { columnLineage, runEvents, runId, schema } from './analysis-scenarios.js';

/**
 * The time-travel scenario (time-travel.test.ts), shared with retention.test.ts: a few days of history with
 * changing inputs and schemas, late events, a parent run, a DatasetEvent and a JobEvent.
 */

export const PRODUCER = 'https://example.com/headwater/time-travel-test';
export const NS = 'hist';
export const day = (d: number, time: string) => `2024-06-${String(d).padStart(2, '0')}T${time}Z`;
const s1 = schema([['id', 'int']]);
const s2 = schema([
  ['id', 'bigint'],
  ['x', 'text'],
]);

/**
 * hist: a job whose inputs and schema change over five days. load reads src_a (day 1), then src_b (day 2: src_a
 * is retired once that run completes), then fails (day 3, writing schema 1 again: A, B, A), then reads src_a again
 * (day 4, its COMPLETE arriving before its START, under a parent run that has no events of its own). report
 * reads tbl with column lineage that grows on day 3, when its run only starts. Day 5: a DatasetEvent drops tbl and
 * a JobEvent declares static lineage.
 */
export function historyScenario(): unknown[] {
  const load = (n: number, d: number, input: string, tblSchema: unknown, ends: 'COMPLETE' | 'FAIL') =>
    runEvents({
      namespace: NS,
      job: 'load',
      runId: runId(9, n),
      start: day(d, '01:00:00'),
      end: day(d, ends === 'FAIL' ? '01:05:00' : '01:10:00'),
      ends,
      ...(ends === 'FAIL' ? { error: 'disk full' } : {}),
      inputs: [{ name: input }],
      outputs: [
        { name: 'tbl', facets: { schema: tblSchema }, outputFacets: { outputStatistics: { rowCount: n } } },
      ],
    });
  const report = (n: number, d: number, fields: Record<string, [string, string, string][]>, end?: string) =>
    runEvents({
      namespace: NS,
      job: 'report',
      runId: runId(9, n),
      start: day(d, '02:00:00'),
      ...(end ? { end } : { running: day(d, '02:30:00') }),
      inputs: [{ name: 'tbl' }],
      outputs: [{ name: 'rep', facets: { columnLineage: columnLineage(NS, fields) } }],
    });
  const [reportStart1, reportEnd1] = report(2, 1, { id: [['tbl', 'id', 'IDENTITY']] }, day(1, '02:10:00'));
  const [start6, end6] = load(6, 4, 'src_a', s2, 'COMPLETE') as Record<string, unknown>[];
  const parent = {
    parent: {
      _producer: PRODUCER,
      _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json#/$defs/ParentRunFacet',
      run: { runId: runId(9, 7) },
      job: { namespace: NS, name: 'orchestrator' },
    },
  };
  const withParent = (event: Record<string, unknown>) => ({
    ...event,
    run: {
      ...(event.run as Record<string, unknown>),
      facets: { ...(event.run as { facets: object }).facets, ...parent },
    },
  });
  return [
    ...load(1, 1, 'src_a', s1, 'COMPLETE'),
    reportEnd1,
    ...load(3, 2, 'src_b', s2, 'COMPLETE'),
    ...load(4, 3, 'src_b', s1, 'FAIL'),
    ...report(5, 3, { id: [['tbl', 'id', 'IDENTITY']], x: [['tbl', 'x', 'IDENTITY']] }),
    withParent(end6!),
    withParent(start6!),
    {
      eventTime: day(5, '01:00:00'),
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
      dataset: {
        namespace: NS,
        name: 'tbl',
        facets: {
          lifecycleStateChange: {
            _producer: PRODUCER,
            _schemaURL:
              'https://openlineage.io/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json#/$defs/LifecycleStateChangeDatasetFacet',
            lifecycleStateChange: 'DROP',
          },
        },
      },
    },
    {
      eventTime: day(5, '03:00:00'),
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent',
      job: { namespace: NS, name: 'static_job', facets: {} },
      inputs: [{ namespace: NS, name: 'tbl' }],
      outputs: [{ namespace: NS, name: 'static_out' }],
    },
    // Late: the day-1 report run's START arrives after everything else.
    reportStart1,
  ];
}
