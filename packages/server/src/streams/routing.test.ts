import { describe, expect, it } from 'vitest';
import { createRouter, matches, transformEvent } from './routing.js';

const event = (namespace: string, job: string, eventType = 'COMPLETE', producer = 'https://airflow/1.0') => ({
  eventType,
  eventTime: '2025-01-01T00:00:00Z',
  producer,
  run: {
    runId: 'r',
    facets: {
      spark_unknown: { x: 1 },
      parent: {
        run: { runId: 'p' },
        job: { namespace, name: 'dag' },
        root: { run: { runId: 'q' }, job: { namespace, name: 'root' } },
      },
    },
  },
  job: { namespace, name: job, facets: { sql: { query: 'select 1' } } },
  inputs: [
    {
      namespace: 'db',
      name: 't',
      facets: { schema: {}, spark_unknown: {} },
      inputFacets: { spark_unknown: {} },
    },
  ],
  outputs: [{ namespace: namespace, name: 'o', outputFacets: { outputStatistics: { rowCount: 1 } } }],
});

describe('routing rules', () => {
  it('matches on namespace, job-name pattern, event type and producer', () => {
    const e = event('prod-eu', 'etl.load_orders');
    expect(matches(e, { namespace: ['prod-*'] })).toBe(true);
    expect(matches(e, { namespace: ['dev'] })).toBe(false);
    expect(matches(e, { job: ['etl.*'] })).toBe(true);
    expect(matches(e, { job: ['*.tmp'] })).toBe(false);
    expect(matches(e, { eventType: ['COMPLETE', 'FAIL'] })).toBe(true);
    expect(matches(e, { eventType: ['START'] })).toBe(false);
    expect(matches(e, { producer: ['https://airflow/*'] })).toBe(true);
    expect(matches(e, { producer: ['https://spark/*'] })).toBe(false);
    // Every field given must match.
    expect(matches(e, { namespace: ['prod-*'], eventType: ['START'] })).toBe(false);
    expect(
      matches(
        { eventTime: 't', producer: 'p', dataset: { namespace: 'db', name: 't' } },
        { namespace: ['db'], eventType: ['DATASET'] },
      ),
    ).toBe(true);
    // A dot in a pattern is a dot, not any character.
    expect(matches(event('ns', 'etlXload'), { job: ['etl.load'] })).toBe(false);
  });

  it('routes by include and exclude, first matching route per sink, no routes to every sink', () => {
    const route = createRouter(
      [
        { sinks: ['archive'] },
        { sinks: ['marquez'], include: { namespace: ['prod-*'] }, exclude: { job: ['*.tmp'] } },
        {
          sinks: ['datahub', 'archive'],
          include: { eventType: ['COMPLETE'] },
          transform: { renameNamespaces: { 'prod-eu': 'prod' } },
        },
      ],
      ['archive', 'marquez', 'datahub'],
    );
    const sent = (e: ReturnType<typeof event>) => [...route(e, JSON.stringify(e)).keys()].sort();
    expect(sent(event('prod-eu', 'load'))).toEqual(['archive', 'datahub', 'marquez']);
    expect(sent(event('prod-eu', 'scratch.tmp'))).toEqual(['archive', 'datahub']);
    expect(sent(event('dev', 'load', 'START'))).toEqual(['archive']);
    const e = event('prod-eu', 'load');
    const out = route(e, JSON.stringify(e));
    // archive took the event from its first route, untransformed; datahub through the rename.
    expect(out.get('archive')).toBe(JSON.stringify(e));
    expect((JSON.parse(out.get('datahub')!) as { job: { namespace: string } }).job.namespace).toBe('prod');
    expect([...createRouter([], ['a', 'b'])(e, 'text').entries()]).toEqual([
      ['a', 'text'],
      ['b', 'text'],
    ]);
  });

  it('drops facets and renames namespaces everywhere, leaving the original alone', () => {
    const e = event('prod-eu', 'load');
    const out = transformEvent(e, {
      dropFacets: ['spark_unknown', 'sql'],
      renameNamespaces: { 'prod-eu': 'prod', db: 'warehouse' },
    }) as ReturnType<typeof event>;
    expect(Object.keys(out.run.facets)).toEqual(['parent']);
    expect(out.job).toEqual({ namespace: 'prod', name: 'load', facets: {} });
    expect(out.inputs[0]).toEqual({
      namespace: 'warehouse',
      name: 't',
      facets: { schema: {} },
      inputFacets: {},
    });
    expect(out.outputs[0]!.namespace).toBe('prod');
    expect(out.run.facets.parent.job.namespace).toBe('prod');
    expect(out.run.facets.parent.root.job.namespace).toBe('prod');
    expect(e.job.namespace).toBe('prod-eu');
    expect(e.run.facets.spark_unknown).toEqual({ x: 1 });
  });
});
