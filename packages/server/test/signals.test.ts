/**
 * True signals from what real dbt-ol sends (fixtures/producers/dbt-signals, recorded by its record.sh from four
 * `dbt-ol build` runs): a failing test fixed by changing it comes back under a new name and the old one is
 * retired, as is a deleted test; tests dbt skipped are neither failures nor results; a test run that failed only
 * because its tests were skipped did not execute; and a model's failure explains what follows from it. Root
 * cause, the quality endpoint, the Marquez dataset facets and the run API must tell the same story at each step.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssertionJson, DatasetQualityJson } from '../src/analysis/quality.js';
import type { RootCauseResult } from '../src/analysis/root-cause.js';
import { apiOf } from './helpers/api.js';
import { retentionPass } from '../src/store/retention.js';
import { backends, startApp } from './helpers/backends.js';

const here = path.dirname(fileURLToPath(import.meta.url));
interface FixtureEvent {
  eventType: string;
  job: { namespace: string; name: string };
  run: { runId: string };
}
const events = readFileSync(path.join(here, 'fixtures/producers/dbt-signals/events.ndjson'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as FixtureEvent);
// Each `dbt-ol build` ends with the terminal event of its invocation's job (dbt-run-signals).
const steps: FixtureEvent[][] = [[]];
for (const event of events) {
  steps.at(-1)!.push(event);
  if (event.job.name === 'dbt-run-signals' && event.eventType !== 'START') steps.push([]);
}
steps.pop();

const DB = 'postgres://127.0.0.1:5432';
const database = (events[1]!.job.name.split('.')[0] ?? '').trim();
const dataset = (table: string) => `${database}.analytics.${table}`;
const datasetPath = (table: string) =>
  `/api/v1/namespaces/${encodeURIComponent(DB)}/datasets/${encodeURIComponent(dataset(table))}`;
const nodeId = (table: string) => `dataset:${DB}:${dataset(table)}`;
const jobName = (model: string, kind: 'run' | 'test') =>
  `${database}.analytics.signals.${model}.build.${kind}`;
/** The run of a job in a step (each job runs once per build). */
const runOf = (step: number, name: string) => steps[step]!.find((e) => e.job.name === name)!.run.runId;

const standing = (assertions: readonly AssertionJson[]): Record<string, string> =>
  Object.fromEntries(assertions.map((a) => [a.name ?? a.identity, a.status]));

describe('the dbt-signals fixture', () => {
  it('holds four builds as record.sh describes them', () => {
    expect(steps.map((step) => step.length)).toEqual([12, 12, 10, 12]);
    expect(database).toMatch(/^hw_dbt_signals_\d+$/);
  });
});

describe.each(backends())('true signals from real dbt-ol runs on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const api = apiOf(() => ctx.request);
  const quality = (table: string) => api.get<DatasetQualityJson>(`${datasetPath(table)}/quality`);
  const rootCause = (table: string) =>
    api.get<RootCauseResult>(`/api/v1/analysis/root-cause?nodeId=${encodeURIComponent(nodeId(table))}`);
  const marquezAssertions = async (table: string) => {
    const answer = await api.get<{ facets: { dataQualityAssertions?: { assertions: { name: string }[] } } }>(
      datasetPath(table),
    );
    return (answer.facets.dataQualityAssertions?.assertions ?? []).map((a) => a.name).sort();
  };

  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(() => ctx?.stop());

  it('build 1: the failing accepted_values test fails, in root cause with the run that reported it', async () => {
    await api.post(...steps[0]!);
    const revenue = await quality('customer_revenue');
    expect(standing(revenue.assertions)).toEqual({
      accepted_values_customer_revenue_country__NL__DE: 'failing',
      not_null_customer_revenue_revenue: 'passing',
    });
    const causes = (await rootCause('customer_revenue')).causes;
    expect(causes.map((c) => [c.kind, c.nodeId, c.explainedBy])).toEqual([
      ['failedAssertion', nodeId('customer_revenue'), null],
    ]);
    expect(causes[0]!.run).toMatchObject({
      id: runOf(0, jobName('customer_revenue', 'test')),
      state: 'FAILED',
    });
    expect(await marquezAssertions('customer_revenue')).toEqual([
      'accepted_values_customer_revenue_country__NL__DE',
      'not_null_customer_revenue_revenue',
    ]);
  });

  it('build 2: the test fixed under a new name and the deleted test are retired, with their history', async () => {
    await api.post(...steps[1]!);
    const revenue = await quality('customer_revenue');
    expect(standing(revenue.assertions)).toEqual({
      accepted_values_customer_revenue_country__NL__DE__BE: 'passing',
      accepted_values_customer_revenue_country__NL__DE: 'retired',
      not_null_customer_revenue_revenue: 'retired',
    });
    const testRun = runOf(1, jobName('customer_revenue', 'test'));
    const renamed = revenue.assertions.find((a) => a.status === 'retired' && !a.latest.success)!;
    expect(renamed.retired?.runId).toBe(testRun);
    expect(renamed.history.map((r) => r.success)).toEqual([false]);
    expect((await rootCause('customer_revenue')).causes).toEqual([]);
    expect(await marquezAssertions('customer_revenue')).toEqual([
      'accepted_values_customer_revenue_country__NL__DE__BE',
    ]);
  });

  it('build 3: skipped tests are neither failures nor results, and the failed model is the cause', async () => {
    await api.post(...steps[2]!);
    for (const table of ['customer_revenue', 'stg_orders']) {
      const answer = await quality(table);
      // The tests stand as their last real results; the skipped ones are the newest reports.
      for (const a of answer.assertions.filter((a) => a.status !== 'retired')) {
        expect({ name: a.name, status: a.status, skipped: a.lastReported.skipped }).toEqual({
          name: a.name,
          status: 'passing',
          skipped: true,
        });
        expect(a.history[0]).toMatchObject({ skipped: true, success: false });
      }
    }
    const causes = (await rootCause('customer_revenue')).causes;
    expect(causes.map((c) => [c.kind, c.nodeId, c.distance, c.explainedBy])).toEqual([
      ['failedRun', `job:dbt_signals:${jobName('stg_orders', 'run')}`, 3, null],
    ]);
    // The test runs dbt-ol sent as FAIL only for their skipped tests did not execute; the model's run did.
    for (const [model, execution] of [
      ['customer_revenue', 'skipped'],
      ['stg_orders', 'skipped'],
    ] as const) {
      const run = await api.get<{ state: string; execution?: string }>(
        `/api/v1/jobs/runs/${runOf(2, jobName(model, 'test'))}`,
      );
      expect(run).toMatchObject({ state: 'FAILED', execution });
    }
    const failedModel = await api.get<{ state: string; execution?: string }>(
      `/api/v1/jobs/runs/${runOf(2, jobName('stg_orders', 'run'))}`,
    );
    expect(failedModel.state).toBe('FAILED');
    expect(failedModel.execution).toBeUndefined();
    expect(await marquezAssertions('customer_revenue')).toEqual([
      'accepted_values_customer_revenue_country__NL__DE__BE',
    ]);
  });

  it('build 4: the mended model clears the cause and the tests pass again', async () => {
    await api.post(...steps[3]!);
    expect((await rootCause('customer_revenue')).causes).toEqual([]);
    for (const table of ['customer_revenue', 'stg_orders']) {
      for (const a of (await quality(table)).assertions.filter((a) => a.status !== 'retired')) {
        expect([a.name, a.status, a.lastReported.skipped]).toEqual([a.name, 'passing', false]);
      }
    }
  });

  it('as of build 1, the renamed test was still failing (retirement is by time)', async () => {
    const time = (steps[0]!.at(-1) as FixtureEvent & { eventTime: string }).eventTime;
    const answer = await api.get<RootCauseResult>(
      `/api/v1/analysis/root-cause?nodeId=${encodeURIComponent(nodeId('customer_revenue'))}&at=${encodeURIComponent(time)}`,
    );
    expect(answer.causes.map((c) => c.kind)).toEqual(['failedAssertion']);
  });
});

describe.each(backends())('runs that did not execute, as producers say so, on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const api = apiOf(() => ctx.request);
  const HOUR = 3_600_000;
  const T0 = Date.parse('2025-06-02T00:00:00Z');
  const RAW = { namespace: 's3://lake', name: 'events_raw' };
  const DAILY = { namespace: 's3://lake', name: 'events_daily' };
  const runId = (n: number) => `0197a000-0000-7000-8000-${String(n).padStart(12, '0')}`;
  const event = (n: number, eventType: string, time: number, runFacets: Record<string, unknown> = {}) => ({
    eventType,
    eventTime: new Date(time).toISOString(),
    producer: 'https://example.com/scheduler',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: runId(n), facets: runFacets },
    job: { namespace: 'etl', name: 'aggregate_events' },
    inputs: [RAW],
    outputs: [DAILY],
  });
  const facet = (body: Record<string, unknown>) => ({
    _producer: 'https://example.com/scheduler',
    _schemaURL: 'https://example.com/schemas/HeadwaterExecutionRunFacet.json',
    ...body,
  });
  const rootCauseOf = () =>
    api.get<RootCauseResult>(
      `/api/v1/analysis/root-cause?nodeId=${encodeURIComponent(`dataset:${DAILY.namespace}:${DAILY.name}`)}&at=${encodeURIComponent(new Date(T0 + 4 * 24 * HOUR + HOUR).toISOString())}`,
    );

  beforeAll(async () => {
    ctx = await startApp(backend);
    // Four daily runs: three completed, then on the fourth day a FAIL; and later that day a retry that the
    // scheduler reports as skipped (Airflow's task state) and a rerun reported reused (the facet).
    for (let day = 0; day < 3; day++) {
      await api.post(
        event(day, 'START', T0 + day * 24 * HOUR),
        event(day, 'COMPLETE', T0 + day * 24 * HOUR + 60_000),
      );
    }
  });
  afterAll(() => ctx?.stop());

  it('a FAIL of a run that says it was skipped is not a failure, and the job keeps its last real run', async () => {
    const day3 = T0 + 3 * 24 * HOUR;
    await api.post(
      event(3, 'START', day3),
      event(3, 'FAIL', day3 + 60_000, {
        airflow: facet({ taskInstance: { state: 'upstream_failed', try_number: 1 } }),
      }),
    );
    const run = await api.get<{ state: string; execution?: string }>(`/api/v1/jobs/runs/${runId(3)}`);
    expect(run).toMatchObject({ state: 'FAILED', execution: 'skipped' });
    // The job's latest real run completed; but nothing refreshed the data for a day and a half: it is stale.
    const answer = await rootCauseOf();
    expect(answer.causes.map((c) => c.kind)).toEqual(['stale']);
    expect(answer.lastGoodRunAt).toBe(new Date(T0 + 2 * 24 * HOUR + 60_000).toISOString());
  });

  it('a COMPLETE of a reused run is not fresh data, and a real failure still counts', async () => {
    const day4 = T0 + 4 * 24 * HOUR;
    await api.post(
      event(4, 'START', day4),
      event(4, 'COMPLETE', day4 + 60_000, {
        headwater_execution: facet({ outcome: 'reused', reason: 'cached result of run 2' }),
      }),
    );
    expect(await api.get<{ execution?: string }>(`/api/v1/jobs/runs/${runId(4)}`)).toMatchObject({
      execution: 'reused',
    });
    let answer = await rootCauseOf();
    expect(answer.causes.map((c) => c.kind)).toEqual(['stale']);
    // A real failure after it is the job's latest real run.
    await api.post(event(5, 'START', day4 + 10 * 60_000), event(5, 'FAIL', day4 + 11 * 60_000));
    answer = await rootCauseOf();
    expect(answer.causes.map((c) => [c.kind, c.run?.id ?? null])).toEqual([
      ['failedRun', runId(5)],
      ['stale', null],
    ]);
    // The data is stale because the job failed: the staleness follows from the failure.
    expect(answer.causes[1]!.explainedBy).toBe('job:etl:aggregate_events');
  });

  it('the newest event that says wins: a later event saying the run executed makes it count again', async () => {
    const day4 = T0 + 4 * 24 * HOUR;
    await api.post(
      event(4, 'OTHER', day4 + 2 * 60_000, { headwater_execution: facet({ outcome: 'executed' }) }),
    );
    const run = await api.get<{ state: string; execution?: string }>(`/api/v1/jobs/runs/${runId(4)}`);
    expect(run.state).toBe('COMPLETED');
    expect(run.execution).toBeUndefined();
  });
});

describe.each(backends())('retention keeps what the signals stand on, on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const api = apiOf(() => ctx.request);
  const T0 = Date.parse('2025-07-01T00:00:00Z');
  const TABLE = { namespace: 's3://lake', name: 'orders_checked' };
  const run = (n: number, outcome?: string) => ({
    eventType: 'COMPLETE',
    eventTime: new Date(T0 + n * 3_600_000).toISOString(),
    producer: 'https://example.com/checks',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: {
      runId: `0197b000-0000-7000-8000-${String(n).padStart(12, '0')}`,
      facets: outcome
        ? {
            headwater_execution: {
              _producer: 'https://example.com/checks',
              _schemaURL: 'https://example.com/x.json',
              outcome,
            },
          }
        : {},
    },
    job: { namespace: 'checks', name: 'orders_suite' },
    inputs: [
      {
        ...TABLE,
        inputFacets: {
          dataQualityAssertions: {
            _producer: 'https://example.com/checks',
            _schemaURL: 'https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json',
            assertions: [{ assertion: 'not_null', column: 'id', success: !outcome }],
          },
        },
      },
    ],
    outputs: [],
  });

  beforeAll(async () => {
    ctx = await startApp(backend);
    // Two real checks (retention keeps each entity's earliest rows anyway: the second is the one at stake), then
    // two runs that say they were skipped; the retention cutoff is after all four.
    await api.post(run(0), run(1), run(2, 'skipped'), run(3, 'skipped'));
    await retentionPass(ctx.server.db, new Date(T0 + 4 * 3_600_000), (fn, apply) =>
      ctx.server.pipeline.maintain(fn, apply),
    );
  });
  afterAll(() => ctx?.stop());

  it('an assertion the newest runs skipped still stands as its last real result', async () => {
    const answer = await api.get<DatasetQualityJson>(
      `/api/v1/namespaces/${encodeURIComponent(TABLE.namespace)}/datasets/${TABLE.name}/quality`,
    );
    expect(
      answer.assertions.map((a) => [a.assertion, a.status, a.latest.runId, a.lastReported.skipped]),
    ).toEqual([['not_null', 'passing', run(1).run.runId, true]]);
  });
});
