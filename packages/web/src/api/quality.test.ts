import { describe, expect, test } from 'vitest';
import type { QualityObservationJson } from './analysis.js';
import { statisticsOf } from './quality.js';

const observation = (
  runId: string,
  at: string,
  fields: Partial<Pick<QualityObservationJson, 'output' | 'input' | 'metrics'>>,
): QualityObservationJson => ({
  runId,
  job: { namespace: 'dbt', name: 'dbt.model' },
  dataset: { namespace: 'wh', name: 'orders' },
  state: 'COMPLETED',
  at,
  output: null,
  input: null,
  metrics: null,
  assertions: [],
  ...fields,
});
const column = (name: string, nullCount: number | null, distinctCount: number | null) => ({
  column: name,
  nullCount,
  distinctCount,
  count: null,
  sum: null,
  min: null,
  max: null,
});

describe('statistics of a dataset from the server’s quality answer', () => {
  // Newest first, as the server answers.
  const runs = [
    observation('r3', '2025-03-14T05:00:00Z', {
      metrics: { rowCount: 130, bytes: null, fileCount: null, columns: [column('id', 0, 130)] },
    }),
    observation('r2', '2025-03-14T04:00:00Z', {
      input: { rowCount: 120, bytes: 900, fileCount: null },
      metrics: {
        rowCount: 119,
        bytes: 1,
        fileCount: null,
        columns: [column('id', 2, 118), column('email', null, null)],
      },
    }),
    observation('r1', '2025-03-13T04:00:00Z', { output: { rowCount: 100, bytes: 800, fileCount: 1 } }),
  ];

  test('rows and bytes written and read kept apart, oldest first; inputStatistics before the metrics', () => {
    const stats = statisticsOf(runs);
    expect(stats.rowsWritten.map((p) => [p.runId, p.value])).toEqual([['r1', 100]]);
    expect(stats.bytesWritten.map((p) => p.value)).toEqual([800]);
    expect(stats.rowsRead.map((p) => [p.runId, p.value])).toEqual([
      ['r2', 120],
      ['r3', 130],
    ]);
    expect(stats.bytesRead.map((p) => p.value)).toEqual([900]);
  });

  test('null and distinct counts per column; a column with no counts has no series', () => {
    const stats = statisticsOf(runs);
    expect([...stats.nullCount].map(([c, points]) => [c, points.map((p) => p.value)])).toEqual([
      ['id', [2, 0]],
    ]);
    expect([...stats.distinctCount].map(([c, points]) => [c, points.map((p) => p.value)])).toEqual([
      ['id', [118, 130]],
    ]);
  });
});
