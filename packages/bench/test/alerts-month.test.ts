import { describe, expect, test } from 'vitest';
import { judge, type IncidentDetail } from '../src/alerts-bench.js';
import {
  JOB_NAMESPACE,
  RETRY_WITHIN_MINUTES,
  STANDING_MINUTES,
  caseCounts,
  checkMonth,
  failureEpisodes,
  generateMonth,
  wallOffsets,
  type Month,
  type MonthEvent,
} from '../src/alerts-month.js';

const short = generateMonth({ seed: 1, days: 5 });
const month = generateMonth({ seed: 1, days: 30 });
const caseOf = (m: Month, id: string | undefined) => m.cases.find((c) => c.id === id);
const runsOf = (m: Month, caseId: string) => m.events.filter((e) => e.caseId === caseId);

describe('the labelled month of the alerts benchmark', () => {
  test('is the same events, byte for byte, for one seed, and other events for another', () => {
    expect(generateMonth({ seed: 1, days: 5 }).events).toEqual(short.events);
    const other = generateMonth({ seed: 2, days: 5 });
    expect(other.events.map((e) => e.body)).not.toEqual(short.events.map((e) => e.body));
  });

  test('holds the cases of each kind that caseCounts gives, in a company of 78 jobs and 65 datasets', () => {
    for (const m of [short, month]) {
      const counts: Record<string, number> = {};
      for (const c of m.cases) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
      expect(counts).toEqual(caseCounts(m.days));
      expect(new Set(m.cases.map((c) => c.id)).size).toBe(m.cases.length);
    }
    expect([month.jobs.length, month.datasets, month.dags]).toEqual([78, 65, 16]);
    expect(month.cases.filter((c) => c.kind === 'failure')).toHaveLength(12);
  });

  test('sends events in order of sendMs, each one a RunEvent whose type and time are the labels’', () => {
    for (const [index, event] of month.events.entries()) {
      if (index > 0) expect(event.sendMs).toBeGreaterThanOrEqual(month.events[index - 1]!.sendMs);
      const body = JSON.parse(event.body) as {
        eventType: string;
        eventTime: string;
        run: { runId: string };
        job: { namespace: string; name: string };
      };
      expect([body.eventType, body.eventTime, body.run.runId, body.job.namespace, body.job.name]).toEqual([
        event.type,
        new Date(event.eventMs).toISOString(),
        event.runId,
        JOB_NAMESPACE,
        event.job,
      ]);
    }
  });

  test('labels agree with a replay of its events for several seeds and lengths', () => {
    for (const seed of [1, 2, 3, 4])
      for (const days of [5, 8, 12]) expect(checkMonth(generateMonth({ seed, days }))).toEqual([]);
    expect(checkMonth(month)).toEqual([]);
  });

  test("has no failure between a retry and a real one: every episode is over within 5 simulated minutes or lasts 20, and the lasting ones are exactly the failures' roots and what they explain", () => {
    const episodes = failureEpisodes(month.events);
    const lasting = episodes.filter((e) => e.minutes >= STANDING_MINUTES);
    expect(episodes.filter((e) => e.minutes > RETRY_WITHIN_MINUTES && e.minutes < STANDING_MINUTES)).toEqual(
      [],
    );
    const labelled = month.cases.flatMap((c) =>
      c.failure === undefined ? [] : [c.failure.rootRuns.at(-1)!, ...c.failure.grouped.map((g) => g.runId)],
    );
    expect(lasting.map((e) => e.runId).sort()).toEqual([...labelled].sort());
    // Every case that is not a failure has failures only of the passing kind, and most have some.
    const passing = episodes.filter(
      (e) => caseOf(month, month.events[e.fromIndex]!.caseId)?.kind !== 'failure',
    );
    expect(passing.every((e) => e.minutes <= RETRY_WITHIN_MINUTES)).toBe(true);
    expect(passing.length).toBeGreaterThan(month.cases.filter((c) => c.kind === 'retry').length);
  });

  test('a check that can fail: dropping a retry makes its failure a lasting one that no label names', () => {
    const retry = month.cases.find((c) => c.variant === 'one-retry')!;
    const events = runsOf(month, retry.id);
    const failed = events.find((e) => e.type === 'FAIL')!;
    const retryRun = events.find(
      (e) => e.type === 'START' && e.job === failed.job && e.runId !== failed.runId,
    )!;
    const broken: Month = { ...month, events: month.events.filter((e) => e.runId !== retryRun.runId) };
    expect(checkMonth(broken)).toContainEqual(expect.stringContaining(`run ${failed.runId}`));
    const unlabelled: Month = {
      ...month,
      cases: month.cases.map((c) =>
        c.kind === 'failure' ? { ...c, failure: { ...c.failure!, grouped: [] } } : c,
      ),
    };
    expect(
      checkMonth(unlabelled).some((p) => p.includes('fails for good but no failure case names it')),
    ).toBe(true);
  });

  test('failures: two failed tries each, resolved by the next executed run; cascades name the task downstream and both DAG runs', () => {
    for (const c of month.cases.filter((x) => x.kind === 'failure')) {
      expect(c.failure!.rootRuns).toHaveLength(2);
      expect(c.failure!.resolvedBy).toBeDefined();
      const dagRuns = c.failure!.grouped.filter((g) => !g.job.includes('.'));
      const tasks = c.failure!.grouped.filter((g) => g.job.includes('.'));
      if (c.variant.endsWith('cascade')) {
        expect([dagRuns.length, tasks.length]).toEqual([2, 1]);
        expect(tasks[0]!.job.split('.')[0]).not.toBe(c.job.split('.')[0]);
      } else expect([dagRuns.length, tasks.length]).toEqual([1, 0]);
    }
    // Skipped-next: the next run of the root is skipped, so the one after resolves it.
    const skippedNext = month.cases.find((c) => c.variant === 'skipped-next')!;
    const skip = runsOf(month, skippedNext.id).find((e) => e.job === skippedNext.job && !e.executed)!;
    const resolving = month.events.find((e) => e.runId === skippedNext.failure!.resolvedBy)!;
    expect(resolving.eventMs - skip.eventMs).toBeGreaterThan(50 * 60_000);
  });

  test('the other cases say what their names say', () => {
    const of = (variant: string) => month.cases.filter((c) => c.variant === variant);
    const has = (variant: string, test: (events: readonly MonthEvent[]) => boolean) => {
      expect(of(variant).length).toBeGreaterThan(0);
      for (const c of of(variant))
        expect({ id: c.id, ok: test(runsOf(month, c.id)) }).toEqual({ id: c.id, ok: true });
    };
    has('skip-fail', (es) =>
      es.some((e) => e.type === 'FAIL' && !e.executed && e.body.includes('headwater_execution')),
    );
    has('skip-complete', (es) =>
      es.some((e) => e.type === 'COMPLETE' && !e.executed && e.body.includes('"outcome":"skipped"')),
    );
    has('skip-fail-airflow', (es) =>
      es.some((e) => e.type === 'FAIL' && !e.executed && e.body.includes('"state":"skipped"')),
    );
    has('reused-complete', (es) =>
      es.some((e) => e.type === 'COMPLETE' && !e.executed && e.body.includes('"outcome":"reused"')),
    );
    has('late-complete', (es) =>
      es.some((e) => e.type === 'COMPLETE' && e.sendMs - e.eventMs >= 2 * 3_600_000),
    );
    has('late-fail', (es) => es.some((e) => e.type === 'FAIL' && e.sendMs - e.eventMs >= 2 * 3_600_000));
    const startAfterEnd = (es: readonly MonthEvent[]) =>
      es.some(
        (s) =>
          s.type === 'START' &&
          es.some((t) => t.runId === s.runId && t.type !== 'START' && t.sendMs < s.sendMs),
      );
    has('complete-before-start', startAfterEnd);
    has('fail-before-start-retried', startAfterEnd);
    has('retry-complete-before-start', startAfterEnd);
    const repeated = (es: readonly MonthEvent[]) => new Set(es.map((e) => e.body)).size < es.length;
    has('duplicate-complete', repeated);
    has('duplicate-start', repeated);
    has('duplicate-dag-run', repeated);
    has('retry-duplicate-fail', repeated);
    has('two-retries', (es) => es.filter((e) => e.type === 'FAIL').length === 2);
  });

  test('wall-clock pace: a retry keeps its gap, and a lasting failure is at least the window away from its end', () => {
    const pace = { minuteMs: 100, idleMinuteMs: 1, windowMinutes: STANDING_MINUTES };
    const offsets = wallOffsets(month.events, month.startMs, pace);
    for (let i = 1; i < offsets.length; i++) expect(offsets[i]!).toBeGreaterThanOrEqual(offsets[i - 1]!);
    for (const episode of failureEpisodes(month.events)) {
      if (episode.toIndex === undefined) continue;
      const wall = offsets[episode.toIndex]! - offsets[episode.fromIndex]!;
      if (episode.minutes <= RETRY_WITHIN_MINUTES)
        expect(wall).toBeCloseTo(episode.minutes * pace.minuteMs, 6);
      else expect(wall).toBeGreaterThanOrEqual(STANDING_MINUTES * pace.minuteMs);
    }
    // Most of the month is ordinary runs, at the idle pace: the replay takes minutes, not the 72 minutes of 100 ms per minute.
    expect(offsets.at(-1)!).toBeLessThan(400_000);
  });
});

describe('judging the incidents of the month', () => {
  const sent = {
    sentAt: new Float64Array(short.events.length),
    ackAt: new Float64Array(short.events.length),
  };
  const failures = short.cases.filter((c) => c.failure !== undefined);
  const detail = (
    id: string,
    job: string,
    runId: string,
    signals: string[],
    resolvedBy?: string,
  ): IncidentDetail => ({
    incident: {
      id,
      status: resolvedBy === undefined ? 'open' : 'resolved',
      signal: 'run_failed',
      root: `job:${JOB_NAMESPACE}:${job}`,
      openedAt: '2026-12-07T00:00:00.000Z',
      rootCause: { runId },
    },
    signals: signals.map((run) => ({ key: `run:${run}`, node: 'job:x:y', detail: { runId: run } })),
    timeline: [
      { kind: 'opened', note: null, deliveries: [] },
      ...(resolvedBy === undefined
        ? []
        : [{ kind: 'resolved', note: `run ${resolvedBy} of ${job} completed`, deliveries: [] }]),
    ],
  });
  const right = failures.map((c, i) =>
    detail(
      `i${i}`,
      c.job,
      c.failure!.rootRuns.at(-1)!,
      [c.failure!.rootRuns.at(-1)!, ...c.failure!.grouped.map((g) => g.runId)],
      c.failure!.resolvedBy,
    ),
  );
  const opened = (ids: string[]) => ({
    rejected: 0,
    received: ids.map((id) => ({
      atMs: 0,
      id: `hw_${id}.1`,
      type: 'incident.opened',
      incidentId: id,
      runId: undefined,
      payload: {},
    })),
  });

  test('finds nothing wrong with the incidents the labels call for', () => {
    const judged = judge(short, right, opened(right.map((d) => d.incident.id)), sent, 1000);
    expect(judged).toMatchObject({
      incidents: failures.length,
      falseAlerts: [],
      detected: failures.length,
      duplicates: [],
      missed: [],
      cascades: { missing: [] },
      resolution: { right: failures.length, wrong: [] },
    });
  });

  test('names the case of a false alert, a missed failure, a second incident and a cascade told apart', () => {
    const retry = short.cases.find((c) => c.kind === 'retry')!;
    const retryFail = runsOf(short, retry.id).find((e) => e.type === 'FAIL')!;
    const index = (variant: string) => failures.findIndex((c) => c.variant === variant);
    const [twice, gone, cascade] = [index('hourly'), index('daily-rerun'), index('cascade')];
    const downstream = failures[cascade]!.failure!.grouped.find((g) => g.job.includes('.'))!;
    const details = [
      detail('false', retryFail.job, retryFail.runId, [retryFail.runId]),
      right[twice]!,
      { ...right[twice]!, incident: { ...right[twice]!.incident, id: 'again' } },
      {
        ...right[cascade]!,
        signals: right[cascade]!.signals.filter((s) => s.detail.runId !== downstream.runId),
      },
    ];
    const judged = judge(short, details, opened(details.map((d) => d.incident.id)), sent, 1000);
    expect(judged.falseAlerts.map((f) => [f.caseId, f.runId])).toEqual([[retry.id, retryFail.runId]]);
    expect(judged.duplicates).toEqual([expect.stringContaining(`${failures[twice]!.id} `)]);
    expect(judged.missed).toEqual([expect.stringContaining(`${failures[gone]!.id} `)]);
    expect(judged.cascades.missing).toEqual([expect.stringContaining(downstream.runId)]);
    expect(judged.detected).toBe(failures.length - 1);
    expect(judged.falseAlertPct).toBeCloseTo(100 / details.length, 6);
  });
});
