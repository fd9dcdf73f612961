/**
 * A dataset's data quality and statistics, and a run's: the latest result of each assertion with its history
 * (the rule of src/model/assertions.ts and latestAssertions), and the row, null and distinct counts, sizes and
 * file counts runs reported (`dataQualityMetrics`, `inputStatistics`, `outputStatistics`), per run.
 */
import {
  assertionHistory,
  assertionStatuses,
  runAssertions,
  type AssertionRecord,
  type AssertionStatus,
} from '../store/queries/analysis.js';
import { qualityObservations, type QualityObservationRecord } from '../store/queries/quality.js';
import type { ReadModel } from '../store/read-model.js';
import { Closed, Nullable, StringEnum, Time, Type, type Static } from '../core/json-schema.js';
import { compareText, type AnalysisSource } from './context.js';

const entity = () => Closed({ namespace: Type.String(), name: Type.String() });

const assertionResultProperties = {
  success: Type.Boolean(),
  skipped: Type.Boolean({
    description:
      'The check did not run (dbt skipped it, or the run did not execute): the result says nothing of the data',
  }),
  severity: Nullable(Type.String()),
  expected: Nullable(Type.String()),
  actual: Nullable(Type.String()),
  runId: Type.String(),
  at: Time(),
};

/** One result of an assertion. */
export const AssertionResultSchema = Closed(assertionResultProperties);
export type AssertionResultJson = Static<typeof AssertionResultSchema>;

/**
 * Where an assertion stands: `failing` or `passing` by its latest result of a check that ran; `notEvaluated`
 * when no check of it ever ran; `retired` when a later run of the job that reported it no longer does (renamed
 * or deleted: see AssertionStatus in store/queries/analysis.ts), whatever its last result was.
 */
export const ASSERTION_STANDINGS = ['failing', 'passing', 'notEvaluated', 'retired'] as const;
export type AssertionStanding = (typeof ASSERTION_STANDINGS)[number];

const identity = () =>
  Type.String({
    description: 'What makes results the same assertion: `n:<name>` when named, else `t:<type>:<column>`',
  });

/** An assertion on a dataset: what identifies it, where it stands, its latest result and its results newest first. */
export const AssertionSchema = Closed({
  identity: identity(),
  assertion: Type.String({ description: "The assertion's type (not_null, unique, ...)" }),
  column: Type.String({ description: "'' for the whole dataset" }),
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
  status: StringEnum(ASSERTION_STANDINGS, {
    description:
      'failing or passing by the latest result of a check that ran; notEvaluated when none ran; retired when a ' +
      'later run of the job that reported it no longer does',
  }),
  latest: Closed(assertionResultProperties, {
    description: 'The latest result of a check that ran, else the latest result',
  }),
  lastReported: Closed(assertionResultProperties, { description: 'The latest result, skipped or not' }),
  retired: Nullable(Closed({ runId: Type.String(), at: Time() }), {
    description: 'The run that reported on the dataset without it, and when; null unless retired',
  }),
  history: Type.Array(AssertionResultSchema, { description: 'Newest first' }),
});
export type AssertionJson = Static<typeof AssertionSchema>;

const statisticsProperties = {
  rowCount: Nullable(Type.Number()),
  bytes: Nullable(Type.Number()),
  fileCount: Nullable(Type.Number()),
};

/** Counts a run reported about a dataset (null: not reported). */
export const StatisticsSchema = Closed(statisticsProperties);
export type StatisticsJson = Static<typeof StatisticsSchema>;

/** What `dataQualityMetrics` reported about one column. */
export const ColumnMetricsSchema = Closed({
  column: Type.String(),
  nullCount: Nullable(Type.Number()),
  distinctCount: Nullable(Type.Number()),
  count: Nullable(Type.Number()),
  sum: Nullable(Type.Number()),
  min: Nullable(Type.Number()),
  max: Nullable(Type.Number()),
});
export type ColumnMetricsJson = Static<typeof ColumnMetricsSchema>;

/** What one run reported about one dataset. */
export const QualityObservationSchema = Closed({
  runId: Type.String(),
  job: entity(),
  dataset: entity(),
  state: Type.String(),
  at: Time({ description: 'When the run ended, else started, else was first seen' }),
  output: Nullable(StatisticsSchema, { description: 'outputStatistics: what the run wrote' }),
  input: Nullable(StatisticsSchema, { description: 'inputStatistics: what the run read' }),
  metrics: Nullable(Closed({ ...statisticsProperties, columns: Type.Array(ColumnMetricsSchema) }), {
    description:
      'dataQualityMetrics: the dataset as the run saw it, with null and distinct counts per column',
  }),
  assertions: Type.Array(
    Closed({
      identity: identity(),
      assertion: Type.String(),
      column: Type.String(),
      name: Nullable(Type.String()),
      ...assertionResultProperties,
    }),
    { description: 'The assertions the run reported on the dataset' },
  ),
});
export type QualityObservationJson = Static<typeof QualityObservationSchema>;

/** A dataset's quality: its assertions failing first, and what its runs reported, newest first. */
export const DatasetQualitySchema = Closed({
  assertions: Type.Array(AssertionSchema),
  runs: Type.Array(QualityObservationSchema),
});
export type DatasetQualityJson = Static<typeof DatasetQualitySchema>;

/** What a run reported about its datasets. */
export const RunQualitySchema = Closed({
  runId: Type.String(),
  datasets: Type.Array(QualityObservationSchema),
});
export type RunQualityJson = Static<typeof RunQualitySchema>;

const number = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const resultOf = (a: AssertionRecord): AssertionResultJson => ({
  success: a.success,
  skipped: a.skipped,
  severity: a.severity,
  expected: a.expected,
  actual: a.actual,
  runId: a.runUuid,
  at: a.at.toISOString(),
});

const STANDING_ORDER: readonly AssertionStanding[] = ['failing', 'passing', 'notEvaluated', 'retired'];

/** Where an assertion stands ({@link AssertionStanding}). */
export function standingOf(status: AssertionStatus): AssertionStanding {
  if (status.retired !== null) return 'retired';
  if (status.evaluated === null) return 'notEvaluated';
  return status.evaluated.success ? 'passing' : 'failing';
}

/**
 * One entry per assertion of one dataset, from where each stands and its results (grouped by identity, newest
 * first, as assertionHistory returns them): failing ones first, then passing, never evaluated and retired, then
 * by assertion, column and name.
 */
export function assertionsJson(
  statuses: readonly AssertionStatus[],
  records: readonly AssertionRecord[],
): AssertionJson[] {
  const byIdentity = new Map<string, AssertionRecord[]>();
  for (const record of records) {
    const list = byIdentity.get(record.identity);
    if (list) list.push(record);
    else byIdentity.set(record.identity, [record]);
  }
  return statuses
    .map((status): AssertionJson => {
      const latest = status.evaluated ?? status.reported;
      return {
        identity: latest.identity,
        assertion: latest.assertion,
        column: latest.column,
        name: latest.name,
        description: latest.description,
        status: standingOf(status),
        latest: resultOf(latest),
        lastReported: resultOf(status.reported),
        retired: status.retired && { runId: status.retired.runUuid, at: status.retired.at.toISOString() },
        history: (byIdentity.get(latest.identity) ?? []).map(resultOf),
      };
    })
    .sort(
      (a, b) =>
        STANDING_ORDER.indexOf(a.status) - STANDING_ORDER.indexOf(b.status) ||
        compareText(a.assertion, b.assertion) ||
        compareText(a.column, b.column) ||
        compareText(a.name ?? '', b.name ?? ''),
    );
}

/** The counts of an `outputStatistics`, `inputStatistics` or `dataQualityMetrics` facet (size or bytes). */
export function statisticsOf(facet: unknown): StatisticsJson | null {
  if (!isObject(facet)) return null;
  return {
    rowCount: number(facet.rowCount),
    bytes: number(facet.size) ?? number(facet.bytes),
    fileCount: number(facet.fileCount),
  };
}

function metricsOf(facet: Record<string, unknown> | null): QualityObservationJson['metrics'] {
  const counts = statisticsOf(facet);
  if (!counts || !isObject(facet)) return null;
  const columns = isObject(facet.columnMetrics) ? facet.columnMetrics : {};
  return {
    ...counts,
    columns: Object.entries(columns)
      .filter((entry): entry is [string, Record<string, unknown>] => isObject(entry[1]))
      .map(([column, m]) => ({
        column,
        nullCount: number(m.nullCount),
        distinctCount: number(m.distinctCount),
        count: number(m.count),
        sum: number(m.sum),
        min: number(m.min),
        max: number(m.max),
      }))
      .sort((a, b) => compareText(a.column, b.column)),
  };
}

function nameOf(state: ReadModel, kind: 'job' | 'dataset', id: number) {
  const row = kind === 'job' ? state.jobsById.get(id) : state.datasetsById.get(id);
  return {
    namespace: row ? (state.namespacesById.get(row.namespaceId)?.name ?? '') : '',
    name: row?.name ?? '',
  };
}

async function observationsJson(
  source: AnalysisSource,
  observations: readonly QualityObservationRecord[],
): Promise<QualityObservationJson[]> {
  const assertions = await runAssertions(source.db, [...new Set(observations.map((o) => o.runUuid))]);
  const assertionsOf = new Map<string, AssertionRecord[]>();
  for (const a of assertions) {
    const key = `${a.runUuid}:${a.datasetId}`;
    assertionsOf.set(key, [...(assertionsOf.get(key) ?? []), a]);
  }
  return observations.map((o) => ({
    runId: o.runUuid,
    job: nameOf(source.state, 'job', o.jobId),
    dataset: nameOf(source.state, 'dataset', o.datasetId),
    state: o.state,
    at: o.at.toISOString(),
    output: statisticsOf(o.outputStatistics),
    input: statisticsOf(o.inputStatistics),
    metrics: metricsOf(o.metrics),
    assertions: (assertionsOf.get(`${o.runUuid}:${o.datasetId}`) ?? []).map((a) => ({
      identity: a.identity,
      assertion: a.assertion,
      column: a.column,
      name: a.name,
      ...resultOf(a),
    })),
  }));
}

/** Options of {@link datasetQuality}. */
export interface DatasetQualityOptions {
  /** How many results of each assertion to return, newest first. */
  readonly history: number;
  /** How many of the newest runs that reported statistics or metrics to return. */
  readonly runs: number;
}

/**
 * A dataset's quality now: where each assertion stands, its latest result from any run and its history, and
 * the statistics and metrics of its newest runs (four queries).
 */
export async function datasetQuality(
  source: AnalysisSource,
  datasetId: number,
  options: DatasetQualityOptions,
): Promise<DatasetQualityJson> {
  const [statuses, history, observations] = await Promise.all([
    assertionStatuses(source.db, [datasetId], null),
    assertionHistory(source.db, datasetId, null, options.history),
    qualityObservations(source.db, { datasetId }, options.runs),
  ]);
  return {
    assertions: assertionsJson(statuses, history),
    runs: await observationsJson(source, observations),
  };
}

/** What a run reported about its datasets: statistics, metrics and assertions (two queries). */
export async function runQuality(source: AnalysisSource, runUuid: string): Promise<RunQualityJson> {
  const observations = await qualityObservations(source.db, { runUuid }, 1);
  return { runId: runUuid, datasets: await observationsJson(source, observations) };
}
