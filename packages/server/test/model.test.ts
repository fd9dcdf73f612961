import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';

const producer = 'https://example.com/model-test';
const schemaURL = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const facetBase = { _producer: producer, _schemaURL: 'https://openlineage.io/spec/facets/1-0-0/X.json' };

function schema(fields: [string, string][]) {
  return { ...facetBase, fields: fields.map(([name, type]) => ({ name, type })) };
}

describe.each(backends())('lineage model on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const send = async (events: unknown[]) => {
    const response = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      body: JSON.stringify(events),
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
  };
  const sendOne = async (event: unknown) => {
    const response = await ctx.request('/api/v1/lineage', {
      method: 'POST',
      body: JSON.stringify(event),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(201);
  };
  const query = <T>(sql: string, params: unknown[] = []) => ctx.server.db.query<T>(sql, params);

  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('gives every arrival order of a run’s events the same final state (property)', async () => {
    const lifecycle = [
      ['OTHER', '2024-03-01T09:59:00Z'],
      ['START', '2024-03-01T10:00:00Z'],
      ['RUNNING', '2024-03-01T10:05:00Z'],
      ['COMPLETE', '2024-03-01T10:10:00Z'],
    ] as const;
    const orders = fc.sample(fc.shuffledSubarray([0, 1, 2, 3], { minLength: 4, maxLength: 4 }), {
      numRuns: 12,
      seed: 3,
    });
    orders.push([3, 2, 1, 0]);
    for (const [index, order] of orders.entries()) {
      const runId = randomUUID();
      // One request per event, so the merge goes through the writer's mirror and the store, not one batch.
      for (const position of order) {
        const [eventType, eventTime] = lifecycle[position]!;
        await sendOne({
          eventType,
          eventTime,
          producer,
          schemaURL,
          run: { runId },
          job: { namespace: 'perm', name: `job${index}` },
        });
      }
      const [run] = await query<{ state: string; started_at: Date; ended_at: Date; created_at: Date }>(
        'SELECT state, started_at, ended_at, created_at FROM runs WHERE uuid = $1',
        [runId],
      );
      expect({
        order,
        state: run!.state,
        startedAt: run!.started_at.toISOString(),
        endedAt: run!.ended_at.toISOString(),
      }).toEqual({
        order,
        state: 'COMPLETED',
        startedAt: '2024-03-01T10:00:00.000Z',
        endedAt: '2024-03-01T10:10:00.000Z',
      });
    }
  });

  it('keeps COMPLETED after a restart when a late START arrives', async () => {
    const runId = randomUUID();
    const job = { namespace: 'restart', name: 'late-start' };
    await sendOne({
      eventType: 'COMPLETE',
      eventTime: '2024-03-02T10:10:00Z',
      producer,
      schemaURL,
      run: { runId },
      job,
    });
    // As after a restart: the run must be read back from the store, not found in the writer's memory.
    expect(ctx.server.state.runs.delete(runId)).toBe(true);
    await sendOne({
      eventType: 'START',
      eventTime: '2024-03-02T10:00:00Z',
      producer,
      schemaURL,
      run: { runId },
      job,
    });
    const [run] = await query<{ state: string; started_at: Date }>(
      'SELECT state, started_at FROM runs WHERE uuid = $1',
      [runId],
    );
    expect(run).toEqual({ state: 'COMPLETED', started_at: new Date('2024-03-02T10:00:00Z') });
  });

  it('versions datasets by what describes them, not by run', async () => {
    const output = (fields: [string, string][]) => ({
      namespace: 'warehouse',
      name: 'mart.revenue',
      facets: { schema: schema(fields) },
    });
    const run = (time: string, fields: [string, string][], rows: number) => ({
      eventType: 'COMPLETE',
      eventTime: time,
      producer,
      schemaURL,
      run: { runId: randomUUID() },
      job: { namespace: 'dbt', name: 'revenue' },
      outputs: [{ ...output(fields), outputFacets: { outputStatistics: { ...facetBase, rowCount: rows } } }],
    });
    await send([
      run(
        '2024-04-01T00:00:00Z',
        [
          ['day', 'date'],
          ['amount', 'numeric'],
        ],
        10,
      ),
      run(
        '2024-04-02T00:00:00Z',
        [
          ['day', 'date'],
          ['amount', 'numeric'],
        ],
        12,
      ),
      run(
        '2024-04-03T00:00:00Z',
        [
          ['day', 'date'],
          ['amount', 'numeric'],
        ],
        15,
      ),
    ]);
    const versions = () =>
      query<{ version: string; fields: unknown }>(
        `SELECT v.version::text AS version, v.fields FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id
         WHERE d.name = 'mart.revenue' ORDER BY v.created_at`,
      );
    expect(await versions()).toHaveLength(1);
    // Per-run statistics stay with the runs.
    const stats = await query<{ rows: number }>(
      `SELECT (io.facets->'outputStatistics'->>'rowCount')::int AS rows FROM run_io io
       JOIN datasets d ON d.id = io.dataset_id WHERE d.name = 'mart.revenue' ORDER BY io.event_time`,
    );
    expect(stats.map((row) => row.rows)).toEqual([10, 12, 15]);
    await send([
      run(
        '2024-04-04T00:00:00Z',
        [
          ['day', 'date'],
          ['amount', 'numeric'],
          ['currency', 'text'],
        ],
        15,
      ),
    ]);
    const after = await versions();
    expect(after).toHaveLength(2);
    const [current] = await query<{ version: string }>(
      `SELECT v.version::text AS version FROM datasets d JOIN dataset_versions v ON v.id = d.current_version_id
       WHERE d.name = 'mart.revenue'`,
    );
    expect(current!.version).toBe(after[1]!.version);
    // A late event describing the old schema does not displace the newer current version.
    await send([
      run(
        '2024-04-03T12:00:00Z',
        [
          ['day', 'date'],
          ['amount', 'numeric'],
        ],
        15,
      ),
    ]);
    const [still] = await query<{ version: string }>(
      `SELECT v.version::text AS version FROM datasets d JOIN dataset_versions v ON v.id = d.current_version_id
       WHERE d.name = 'mart.revenue'`,
    );
    expect(still!.version).toBe(after[1]!.version);
  });

  it('records column lineage, quality assertions and parent jobs', async () => {
    const parentRunId = randomUUID();
    const runId = randomUUID();
    await send([
      {
        eventType: 'COMPLETE',
        eventTime: '2024-05-01T00:00:00Z',
        producer,
        schemaURL,
        run: {
          runId,
          facets: {
            parent: {
              ...facetBase,
              run: { runId: parentRunId },
              job: { namespace: 'airflow', name: 'daily' },
            },
          },
        },
        job: { namespace: 'airflow', name: 'daily.build_mart' },
        inputs: [
          {
            namespace: 'warehouse',
            name: 'stg.orders',
            inputFacets: {
              dataQualityAssertions: {
                ...facetBase,
                assertions: [
                  { assertion: 'not_null', column: 'id', success: true },
                  {
                    assertion: 'row_count_gt',
                    success: false,
                    severity: 'error',
                    expected: '0',
                    actual: '0',
                  },
                ],
              },
            },
          },
        ],
        outputs: [
          {
            namespace: 'warehouse',
            name: 'mart.orders',
            facets: {
              columnLineage: {
                ...facetBase,
                fields: {
                  total: {
                    inputFields: [
                      {
                        namespace: 'warehouse',
                        name: 'stg.orders',
                        field: 'amount',
                        transformations: [{ type: 'DIRECT', subtype: 'AGGREGATION' }],
                      },
                      {
                        namespace: 'warehouse',
                        name: 'stg.orders',
                        field: 'status',
                        transformations: [{ type: 'INDIRECT', subtype: 'FILTER' }],
                      },
                    ],
                  },
                },
              },
            },
          },
        ],
      },
    ]);
    const columns = await query<{ output_field: string; input_field: string; type: string; subtype: string }>(
      `SELECT output_field, input_field, transformation_type AS type, transformation_subtype AS subtype
       FROM column_lineage c JOIN datasets d ON d.id = c.output_dataset_id WHERE d.name = 'mart.orders' ORDER BY input_field`,
    );
    expect(columns).toEqual([
      { output_field: 'total', input_field: 'amount', type: 'DIRECT', subtype: 'AGGREGATION' },
      { output_field: 'total', input_field: 'status', type: 'INDIRECT', subtype: 'FILTER' },
    ]);
    const assertions = await query<{ assertion: string; success: boolean; column_name: string }>(
      'SELECT assertion, success, column_name FROM dq_assertions WHERE run_uuid = $1 ORDER BY assertion',
      [runId],
    );
    expect(assertions).toEqual([
      { assertion: 'not_null', success: true, column_name: 'id' },
      { assertion: 'row_count_gt', success: false, column_name: '' },
    ]);
    const [child] = await query<{
      simple_name: string;
      parent: string;
      parent_run: string;
      parent_state: string;
    }>(
      `SELECT j.simple_name, p.name AS parent, r.parent_run_uuid::text AS parent_run, pr.state AS parent_state
       FROM jobs j JOIN jobs p ON p.id = j.parent_job_id JOIN runs r ON r.job_id = j.id
       JOIN runs pr ON pr.uuid = r.parent_run_uuid WHERE j.name = 'daily.build_mart'`,
    );
    expect(child).toEqual({
      simple_name: 'build_mart',
      parent: 'daily',
      parent_run: parentRunId,
      parent_state: 'NEW',
    });
  });

  it('records the other names a symlinks facet gives a dataset', async () => {
    const mention = {
      namespace: 'hdfs://namenode:8020',
      name: '/warehouse/sales.db/orders',
      facets: {
        symlinks: {
          ...facetBase,
          identifiers: [{ namespace: 'hive://metastore:9083', name: 'sales.orders', type: 'TABLE' }],
        },
      },
    };
    const event = {
      eventType: 'COMPLETE',
      eventTime: '2024-05-02T00:00:00Z',
      producer,
      schemaURL,
      job: { namespace: 'spark', name: 'etl' },
    };
    await send([
      { ...event, run: { runId: randomUUID() }, outputs: [mention] },
      { ...event, run: { runId: randomUUID() }, eventTime: '2024-05-03T00:00:00Z', outputs: [mention] },
    ]);
    const rows = await query<{ namespace: string; name: string; type: string }>(
      `SELECT s.namespace, s.name, s.type FROM dataset_symlinks s JOIN datasets d ON d.id = s.dataset_id
       WHERE d.name = '/warehouse/sales.db/orders'`,
    );
    expect(rows).toEqual([{ namespace: 'hive://metastore:9083', name: 'sales.orders', type: 'TABLE' }]);
  });

  it('keeps the latest value of a facet by event time, with its history', async () => {
    const job = (time: string, sql: string) => ({
      eventType: 'COMPLETE',
      eventTime: time,
      producer,
      schemaURL,
      run: { runId: randomUUID() },
      job: { namespace: 'facets', name: 'sql-job', facets: { sql: { ...facetBase, query: sql } } },
    });
    await sendOne(job('2024-06-01T00:00:00Z', 'SELECT 1'));
    await sendOne(job('2024-06-03T00:00:00Z', 'SELECT 3'));
    await sendOne(job('2024-06-04T00:00:00Z', 'SELECT 3'));
    await sendOne(job('2024-06-02T00:00:00Z', 'SELECT 2'));
    const rows = await query<{ query: string }>(
      `SELECT f.facet->>'query' AS query FROM job_facets f JOIN jobs j ON j.id = f.job_id
       WHERE j.name = 'sql-job' ORDER BY f.event_time DESC`,
    );
    expect(rows.map((row) => row.query)).toEqual(['SELECT 3', 'SELECT 2', 'SELECT 1']);
  });
});
