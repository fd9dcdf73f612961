import { describe, expect, test } from 'vitest';
import type { DatasetVersionRef, Run } from './types.js';
import { assertionHistories, observationsOf, statisticsOf } from './run-observations.js';

const run = (
  id: string,
  endedAt: string,
  state: Run['state'],
  inputs: DatasetVersionRef[],
  outputs: DatasetVersionRef[] = [],
): Run => ({
  id,
  createdAt: endedAt,
  updatedAt: endedAt,
  nominalStartTime: null,
  nominalEndTime: null,
  state,
  startedAt: endedAt,
  endedAt,
  durationMs: 1000,
  args: {},
  jobVersion: { namespace: 'dbt', name: 'dbt.model', version: 'v' },
  inputDatasetVersions: inputs,
  outputDatasetVersions: outputs,
  facets: {},
});
const ref = (name: string, facets: Record<string, unknown>) => ({
  datasetVersionId: { namespace: 'wh', name, version: 'v1' },
  facets,
});
const assertions = (success: boolean, actual: string) => ({
  dataQualityAssertions: {
    assertions: [
      {
        assertion: 'freshness',
        column: '_loaded_at',
        success,
        severity: 'error',
        expected: '<= 24h',
        actual,
      },
      { assertion: 'not_null', column: 'id', success: true },
      { assertion: 'broken' },
    ],
  },
});

describe('run observations', () => {
  const runs = [
    run('r2', '2025-03-14T04:00:00Z', 'COMPLETED', [
      ref('orders', {
        ...assertions(false, '25h'),
        dataQualityMetrics: { rowCount: 120, bytes: 900, columnMetrics: { id: { nullCount: 2 } } },
      }),
      ref('other', assertions(true, '1h')),
    ]),
    run(
      'r1',
      '2025-03-13T04:00:00Z',
      'COMPLETED',
      [ref('orders', assertions(true, '2h'))],
      [ref('orders', { outputStatistics: { rowCount: 100, size: 800 } })],
    ),
  ];

  test('only the named dataset, oldest first, with the role it had', () => {
    const found = observationsOf('wh', 'orders', runs);
    expect(found.map((o) => [o.runId, o.role])).toEqual([
      ['r1', 'input'],
      ['r1', 'output'],
      ['r2', 'input'],
    ]);
  });

  test('assertions by name and column, failing ones first, each newest first; malformed ones left out', () => {
    const histories = assertionHistories(observationsOf('wh', 'orders', runs));
    expect(histories.map((h) => `${h.assertion}(${h.column})`)).toEqual([
      'freshness(_loaded_at)',
      'not_null(id)',
    ]);
    expect(histories[0]!.results.map((r) => [r.runId, r.success, r.actual])).toEqual([
      ['r2', false, '25h'],
      ['r1', true, '2h'],
    ]);
    expect(histories[1]!.results[0]).toMatchObject({ severity: null, expected: null, actual: null });
  });

  test('rows and bytes written and read kept apart; null counts per column', () => {
    const stats = statisticsOf(observationsOf('wh', 'orders', runs));
    expect(stats.rowsWritten.map((p) => [p.runId, p.value])).toEqual([['r1', 100]]);
    expect(stats.bytesWritten.map((p) => p.value)).toEqual([800]);
    expect(stats.rowsRead.map((p) => [p.runId, p.value])).toEqual([['r2', 120]]);
    expect(stats.bytesRead.map((p) => p.value)).toEqual([900]);
    expect([...stats.nullCount]).toEqual([['id', [{ at: '2025-03-14T04:00:00Z', value: 2, runId: 'r2' }]]]);
  });
});
