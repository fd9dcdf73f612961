import { describe, expect, test } from 'vitest';
import {
  brokenByPhrase,
  brokenDatasets,
  deliveryText,
  impactedInOrder,
  impactedSummary,
  incidentsOfNode,
  recipientsSummary,
  signalDetail,
} from './incidents.js';
import type { Incident, IncidentDelivery } from './types.js';

const WH = 'postgres://wh:5432';

/** An incident rooted at the failed job `etl/load`, reaching staging (1 hop), the mart (3) and a dashboard (5). */
const incident = (overrides: Partial<Incident> = {}): Incident => ({
  id: 'inc-1',
  status: 'open',
  signal: 'run_failed',
  root: 'job:etl:load',
  namespace: 'etl',
  headline: 'Run failed: etl/load',
  openedAt: '2025-03-14T09:00:00.000Z',
  updatedAt: '2025-03-14T09:00:00.000Z',
  acknowledgedAt: null,
  acknowledgedBy: null,
  resolvedAt: null,
  resolvedBy: null,
  rootCause: { kind: 'job', job: { namespace: 'etl', name: 'load' }, runId: 'r1', errorMessage: 'boom' },
  impacted: {
    datasets: [
      { namespace: 'looker://acme', name: 'dashboards.revenue', depth: 5 },
      { namespace: WH, name: 'staging.orders', depth: 1 },
      { namespace: WH, name: 'marts.revenue', depth: 3, columns: ['amount'] },
    ],
    jobs: [
      { namespace: 'bi', name: 'refresh', depth: 4 },
      { namespace: 'dbt', name: 'model', depth: 2 },
    ],
  },
  recipients: [],
  ...overrides,
});

/** An incident rooted at a failing assertion on staging.orders, reaching the mart (2 hops). */
const assertionIncident = (overrides: Partial<Incident> = {}): Incident =>
  incident({
    id: 'inc-2',
    signal: 'assertion_failed',
    root: `dataset:${WH}:staging.orders`,
    namespace: WH,
    rootCause: {
      kind: 'dataset',
      dataset: { namespace: WH, name: 'staging.orders' },
      assertion: { name: 'not_null', column: 'id' },
    },
    impacted: { datasets: [{ namespace: WH, name: 'marts.revenue', depth: 2 }], jobs: [] },
    ...overrides,
  });

describe('impactedInOrder', () => {
  test('nearest first, a dataset before a job at one depth, with node ids the explorer links by', () => {
    const withTie = incident({
      impacted: {
        datasets: [{ namespace: WH, name: 'b', depth: 2 }],
        jobs: [{ namespace: 'dbt', name: 'a', depth: 2 }],
      },
    });
    expect(impactedInOrder(withTie).map((e) => e.nodeId)).toEqual([`dataset:${WH}:b`, 'job:dbt:a']);
    expect(impactedInOrder(incident()).map((e) => [e.type, e.node.name, e.node.depth])).toEqual([
      ['dataset', 'staging.orders', 1],
      ['job', 'model', 2],
      ['dataset', 'marts.revenue', 3],
      ['job', 'refresh', 4],
      ['dataset', 'dashboards.revenue', 5],
    ]);
  });

  test('counts in words', () => {
    expect(impactedSummary(incident())).toBe('3 datasets, 2 jobs');
    expect(impactedSummary(assertionIncident())).toBe('1 dataset, 0 jobs');
    expect(impactedSummary(incident({ impacted: { datasets: [], jobs: [] } }))).toBe('nothing downstream');
  });
});

describe('incidentsOfNode', () => {
  const list = [incident(), assertionIncident(), incident({ id: 'old', status: 'resolved' })];

  test('the root at depth 0, an impacted dataset or job at its depth, with its columns; resolved ones never', () => {
    expect(incidentsOfNode(list, ['job:etl:load']).map((f) => [f.incident.id, f.depth])).toEqual([
      ['inc-1', 0],
    ]);
    expect(incidentsOfNode(list, ['job:dbt:model']).map((f) => [f.incident.id, f.depth])).toEqual([
      ['inc-1', 2],
    ]);
    expect(
      incidentsOfNode(list, [`dataset:${WH}:marts.revenue`]).map((f) => [f.incident.id, f.depth, f.columns]),
    ).toEqual([
      ['inc-1', 3, ['amount']],
      ['inc-2', 2, undefined],
    ]);
    expect(
      incidentsOfNode(list, [`dataset:${WH}:staging.orders`]).map((f) => [f.incident.id, f.depth]),
    ).toEqual([
      ['inc-1', 1],
      ['inc-2', 0],
    ]);
  });

  test('a dataset and the one it is an alias of: one entry per incident, and nothing for an unrelated node', () => {
    expect(
      incidentsOfNode([incident()], [`dataset:${WH}:alias`, `dataset:${WH}:staging.orders`]).map(
        (f) => f.depth,
      ),
    ).toEqual([1]);
    expect(incidentsOfNode(list, ['job:etl:other'])).toEqual([]);
    // A job and a dataset of the same namespace and name are different nodes.
    expect(incidentsOfNode(list, ['dataset:etl:load'])).toEqual([]);
  });
});

describe('brokenDatasets', () => {
  test('furthest downstream first, each with its incidents nearest root first; a failing dataset itself at 0', () => {
    const broken = brokenDatasets([
      incident(),
      assertionIncident(),
      incident({ id: 'x', status: 'resolved' }),
    ]);
    expect(broken.map((d) => [d.name, d.breaks.map((b) => [b.incident.id, b.depth])])).toEqual([
      ['dashboards.revenue', [['inc-1', 5]]],
      [
        'marts.revenue',
        [
          ['inc-2', 2],
          ['inc-1', 3],
        ],
      ],
      [
        'staging.orders',
        [
          ['inc-2', 0],
          ['inc-1', 1],
        ],
      ],
    ]);
    expect(broken[0]!.nodeId).toBe('dataset:looker://acme:dashboards.revenue');
  });

  test('nothing when nothing is unresolved', () => {
    expect(brokenDatasets([])).toEqual([]);
    expect(brokenDatasets([incident({ status: 'resolved' })])).toEqual([]);
  });
});

describe('words', () => {
  test('what breaks a dataset, and how far up', () => {
    expect(brokenByPhrase(incident(), 5)).toBe('broken by load failing, 5 hops up');
    expect(brokenByPhrase(incident(), 1)).toBe('broken by load failing, 1 hop up');
    expect(brokenByPhrase(incident({ signal: 'run_overdue' }), 2)).toBe(
      'broken by load running late, 2 hops up',
    );
    expect(brokenByPhrase(assertionIncident(), 0)).toBe(
      'broken by the assertion not_null on column id failing on staging.orders',
    );
  });

  test('recipients and their reasons', () => {
    expect(recipientsSummary([])).toBe('nobody');
    expect(
      recipientsSummary([
        { address: { channel: 'finance' }, reasons: [] },
        { address: { email: 'ann@example.com' }, reasons: [] },
      ]),
    ).toBe('channel finance, ann@example.com');
  });

  const delivery = (overrides: Partial<IncidentDelivery>): IncidentDelivery => ({
    channel: 'finance',
    state: 'pending',
    attempts: 0,
    nextAttemptAt: null,
    sentAt: null,
    givenUpAt: null,
    lastStatus: null,
    lastError: null,
    ...overrides,
  });
  const time = (iso: string | null) => `<${iso}>`;

  test('a delivery: sent, pending with its attempts and last error, given up with why', () => {
    expect(deliveryText(delivery({ state: 'sent', attempts: 1, sentAt: 'T1', lastStatus: 200 }), time)).toBe(
      'sent <T1>',
    );
    expect(deliveryText(delivery({ state: 'sent', attempts: 3, sentAt: 'T1' }), time)).toBe(
      'sent <T1> after 3 attempts',
    );
    expect(deliveryText(delivery({}), time)).toBe('pending, not tried yet');
    expect(
      deliveryText(
        delivery({ attempts: 2, nextAttemptAt: 'T2', lastStatus: 503, lastError: 'Service Unavailable' }),
        time,
      ),
    ).toBe('pending after 2 attempts, next <T2>: HTTP 503, Service Unavailable');
    expect(
      deliveryText(
        delivery({ state: 'given-up', attempts: 1, givenUpAt: 'T3', lastStatus: 400, lastError: 'bad' }),
        time,
      ),
    ).toBe('given up <T3> after 1 attempt: HTTP 400, bad');
  });
});

describe('signalDetail', () => {
  test("reads the run, error, assertion and reporter of the server's open detail object", () => {
    expect(
      signalDetail({
        detail: {
          runId: 'r1',
          assertion: {
            assertion: 'freshness',
            name: null,
            column: 'loaded_at',
            expected: '24h',
            actual: '49h',
          },
          reportedBy: 'job:dbt:test',
        },
      }),
    ).toEqual({
      runId: 'r1',
      assertion: 'freshness(loaded_at): expected 24h, actual 49h',
      reportedBy: 'job:dbt:test',
    });
    expect(signalDetail({ detail: { runId: 'r2', errorMessage: 'duplicate key' } })).toEqual({
      runId: 'r2',
      errorMessage: 'duplicate key',
    });
  });

  test('ignores what is not the expected shape', () => {
    expect(signalDetail({ detail: { runId: 7, errorMessage: '', assertion: 'x' } })).toEqual({});
  });
});
