import type { Run, RunState } from './types.js';

/** What one run reported about one dataset: its facets as an input or an output of the run. */
export interface Observation {
  readonly runId: string;
  /** The job's name, for labels. */
  readonly job: string;
  readonly state: RunState;
  /** When the run ended (else started, else was created): the time the facts are charted at. */
  readonly at: string;
  readonly role: 'input' | 'output';
  readonly facets: Record<string, unknown>;
}

/** A value at a time, for charts. */
export interface Point {
  readonly at: string;
  readonly value: number;
  readonly runId: string;
}

/** One assertion (by name and column) across runs, newest first. */
export interface AssertionHistory {
  readonly assertion: string;
  readonly column: string;
  readonly results: readonly {
    readonly at: string;
    readonly runId: string;
    readonly success: boolean;
    readonly severity: string | null;
    readonly expected: string | null;
    readonly actual: string | null;
  }[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null =>
  value === undefined || value === null ? null : typeof value === 'string' ? value : JSON.stringify(value);
const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const byTime = (a: { at: string }, b: { at: string }) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0);

/**
 * Every report about `namespace`/`name` in `runs` (runs of the jobs that read or write it, as the run API returns
 * them with their input and output dataset versions), oldest first.
 */
export function observationsOf(namespace: string, name: string, runs: readonly Run[]): Observation[] {
  const found: Observation[] = [];
  for (const run of runs) {
    const at = run.endedAt ?? run.startedAt ?? run.createdAt;
    const job = run.jobVersion?.name ?? '';
    for (const [role, refs] of [
      ['input', run.inputDatasetVersions ?? []],
      ['output', run.outputDatasetVersions ?? []],
    ] as const) {
      for (const ref of refs) {
        const id = ref.datasetVersionId;
        if (id.namespace === namespace && id.name === name)
          found.push({ runId: run.id, job, state: run.state, at, role, facets: ref.facets });
      }
    }
  }
  return found.sort(byTime);
}

/** The `dataQualityAssertions` facets of the observations, grouped by assertion and column, newest first. */
export function assertionHistories(observations: readonly Observation[]): AssertionHistory[] {
  const histories = new Map<
    string,
    { assertion: string; column: string; results: AssertionHistory['results'][number][] }
  >();
  for (const o of observations) {
    const facet = o.facets.dataQualityAssertions;
    const assertions = isObject(facet) && Array.isArray(facet.assertions) ? facet.assertions : [];
    for (const a of assertions) {
      if (!isObject(a) || typeof a.assertion !== 'string' || typeof a.success !== 'boolean') continue;
      const column = typeof a.column === 'string' ? a.column : '';
      const key = `${a.assertion}\u0000${column}`;
      const history = histories.get(key) ?? { assertion: a.assertion, column, results: [] };
      history.results.push({
        at: o.at,
        runId: o.runId,
        success: a.success,
        severity: text(a.severity),
        expected: text(a.expected),
        actual: text(a.actual),
      });
      histories.set(key, history);
    }
  }
  return [...histories.values()]
    .map((h) => ({ ...h, results: [...h.results].sort(byTime).reverse() }))
    .sort(
      (a, b) =>
        Number(a.results[0]!.success) - Number(b.results[0]!.success) ||
        a.assertion.localeCompare(b.assertion) ||
        a.column.localeCompare(b.column),
    );
}

/** Row counts, bytes and null counts per column over the observations, oldest first. */
export interface DatasetStatistics {
  /** What the writing runs reported writing (`outputStatistics`): for an appending job, the rows appended. */
  readonly rowsWritten: Point[];
  /** What the reading runs reported seeing (`inputStatistics`, `dataQualityMetrics`): the whole dataset. */
  readonly rowsRead: Point[];
  readonly bytesWritten: Point[];
  readonly bytesRead: Point[];
  readonly nullCount: ReadonlyMap<string, Point[]>;
}

/**
 * The statistics facets of the observations, kept apart by who reported them: a writer's `outputStatistics`
 * (rowCount, size) counts what it wrote, a reader's `inputStatistics` or `dataQualityMetrics` (rowCount, bytes,
 * columnMetrics.*.nullCount) what it read, and the two differ for an appended table.
 */
export function statisticsOf(observations: readonly Observation[]): DatasetStatistics {
  const stats = {
    rowsWritten: [] as Point[],
    rowsRead: [] as Point[],
    bytesWritten: [] as Point[],
    bytesRead: [] as Point[],
    nullCount: new Map<string, Point[]>(),
  };
  for (const o of observations) {
    const point = (value: number | undefined) =>
      value === undefined ? undefined : { at: o.at, value, runId: o.runId };
    const push = (list: Point[], value: number | undefined) => {
      const p = point(value);
      if (p) list.push(p);
    };
    if (o.role === 'output') {
      const facet = isObject(o.facets.outputStatistics) ? o.facets.outputStatistics : {};
      push(stats.rowsWritten, number(facet.rowCount));
      push(stats.bytesWritten, number(facet.size));
      continue;
    }
    const sources = ['inputStatistics', 'dataQualityMetrics'].map((key) => o.facets[key]).filter(isObject);
    push(
      stats.rowsRead,
      sources.map((f) => number(f.rowCount)).find((n) => n !== undefined),
    );
    push(
      stats.bytesRead,
      sources.map((f) => number(f.size) ?? number(f.bytes)).find((n) => n !== undefined),
    );
    const metrics = o.facets.dataQualityMetrics;
    const columns = isObject(metrics) && isObject(metrics.columnMetrics) ? metrics.columnMetrics : {};
    for (const [column, m] of Object.entries(columns)) {
      const p = point(isObject(m) ? number(m.nullCount) : undefined);
      if (p) (stats.nullCount.get(column) ?? stats.nullCount.set(column, []).get(column)!).push(p);
    }
  }
  return stats;
}
