/**
 * The labelled month of `npm run bench -- alerts`: a small company's Airflow pipelines over a month, with cases
 * an alerting system must tell apart (retries, skipped runs, late, out-of-order and duplicate events, and real
 * failures, some of which cascade downstream), each labelled with what must come of it.
 *
 * The company: 16 DAGs in four tiers, 62 tasks and 16 DAG jobs, 65 datasets. Hourly ingest DAGs (tier 1) feed
 * hourly transforms (tier 2, at half past), which feed daily models (tier 3, from 02:00), which feed daily reports
 * (tier 4, from 06:00). Each task reads the previous task's output (the first task the DAG's inputs) and writes
 * its own table. A DAG run is a run of the DAG's job; its tasks' runs name it in their parent facet, as the
 * OpenLineage Airflow provider sends them. Everything is drawn from the seeded random: two builds with one seed
 * are the same events, byte for byte.
 *
 * Ground truth is defined on the events themselves (see {@link failureEpisodes}): an injected failure is a run
 * that ends FAILED, executed, and stays its job's latest executed run for at least {@link STANDING_MINUTES}
 * simulated minutes after its FAIL is sent; every other FAIL stops being the latest within
 * {@link RETRY_WITHIN_MINUTES} (a retry started) or never is the latest (it arrived late, or the run was skipped).
 * Nothing lies between, so the answer does not depend on where in (5, 20) minutes a server's grace ends.
 */
import { createRandom, type Random } from './random.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** 2026-09-01T00:00Z: a fixed month in the past, so that two runs of the benchmark send the same events. */
export const MONTH_START_MS = Date.UTC(2026, 8, 1);

/** A FAIL followed within this many simulated minutes by a newer executed run of its job is retried. */
export const RETRY_WITHIN_MINUTES = 5;
/** The month's retry grace in simulated minutes: Airflow's default retry_delay is 5 minutes, the server's 10. */
export const GRACE_MINUTES = 10;
/** An injected failure stays its job's latest executed run for at least this many simulated minutes. */
export const STANDING_MINUTES = 20;

/** The namespace of every job. */
export const JOB_NAMESPACE = 'acme-airflow';
const WAREHOUSE = 'postgres://warehouse.acme.internal:5432';
const LANDING = 's3://acme-landing';
const PRODUCER = 'https://github.com/apache/airflow/tree/providers-openlineage/1.14.0';
const RUN_EVENT_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const FACETS = 'https://openlineage.io/spec/facets';

/** What a case is about. */
export type CaseKind = 'failure' | 'retry' | 'skipped' | 'late' | 'out-of-order' | 'duplicate';
export const CASE_KINDS: readonly CaseKind[] = [
  'failure',
  'retry',
  'skipped',
  'late',
  'out-of-order',
  'duplicate',
];

/** What must come of an injected failure. */
export interface FailureExpectation {
  /** Every failed try of the root job in the case, oldest first; the last one is the incident's root run. */
  readonly rootRuns: readonly string[];
  /**
   * Failures that stand while the root's does and follow from it (its DAG run, a task downstream that failed
   * for want of its data, that task's DAG run): their signals belong in the root's incident, not in their own.
   */
  readonly grouped: readonly { readonly job: string; readonly runId: string }[];
  /** The root job's run whose completion ends the failure: the incident resolves then. */
  readonly resolvedBy: string | undefined;
}

/** One labelled case. */
export interface MonthCase {
  /** `failure-3`, `retry-12`. */
  readonly id: string;
  readonly kind: CaseKind;
  /** How this case comes about, e.g. `cascade`, `two-retries`, `skip-fail`. */
  readonly variant: string;
  /** The job the case is about. */
  readonly job: string;
  /** The scheduled time of the DAG run it changes. */
  readonly atMs: number;
  /** Only for failures; every other case must open no incident. */
  readonly failure?: FailureExpectation;
}

/** One event of the month, in the order it is sent. */
export interface MonthEvent {
  /** When it is sent, in simulated time: its eventTime, unless it comes late or out of order. */
  readonly sendMs: number;
  readonly eventMs: number;
  readonly job: string;
  readonly runId: string;
  readonly type: 'START' | 'COMPLETE' | 'FAIL';
  /** False when the event says its run did not execute (skipped). */
  readonly executed: boolean;
  /** The case it belongs to; undefined for the month's ordinary runs. */
  readonly caseId: string | undefined;
  /** The event as JSON text. */
  readonly body: string;
}

/** The generated month. */
export interface Month {
  readonly seed: number;
  readonly days: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly jobs: readonly string[];
  readonly datasets: number;
  readonly dags: number;
  /** Sorted by sendMs (ties in the order they were generated). */
  readonly events: readonly MonthEvent[];
  readonly cases: readonly MonthCase[];
}

/** Options of {@link generateMonth}. */
export interface MonthOptions {
  /** @default 1 */
  readonly seed?: number;
  /** Days simulated. @default 30 */
  readonly days?: number;
  /** Midnight UTC of the first day. @default MONTH_START_MS */
  readonly startMs?: number;
}

/** How many cases of each kind a month of `days` days holds. */
export function caseCounts(days: number): Readonly<Record<CaseKind, number>> {
  return {
    failure: Math.max(3, Math.round(days * 0.4)),
    retry: Math.max(4, Math.round(days * 0.8)),
    skipped: Math.max(3, Math.round(days * 0.5)),
    late: Math.max(2, Math.round(days * 0.3)),
    'out-of-order': Math.max(2, Math.round(days * 0.3)),
    duplicate: Math.max(2, Math.round(days * 0.3)),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The pipeline.

interface Dataset {
  readonly namespace: string;
  readonly name: string;
}

interface Task {
  readonly job: string;
  readonly name: string;
  readonly index: number;
  readonly inputs: readonly Dataset[];
  readonly output: Dataset;
  readonly durationMs: number;
}

interface Dag {
  readonly name: string;
  readonly tier: 1 | 2 | 3 | 4;
  readonly cadence: 'hourly' | 'daily';
  /** After the hour (hourly) or after midnight (daily). */
  readonly offsetMs: number;
  readonly tasks: readonly Task[];
  /** DAGs whose first task reads this DAG's last output. */
  readonly consumers: Dag[];
}

function buildPipeline(random: Random): Dag[] {
  const dags: Dag[] = [];
  const make = (
    name: string,
    tier: Dag['tier'],
    offsetMs: number,
    taskNames: readonly string[],
    inputs: readonly Dag[] | readonly Dataset[],
  ): Dag => {
    const cadence = tier <= 2 ? 'hourly' : 'daily';
    const upstream = inputs.filter((input): input is Dag => 'tasks' in input);
    const sources: Dataset[] = inputs.map((input) => ('tasks' in input ? lastOutput(input) : input));
    const tasks: Task[] = [];
    for (const [index, task] of taskNames.entries()) {
      const minutes = cadence === 'hourly' ? 1 + random.int(3) : 2 + random.int(7);
      tasks.push({
        job: `${name}.${task}`,
        name: task,
        index,
        inputs: index === 0 ? sources : [tasks[index - 1]!.output],
        output: { namespace: WAREHOUSE, name: `${name}.${task}` },
        durationMs: minutes * MINUTE_MS + random.int(30) * 1000,
      });
    }
    const dag: Dag = { name, tier, cadence, offsetMs, tasks, consumers: [] };
    for (const source of upstream) source.consumers.push(dag);
    dags.push(dag);
    return dag;
  };
  const areas = ['orders', 'payments', 'sessions'];
  const ingest = areas.map((area, i) =>
    make(
      `ingest_${area}`,
      1,
      i * 4 * MINUTE_MS,
      ['extract', 'validate', 'load'],
      [{ namespace: LANDING, name: `exports/${area}` }],
    ),
  );
  const transform = areas.map((area, i) =>
    make(
      `transform_${area}`,
      2,
      (30 + i * 4) * MINUTE_MS,
      ['enrich', 'aggregate', 'publish'],
      i === 0 ? [ingest[0]!, ingest[1]!] : [ingest[i]!],
    ),
  );
  const daily: readonly [string, readonly number[]][] = [
    ['finance', [0, 1]],
    ['marketing', [2]],
    ['product', [2, 0]],
    ['support', [2]],
    ['ops', [0]],
    ['sales', [0]],
    ['risk', [1]],
  ];
  const models = daily.map(([area, from], i) =>
    make(
      `daily_${area}`,
      3,
      2 * HOUR_MS + i * 5 * MINUTE_MS,
      ['stage', 'join', 'model', 'test', 'export'],
      from.map((k) => transform[k]!),
    ),
  );
  const reports: readonly [string, readonly number[]][] = [
    ['exec', [0, 5]],
    ['growth', [1, 2]],
    ['operations', [4, 6]],
  ];
  reports.forEach(([area, from], i) =>
    make(
      `report_${area}`,
      4,
      6 * HOUR_MS + i * 10 * MINUTE_MS,
      ['extract', 'build', 'publish'],
      from.map((k) => models[k]!),
    ),
  );
  return dags;
}

const lastOutput = (dag: Dag): Dataset => dag.tasks[dag.tasks.length - 1]!.output;

// ---------------------------------------------------------------------------------------------------------------
// Plans: how a DAG run departs from an ordinary one.

type Outcome = 'FAIL' | 'COMPLETE';
type Which = 'first' | 'last';

interface TaskPlan {
  /** The outcome of each try; the default is one that completes. */
  readonly tries?: readonly Outcome[];
  /**
   * The task did not run: one event of this type says so (`started`: after a START that did not), and the tasks
   * after it are skipped too; or (`reused`) a cached result stood in for it, and the tasks after it run.
   */
  readonly skipped?: {
    readonly eventType: Outcome;
    readonly how: 'facet' | 'airflow' | 'started' | 'reused';
  };
  /** The first try's events are sent this much after their time. */
  readonly lateMs?: number;
  /** A try's START is sent this long after its terminal event. */
  readonly startAfterEnd?: { readonly which: Which; readonly ms: number };
  /** An event of a try is sent a second time, this long after the first. */
  readonly duplicate?: { readonly which: Which; readonly event: 'START' | 'END'; readonly ms: number };
  /** Minutes from a failed try to the next one's START: Airflow's retry_delay. @default 2-4 */
  readonly retryDelayMs?: number;
  /** Length of a retry. @default the task's */
  readonly retryDurationMs?: number;
}

interface DagRunPlan {
  readonly caseId: string;
  readonly tasks: ReadonlyMap<number, TaskPlan>;
  /** After a task failed for good, the tasks after it report `upstream_failed` (else, as Airflow's listener, nothing). */
  readonly upstreamFailed?: boolean;
  /** After a failed DAG run, someone runs the failed task and those after it again at this time. */
  readonly rerunAtMs?: number;
  /** Every event of the DAG run is sent again this long after its end. */
  readonly replayAfterMs?: number;
  /** A failure case's error message for its first failing task. */
  readonly error?: string;
}

interface Slot {
  readonly dag: Dag;
  readonly atMs: number;
}

const slotKey = (dag: Dag, atMs: number) => `${dag.name}@${atMs}`;

// ---------------------------------------------------------------------------------------------------------------
// Events.

interface Emitted {
  sendMs: number;
  readonly eventMs: number;
  readonly job: string;
  readonly runId: string;
  readonly type: MonthEvent['type'];
  readonly executed: boolean;
  readonly caseId: string | undefined;
  readonly body: string;
  readonly order: number;
}

const facet = (version: string, name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `${FACETS}/${version}/${name}.json#/$defs/${name}`,
  ...fields,
});

const customFacet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://acme.example/schemas/${name}.json`,
  ...fields,
});

/** A UUID (version 4 layout) from the seeded random, so that run ids repeat from one build to the next. */
function seededUuid(random: Random): string {
  const hex: string[] = [];
  for (let i = 0; i < 16; i++) {
    let byte = random.int(256);
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    if (i === 8) byte = (byte & 0x3f) | 0x80;
    hex.push(byte.toString(16).padStart(2, '0'));
  }
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------------------------
// The generator.

/**
 * Generates the labelled month; see the module comment.
 * @throws Error when the labels do not follow from the events ({@link checkMonth}): a generator bug.
 * @example
 * ```ts
 * const month = generateMonth({ seed: 1, days: 30 });
 * month.cases.filter((c) => c.kind === 'failure').length; // 12
 * ```
 */
export function generateMonth(options: MonthOptions = {}): Month {
  const seed = options.seed ?? 1;
  const days = options.days ?? 30;
  const startMs = options.startMs ?? MONTH_START_MS;
  const endMs = startMs + days * DAY_MS;
  if (!Number.isInteger(days) || days < 5)
    throw new RangeError(`generateMonth: days must be a whole number of at least 5; got ${days}.`);
  const random = createRandom(seed);
  const dags = buildPipeline(random);
  const between = (low: number, high: number) => low + random.int(high - low + 1);

  // Every scheduled DAG run whose work ends well inside the month.
  const slots: Slot[] = [];
  for (let day = 0; day < days; day++) {
    for (const dag of dags) {
      const times =
        dag.cadence === 'hourly'
          ? Array.from({ length: 24 }, (_, hour) => startMs + day * DAY_MS + hour * HOUR_MS + dag.offsetMs)
          : [startMs + day * DAY_MS + dag.offsetMs];
      for (const atMs of times) if (atMs < endMs - 3 * HOUR_MS) slots.push({ dag, atMs });
    }
  }
  slots.sort((a, b) => a.atMs - b.atMs || (a.dag.name < b.dag.name ? -1 : 1));

  // Cases: each has the pipeline to itself for its window (no other case overlaps it), so that what the server
  // does with it can be told from what it does with the others.
  const plans = new Map<string, DagRunPlan>();
  const windows: { from: number; to: number }[] = [];
  const cases: { case: Omit<MonthCase, 'failure'>; root?: { dag: Dag; task: Task; atMs: number } }[] = [];
  const counts = caseCounts(days);
  const PAD = 30 * MINUTE_MS;
  const free = (from: number, to: number) =>
    from >= startMs + 2 * HOUR_MS &&
    to <= endMs - HOUR_MS &&
    windows.every((w) => to + PAD <= w.from || from >= w.to + PAD);
  const pick = (
    accept: (dag: Dag) => boolean,
    windowOf: (slot: Slot) => number,
    what: string,
  ): Slot & { to: number } => {
    const candidates = slots.filter((slot) => accept(slot.dag));
    for (let attempt = 0; attempt < 20_000; attempt++) {
      const slot = candidates[random.int(candidates.length)]!;
      const to = windowOf(slot);
      if (free(slot.atMs, to)) {
        windows.push({ from: slot.atMs, to });
        return { ...slot, to };
      }
    }
    throw new Error(`generateMonth: no room left for ${what} in ${days} days; use more days.`);
  };
  const pickTask = (dag: Dag) => dag.tasks[random.int(dag.tasks.length)]!;
  const hourly = (dag: Dag) => dag.cadence === 'hourly';
  const nextSlot = (dag: Dag, atMs: number) => atMs + (dag.cadence === 'hourly' ? HOUR_MS : DAY_MS);
  const add = (
    kind: CaseKind,
    variant: string,
    slot: Slot,
    task: Task,
    plan: Omit<DagRunPlan, 'caseId'>,
    isRoot = false,
  ) => {
    const id = `${kind}-${cases.filter((c) => c.case.kind === kind).length + 1}`;
    plans.set(slotKey(slot.dag, slot.atMs), { caseId: id, ...plan });
    cases.push({
      case: { id, kind, variant, job: task.job, atMs: slot.atMs },
      ...(isRoot ? { root: { dag: slot.dag, task, atMs: slot.atMs } } : {}),
    });
    return id;
  };
  const errors = [
    'psycopg2.OperationalError: could not connect to server: Connection timed out',
    'botocore.exceptions.ClientError: AccessDenied when calling GetObject',
    'snowflake.connector.errors.ProgrammingError: 002003: Object does not exist',
    'KeyError: customer_id',
    'airflow.exceptions.AirflowTaskTimeout: Timeout, PID: 4242',
  ];
  const error = () => errors[random.int(errors.length)]!;

  // Failures first: they hold the longest windows.
  const failureVariants = [
    'hourly',
    'cascade',
    'daily-rerun',
    'duplicate-fail',
    'skipped-next',
    'daily-cascade',
    'ooo-fix',
  ] as const;
  for (let n = 0; n < counts.failure; n++) {
    const variant = failureVariants[n % failureVariants.length]!;
    const fails: TaskPlan = { tries: ['FAIL', 'FAIL'] };
    switch (variant) {
      case 'hourly':
      case 'duplicate-fail': {
        const slot = pick(hourly, (s) => s.atMs + 2 * HOUR_MS + 30 * MINUTE_MS, `failure ${variant}`);
        const task = pickTask(slot.dag);
        const plan: TaskPlan =
          variant === 'duplicate-fail'
            ? { ...fails, duplicate: { which: 'last', event: 'END', ms: between(1, 2) * MINUTE_MS } }
            : fails;
        add('failure', variant, slot, task, { tasks: new Map([[task.index, plan]]), error: error() }, true);
        break;
      }
      case 'skipped-next':
      case 'ooo-fix': {
        const slot = pick(hourly, (s) => s.atMs + 3 * HOUR_MS + 30 * MINUTE_MS, `failure ${variant}`);
        const task = pickTask(slot.dag);
        const id = add(
          'failure',
          variant,
          slot,
          task,
          { tasks: new Map([[task.index, fails]]), error: error() },
          true,
        );
        const next: TaskPlan =
          variant === 'skipped-next'
            ? { skipped: { eventType: 'COMPLETE', how: 'facet' } }
            : { startAfterEnd: { which: 'last', ms: between(1, 2) * MINUTE_MS } };
        plans.set(slotKey(slot.dag, nextSlot(slot.dag, slot.atMs)), {
          caseId: id,
          tasks: new Map([[task.index, next]]),
        });
        break;
      }
      case 'cascade': {
        const slot = pick(
          (dag) => dag.tier === 1,
          (s) => s.atMs + 2 * HOUR_MS + 30 * MINUTE_MS,
          'failure cascade',
        );
        const task = pickTask(slot.dag);
        const id = add(
          'failure',
          variant,
          slot,
          task,
          { tasks: new Map([[task.index, fails]]), upstreamFailed: true, error: error() },
          true,
        );
        // The hourly transform of the same hour finds no new partition and fails too.
        const consumer = slot.dag.consumers[0]!;
        plans.set(slotKey(consumer, slot.atMs - slot.dag.offsetMs + consumer.offsetMs), {
          caseId: id,
          tasks: new Map([[0, fails]]),
          upstreamFailed: true,
          error: `ValueError: no new partition in ${lastOutput(slot.dag).name}`,
        });
        break;
      }
      case 'daily-rerun': {
        const rerunAfter = between(60, 120) * MINUTE_MS;
        const slot = pick(
          (dag) => dag.tier === 3,
          (s) => s.atMs + rerunAfter + 3 * HOUR_MS,
          'failure daily-rerun',
        );
        const task = pickTask(slot.dag);
        add(
          'failure',
          variant,
          slot,
          task,
          {
            tasks: new Map([[task.index, fails]]),
            rerunAtMs: slot.atMs + HOUR_MS + rerunAfter,
            error: error(),
          },
          true,
        );
        break;
      }
      case 'daily-cascade': {
        // A model fails at 02:xx; the report reading it fails at 06:xx; someone reruns both in the morning.
        const slot = pick(
          (dag) => dag.tier === 3 && dag.consumers.length > 0,
          (s) => s.atMs - s.dag.offsetMs + 10 * HOUR_MS,
          'failure daily-cascade',
        );
        const task = pickTask(slot.dag);
        const midnight = slot.atMs - slot.dag.offsetMs;
        const id = add(
          'failure',
          variant,
          slot,
          task,
          {
            tasks: new Map([[task.index, fails]]),
            upstreamFailed: true,
            rerunAtMs: midnight + 7 * HOUR_MS + 30 * MINUTE_MS,
            error: error(),
          },
          true,
        );
        const consumer = slot.dag.consumers[0]!;
        plans.set(slotKey(consumer, midnight + consumer.offsetMs), {
          caseId: id,
          tasks: new Map([[0, fails]]),
          upstreamFailed: true,
          rerunAtMs: midnight + 8 * HOUR_MS + 30 * MINUTE_MS,
          error: `dbt.exceptions.DbtRuntimeError: source ${lastOutput(slot.dag).name} is stale`,
        });
        break;
      }
    }
  }

  const simple = (
    kind: CaseKind,
    variant: string,
    accept: (dag: Dag) => boolean,
    windowMs: number,
    plan: (task: Task) => Omit<DagRunPlan, 'caseId'>,
  ) => {
    const slot = pick(accept, (s) => s.atMs + windowMs, `${kind} ${variant}`);
    const task = pickTask(slot.dag);
    add(kind, variant, slot, task, plan(task));
  };
  const one = (task: Task, plan: TaskPlan) => ({ tasks: new Map([[task.index, plan]]) });
  const any = () => true;
  const daily = (dag: Dag) => dag.cadence === 'daily';

  const retryVariants = ['one-retry', 'two-retries', 'daily-retry', 'retry-duplicate-fail'] as const;
  for (let n = 0; n < counts.retry; n++) {
    const variant = retryVariants[n % retryVariants.length]!;
    const tries: readonly Outcome[] =
      variant === 'two-retries' ? ['FAIL', 'FAIL', 'COMPLETE'] : ['FAIL', 'COMPLETE'];
    simple('retry', variant, variant === 'daily-retry' ? daily : hourly, 2 * HOUR_MS, (task) =>
      one(task, {
        tries,
        ...(variant === 'retry-duplicate-fail'
          ? { duplicate: { which: 'first', event: 'END', ms: MINUTE_MS } }
          : {}),
      }),
    );
  }
  const skipVariants = [
    ['skip-fail', 'FAIL', 'facet'],
    ['skip-complete', 'COMPLETE', 'facet'],
    ['skip-fail-airflow', 'FAIL', 'airflow'],
    ['skip-started-fail', 'FAIL', 'started'],
    ['reused-complete', 'COMPLETE', 'reused'],
  ] as const;
  for (let n = 0; n < counts.skipped; n++) {
    const [variant, eventType, how] = skipVariants[n % skipVariants.length]!;
    simple('skipped', variant, any, 2 * HOUR_MS, (task) => one(task, { skipped: { eventType, how } }));
  }
  for (let n = 0; n < counts.late; n++) {
    const variant = n % 2 === 0 ? 'late-complete' : 'late-fail';
    const lateMs = between(120, 300) * MINUTE_MS;
    simple('late', variant, hourly, lateMs + 90 * MINUTE_MS, (task) =>
      one(task, { tries: variant === 'late-fail' ? ['FAIL', 'COMPLETE'] : ['COMPLETE'], lateMs }),
    );
  }
  const oooVariants = [
    'complete-before-start',
    'fail-before-start-retried',
    'retry-complete-before-start',
  ] as const;
  for (let n = 0; n < counts['out-of-order']; n++) {
    const variant = oooVariants[n % oooVariants.length]!;
    simple('out-of-order', variant, any, 2 * HOUR_MS, (task) =>
      one(
        task,
        variant === 'complete-before-start'
          ? { startAfterEnd: { which: 'last', ms: between(1, 2) * MINUTE_MS } }
          : variant === 'fail-before-start-retried'
            ? { tries: ['FAIL', 'COMPLETE'], startAfterEnd: { which: 'first', ms: MINUTE_MS } }
            : // The retry's COMPLETE must come within the retry window, START or not: a short retry, soon.
              {
                tries: ['FAIL', 'COMPLETE'],
                startAfterEnd: { which: 'last', ms: MINUTE_MS },
                retryDelayMs: between(60, 90) * 1000,
                retryDurationMs: between(60, 100) * 1000,
              },
      ),
    );
  }
  const duplicateVariants = ['duplicate-complete', 'duplicate-start', 'duplicate-dag-run'] as const;
  for (let n = 0; n < counts.duplicate; n++) {
    const variant = duplicateVariants[n % duplicateVariants.length]!;
    simple('duplicate', variant, any, 3 * HOUR_MS, (task) =>
      variant === 'duplicate-dag-run'
        ? { ...one(task, { tries: ['FAIL', 'COMPLETE'] }), replayAfterMs: between(5, 10) * MINUTE_MS }
        : one(task, {
            duplicate: {
              which: 'last',
              event: variant === 'duplicate-start' ? 'START' : 'END',
              ms: between(1, 3) * MINUTE_MS,
            },
          }),
    );
  }

  // Render every DAG run.
  const emitted: Emitted[] = [];
  let order = 0;
  const failedRuns = new Map<string, string[]>(); // slot key -> failed tries of the task that failed for good
  const dagRunIds = new Map<string, string>();
  const failedTasks = new Map<string, { job: string; runId: string }>(); // slot key -> the last failed try
  for (const slot of slots) {
    const key = slotKey(slot.dag, slot.atMs);
    const plan = plans.get(key);
    const rendered = renderDagRun(slot, plan, random, () => order++);
    emitted.push(...rendered.events);
    dagRunIds.set(key, rendered.dagRunId);
    if (rendered.failedTries.length > 0) {
      failedRuns.set(key, rendered.failedTries);
      failedTasks.set(key, { job: rendered.failedJob!, runId: rendered.failedTries.at(-1)! });
    }
  }
  emitted.sort((a, b) => a.sendMs - b.sendMs || a.order - b.order);
  const events: MonthEvent[] = emitted.map(({ order: _, ...event }) => event);

  // What each failure must come to: its root runs, what it explains, and the run that ends it.
  const runsByJob = new Map<string, { runId: string; startMs: number; type: string; executed: boolean }[]>();
  for (const event of events) {
    if (event.type !== 'START' && event.type !== 'COMPLETE' && event.type !== 'FAIL') continue;
    let runs = runsByJob.get(event.job);
    if (!runs) runsByJob.set(event.job, (runs = []));
    const known = runs.find((run) => run.runId === event.runId);
    if (known === undefined)
      runs.push({ runId: event.runId, startMs: event.eventMs, type: event.type, executed: event.executed });
    else {
      known.startMs = Math.min(known.startMs, event.eventMs);
      if (event.type !== 'START') known.type = event.type;
      if (!event.executed) known.executed = false;
    }
  }
  const labelled: MonthCase[] = cases.map(({ case: c, root }) => {
    if (root === undefined) return c;
    const key = slotKey(root.dag, root.atMs);
    const rootRuns = failedRuns.get(key) ?? [];
    const last = rootRuns.at(-1);
    const grouped: { job: string; runId: string }[] = [{ job: root.dag.name, runId: dagRunIds.get(key)! }];
    // The cascade's consumer, if this case planned one.
    for (const [otherKey, plan] of plans) {
      if (plan.caseId !== c.id || otherKey === key) continue;
      const failed = failedTasks.get(otherKey);
      if (failed === undefined) continue;
      grouped.push(failed, {
        job: otherKey.slice(0, otherKey.indexOf('@')),
        runId: dagRunIds.get(otherKey)!,
      });
    }
    const lastStart = runsByJob.get(root.task.job)?.find((run) => run.runId === last)?.startMs ?? Infinity;
    const resolvedBy = runsByJob
      .get(root.task.job)
      ?.filter((run) => run.startMs > lastStart && run.executed && run.type === 'COMPLETE')
      .sort((a, b) => a.startMs - b.startMs)[0]?.runId;
    return { ...c, failure: { rootRuns, grouped, resolvedBy } };
  });
  labelled.sort((a, b) => a.atMs - b.atMs);

  const month: Month = {
    seed,
    days,
    startMs,
    endMs,
    jobs: dags.flatMap((dag) => [dag.name, ...dag.tasks.map((task) => task.job)]),
    datasets: new Set(
      dags
        .flatMap((dag) => dag.tasks.flatMap((t) => [t.output, ...t.inputs]))
        .map((d) => `${d.namespace}/${d.name}`),
    ).size,
    dags: dags.length,
    events,
    cases: labelled,
  };
  const problems = checkMonth(month);
  if (problems.length > 0)
    throw new Error(
      `generateMonth (seed ${seed}, ${days} days) made wrong labels:\n  ${problems.join('\n  ')}`,
    );
  return month;
}

interface RenderedDagRun {
  readonly events: Emitted[];
  readonly dagRunId: string;
  /** The tries of the task that failed for good, oldest first; empty when the run did not fail. */
  readonly failedTries: string[];
  readonly failedJob: string | undefined;
}

/** The events of one DAG run: the DAG's own run and its tasks', as the Airflow provider sends them. */
function renderDagRun(
  slot: Slot,
  plan: DagRunPlan | undefined,
  random: Random,
  nextOrder: () => number,
): RenderedDagRun {
  const { dag, atMs } = slot;
  const events: Emitted[] = [];
  const dagRunId = seededUuid(random);
  const period = dag.cadence === 'hourly' ? HOUR_MS : DAY_MS;
  const nominalTime = facet('1-0-1', 'NominalTimeRunFacet', {
    nominalStartTime: iso(atMs - dag.offsetMs),
    nominalEndTime: iso(atMs - dag.offsetMs + period),
  });
  const parent = facet('1-2-0', 'ParentRunFacet', {
    run: { runId: dagRunId },
    job: { namespace: JOB_NAMESPACE, name: dag.name },
    root: { run: { runId: dagRunId }, job: { namespace: JOB_NAMESPACE, name: dag.name } },
  });
  const jobType = (kind: 'DAG' | 'TASK') =>
    facet('2-0-4', 'JobTypeJobFacet', { processingType: 'BATCH', integration: 'AIRFLOW', jobType: kind });
  // Which events are the case's: from the first task the plan changes on, and the DAG run's end.
  const firstChanged = plan === undefined ? Infinity : Math.min(...plan.tasks.keys());
  const caseOf = (index: number) => (plan !== undefined && index >= firstChanged ? plan.caseId : undefined);

  const emit = (
    job: string,
    runId: string,
    type: MonthEvent['type'],
    eventMs: number,
    caseId: string | undefined,
    extra: { task?: Task; runFacets?: Record<string, unknown>; executed?: boolean; sendMs?: number } = {},
  ): Emitted => {
    const task = extra.task;
    const body = {
      eventType: type,
      eventTime: iso(eventMs),
      producer: PRODUCER,
      schemaURL: RUN_EVENT_SCHEMA,
      run: {
        runId,
        facets: { nominalTime, ...(task ? { parent } : {}), ...extra.runFacets },
      },
      job: { namespace: JOB_NAMESPACE, name: job, facets: { jobType: jobType(task ? 'TASK' : 'DAG') } },
      inputs: task ? task.inputs.map((d) => ({ namespace: d.namespace, name: d.name })) : [],
      outputs: task ? [{ namespace: task.output.namespace, name: task.output.name }] : [],
    };
    const event: Emitted = {
      sendMs: extra.sendMs ?? eventMs,
      eventMs,
      job,
      runId,
      type,
      executed: extra.executed ?? true,
      caseId,
      body: JSON.stringify(body),
      order: nextOrder(),
    };
    events.push(event);
    return event;
  };
  const errorFacet = (message: string) => ({
    errorMessage: facet('1-0-1', 'ErrorMessageRunFacet', { message, programmingLanguage: 'python' }),
  });

  const dagStart = atMs + 5_000;
  emit(
    dag.name,
    dagRunId,
    'START',
    dagStart,
    plan?.caseId !== undefined && firstChanged === 0 ? plan.caseId : undefined,
  );
  let t = dagStart + 20_000;
  let failedAt: number | undefined;
  let skipping = false;
  const failedTries: string[] = [];
  let failedJob: string | undefined;

  /** One try of a task: its START and its end, with the plan's lateness, order and duplicates. */
  const tryRun = (
    task: Task,
    outcome: Outcome,
    startMs: number,
    durationMs: number,
    which: { first: boolean; last: boolean },
    taskPlan: TaskPlan | undefined,
    caseId: string | undefined,
    message?: string,
  ): { runId: string; endMs: number } => {
    const runId = seededUuid(random);
    const endMs = startMs + durationMs;
    const applies = (w: Which | undefined) =>
      w === 'first' ? which.first : w === 'last' ? which.last : false;
    const late = which.first && taskPlan?.lateMs !== undefined ? taskPlan.lateMs : 0;
    const startAfter = applies(taskPlan?.startAfterEnd?.which) ? taskPlan!.startAfterEnd!.ms : undefined;
    const start = emit(task.job, runId, 'START', startMs, caseId, {
      task,
      sendMs: (startAfter === undefined ? startMs : endMs + startAfter) + late,
    });
    const end = emit(task.job, runId, outcome, endMs, caseId, {
      task,
      sendMs: endMs + late,
      ...(outcome === 'FAIL' ? { runFacets: errorFacet(message ?? 'Task failed') } : {}),
    });
    const duplicate = taskPlan?.duplicate;
    if (duplicate !== undefined && applies(duplicate.which)) {
      const original = duplicate.event === 'START' ? start : end;
      events.push({ ...original, sendMs: original.sendMs + duplicate.ms, order: nextOrder() });
    }
    return { runId, endMs };
  };

  for (const task of dag.tasks) {
    const taskPlan = plan?.tasks.get(task.index);
    const caseId = caseOf(task.index);
    const jitter = random.int(40_000);
    if (failedAt !== undefined) {
      // Airflow marks the tasks after a failed one upstream_failed; its listener sends nothing for them, unless
      // this plan says the scheduler reports them.
      if (plan?.upstreamFailed)
        emit(task.job, seededUuid(random), 'FAIL', t, caseId, {
          task,
          executed: false,
          runFacets: {
            airflow: customFacet('AirflowRunFacet', {
              dag: { dag_id: dag.name },
              task: { task_id: task.name },
              taskInstance: { state: 'upstream_failed', try_number: 0 },
            }),
          },
        });
      t += 5_000;
      continue;
    }
    const skipped: TaskPlan['skipped'] =
      taskPlan?.skipped ?? (skipping ? { eventType: 'COMPLETE', how: 'facet' } : undefined);
    if (skipped !== undefined) {
      skipping = skipped.how !== 'reused';
      const runId = seededUuid(random);
      const reason =
        skipped.how === 'reused'
          ? 'the result of an earlier run with the same inputs'
          : taskPlan?.skipped
            ? 'branch not taken'
            : 'upstream task skipped';
      if (skipped.how === 'started') emit(task.job, runId, 'START', t, caseId, { task });
      emit(task.job, runId, skipped.eventType, t + (skipped.how === 'started' ? 30_000 : 1_000), caseId, {
        task,
        executed: false,
        runFacets:
          skipped.how === 'airflow'
            ? {
                airflow: customFacet('AirflowRunFacet', {
                  dag: { dag_id: dag.name },
                  task: { task_id: task.name },
                  taskInstance: { state: 'skipped', try_number: 1 },
                }),
              }
            : {
                headwater_execution: customFacet('HeadwaterExecutionRunFacet', {
                  outcome: skipped.how === 'reused' ? 'reused' : 'skipped',
                  reason,
                }),
              },
      });
      t += 35_000;
      continue;
    }
    const tries = taskPlan?.tries ?? ['COMPLETE'];
    for (const [k, outcome] of tries.entries()) {
      const first = k === 0;
      const last = k === tries.length - 1;
      // A failing try fails part-way; a retry may be shorter (the plan says so when it matters).
      const full =
        (first ? task.durationMs : (taskPlan?.retryDurationMs ?? task.durationMs)) + (first ? jitter : 0);
      const duration = outcome === 'FAIL' ? Math.round(full * (0.2 + random.next() * 0.6)) : full;
      const message =
        outcome === 'FAIL'
          ? failedTries.length === 0 && plan?.error
            ? plan.error
            : 'Task failed: see log'
          : undefined;
      const result = tryRun(task, outcome, t, duration, { first, last }, taskPlan, caseId, message);
      if (outcome === 'FAIL' && tries.every((o) => o === 'FAIL')) {
        failedTries.push(result.runId);
        failedJob = task.job;
      }
      t = result.endMs + (last ? 30_000 : (taskPlan?.retryDelayMs ?? (2 + random.int(3)) * MINUTE_MS));
    }
    if (tries.at(-1) === 'FAIL') failedAt = t;
  }
  const dagEnd = t;
  emit(dag.name, dagRunId, failedAt !== undefined ? 'FAIL' : 'COMPLETE', dagEnd, plan?.caseId, {
    ...(failedAt !== undefined ? { runFacets: errorFacet('DAG run failed: a task failed') } : {}),
  });

  if (failedAt !== undefined && plan?.rerunAtMs !== undefined) {
    // Someone clears the failed task: it and every task after it run again, under the same DAG run.
    let r = plan.rerunAtMs;
    const from = dag.tasks.findIndex((task) => task.job === failedJob);
    for (const task of dag.tasks.slice(from)) {
      const result = tryRun(
        task,
        'COMPLETE',
        r,
        task.durationMs,
        { first: false, last: false },
        undefined,
        plan.caseId,
      );
      r = result.endMs + 30_000;
    }
  }
  if (plan?.replayAfterMs !== undefined) {
    // A producer that sends the whole DAG run again (a retried flush): the very same bytes.
    const copies = events.map((event) => ({
      ...event,
      sendMs: dagEnd + plan.replayAfterMs! + (event.sendMs - dagStart),
      caseId: plan.caseId,
      order: nextOrder(),
    }));
    events.push(...copies);
  }
  return { events, dagRunId, failedTries, failedJob };
}

// ---------------------------------------------------------------------------------------------------------------
// The oracle.

/** A stretch of sends during which a failed run was its job's latest executed run. */
export interface FailureEpisode {
  readonly job: string;
  readonly runId: string;
  /** The event after which the failed run was the latest. */
  readonly fromIndex: number;
  /** The event after which it no longer was; undefined when it still is at the end of the month. */
  readonly toIndex: number | undefined;
  /** Simulated minutes between the two sends (Infinity when it never ended). */
  readonly minutes: number;
}

/**
 * Replays the events in send order as the server's rule reads them and returns every stretch during which a job's
 * latest executed run (by start time, else end time, as the server orders runs) had FAILED. The month's labels
 * are checked against this, not against the generator's intentions.
 */
export function failureEpisodes(events: readonly MonthEvent[]): FailureEpisode[] {
  interface RunState {
    startMs: number | undefined;
    endMs: number | undefined;
    failed: boolean;
    executed: boolean;
  }
  const jobs = new Map<string, Map<string, RunState>>();
  const open = new Map<string, { runId: string; fromIndex: number }>();
  const episodes: FailureEpisode[] = [];
  events.forEach((event, index) => {
    let runs = jobs.get(event.job);
    if (!runs) jobs.set(event.job, (runs = new Map<string, RunState>()));
    let run = runs.get(event.runId);
    if (!run)
      runs.set(event.runId, (run = { startMs: undefined, endMs: undefined, failed: false, executed: true }));
    if (event.type === 'START') run.startMs ??= event.eventMs;
    else {
      run.endMs ??= event.eventMs;
      run.failed = event.type === 'FAIL';
    }
    if (!event.executed) run.executed = false;
    let latest: { runId: string; key: number; run: RunState } | undefined;
    for (const [runId, candidate] of runs) {
      if (!candidate.executed) continue;
      const key = candidate.startMs ?? candidate.endMs!;
      if (latest === undefined || key > latest.key) latest = { runId, key, run: candidate };
    }
    const failing = latest?.run.failed ? latest.runId : undefined;
    const current = open.get(event.job);
    if (current !== undefined && current.runId !== failing) {
      episodes.push({
        job: event.job,
        runId: current.runId,
        fromIndex: current.fromIndex,
        toIndex: index,
        minutes: (event.sendMs - events[current.fromIndex]!.sendMs) / MINUTE_MS,
      });
      open.delete(event.job);
    }
    if (failing !== undefined && open.get(event.job) === undefined)
      open.set(event.job, { runId: failing, fromIndex: index });
  });
  for (const [job, current] of open)
    episodes.push({
      job,
      runId: current.runId,
      fromIndex: current.fromIndex,
      toIndex: undefined,
      minutes: Infinity,
    });
  return episodes.sort((a, b) => a.fromIndex - b.fromIndex);
}

/**
 * What is wrong with a month's labels, in words (none for a good month): every failure episode is either over
 * within {@link RETRY_WITHIN_MINUTES} or lasts {@link STANDING_MINUTES} or more; the lasting ones are exactly the
 * failure cases' last root runs and grouped runs; each failure's `resolvedBy` is the run that ended its root's
 * episode; every FAIL, late or out-of-order event belongs to a case.
 */
export function checkMonth(month: Month): string[] {
  const problems: string[] = [];
  const episodes = failureEpisodes(month.events);
  const expected = new Map<string, string>();
  for (const c of month.cases) {
    if (c.failure === undefined) continue;
    const last = c.failure.rootRuns.at(-1);
    if (last === undefined) problems.push(`${c.id}: no failed root run`);
    else expected.set(last, c.id);
    for (const grouped of c.failure.grouped) expected.set(grouped.runId, c.id);
    if (c.failure.resolvedBy === undefined) problems.push(`${c.id}: nothing resolves it within the month`);
  }
  for (const episode of episodes) {
    const at = iso(month.events[episode.fromIndex]!.sendMs);
    if (episode.minutes > RETRY_WITHIN_MINUTES && episode.minutes < STANDING_MINUTES)
      problems.push(
        `${episode.job} run ${episode.runId} at ${at}: failing for ${episode.minutes.toFixed(1)} min, between a retry and a failure`,
      );
    if (episode.minutes >= STANDING_MINUTES) {
      if (!expected.has(episode.runId))
        problems.push(
          `${episode.job} run ${episode.runId} at ${at}: fails for good but no failure case names it`,
        );
      expected.delete(episode.runId);
    }
  }
  for (const [runId, id] of expected)
    problems.push(`${id}: run ${runId} is labelled as failing for good but does not`);
  for (const c of month.cases) {
    if (c.failure === undefined) continue;
    const root = episodes.find(
      (e) => e.runId === c.failure!.rootRuns.at(-1) && e.minutes >= STANDING_MINUTES,
    );
    const ender = root?.toIndex === undefined ? undefined : month.events[root.toIndex]!.runId;
    if (root !== undefined && ender !== c.failure.resolvedBy)
      problems.push(`${c.id}: resolvedBy ${c.failure.resolvedBy} but run ${ender} ends the failure`);
  }
  for (const event of month.events) {
    if (event.caseId !== undefined) continue;
    if (event.type === 'FAIL' || event.sendMs !== event.eventMs)
      problems.push(
        `${event.job} run ${event.runId}: a ${event.type} sent at ${iso(event.sendMs)} outside any case`,
      );
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// The pace of the replay.

/** How simulated time maps to wall-clock time during the replay. */
export interface ReplayPace {
  /** Wall milliseconds per simulated minute after a case's event. @default 100 */
  readonly minuteMs: number;
  /** Wall milliseconds per simulated minute elsewhere (ordinary runs only). @default 1 */
  readonly idleMinuteMs: number;
  /** Simulated minutes after each case event that run at `minuteMs`. @default STANDING_MINUTES */
  readonly windowMinutes: number;
}

/**
 * The planned wall-clock offset (ms from the start of the replay) of each event: simulated time runs at
 * `minuteMs` per minute within `windowMinutes` after any case event and at `idleMinuteMs` elsewhere. Within a
 * window, gaps are kept exactly, so a retry 3 simulated minutes after its FAIL comes 3 × minuteMs later; and
 * two events at least `windowMinutes` apart in simulated time, the first of them a case event, are at least
 * `windowMinutes` × minuteMs apart on the wall clock, whatever lies between.
 */
export function wallOffsets(events: readonly MonthEvent[], startMs: number, pace: ReplayPace): Float64Array {
  const windowMs = pace.windowMinutes * MINUTE_MS;
  const active: { from: number; to: number }[] = [];
  for (const event of events) {
    if (event.caseId === undefined) continue;
    const last = active.at(-1);
    if (last !== undefined && event.sendMs <= last.to) last.to = Math.max(last.to, event.sendMs + windowMs);
    else active.push({ from: event.sendMs, to: event.sendMs + windowMs });
  }
  const offsets = new Float64Array(events.length);
  const activeRate = pace.minuteMs / MINUTE_MS;
  const idleRate = pace.idleMinuteMs / MINUTE_MS;
  let wall = 0;
  let sim = startMs;
  let next = 0;
  // Advances the mapped time from `sim` to `to`, interval by interval.
  const advance = (to: number) => {
    while (sim < to) {
      while (next < active.length && active[next]!.to <= sim) next++;
      const interval = active[next];
      if (interval === undefined || interval.from >= to) {
        wall += (to - sim) * idleRate;
        sim = to;
      } else if (interval.from > sim) {
        wall += (interval.from - sim) * idleRate;
        sim = interval.from;
      } else {
        const until = Math.min(interval.to, to);
        wall += (until - sim) * activeRate;
        sim = until;
      }
    }
  };
  events.forEach((event, index) => {
    advance(Math.max(sim, event.sendMs));
    offsets[index] = wall;
  });
  return offsets;
}
