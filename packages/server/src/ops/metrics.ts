import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';
import type { Db } from '../store/db.js';
import { timedDb } from '../store/timed-db.js';

/** Most distinct producers given their own label value; the rest count as 'other' (bounded cardinality). */
const MAX_PRODUCERS = 200;

const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The server's Prometheus registry and the series the core reports. Other parts (a stream consumer, replicas)
 * add their own through {@link Metrics.counter}, {@link Metrics.gauge} and {@link Metrics.histogram}, so that
 * every series is served by the one `/metrics` endpoint and named under the `headwater_` prefix.
 */
export class Metrics {
  readonly registry = new Registry();
  /** headwater_ingest_events_total{outcome, producer}: events by what became of them (front-door outcomes). */
  readonly ingestEvents: Counter<'outcome' | 'producer'>;
  /** headwater_http_request_duration_seconds{method, route, status_code} */
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  /** headwater_ingest_commit_group_events: events per group commit. */
  readonly commitGroupEvents: Histogram;
  /** headwater_ingest_commit_duration_seconds: how long each group commit took to write. */
  readonly commitDuration: Histogram;
  /** headwater_store_query_duration_seconds{operation}: statements and transactions. */
  readonly storeDuration: Histogram<'operation'>;
  /** headwater_store_errors_total{operation} */
  readonly storeErrors: Counter<'operation'>;
  /** headwater_auth_failures_total{reason} */
  readonly authFailures: Counter<'reason'>;
  /** headwater_rate_limited_requests_total{by}: requests answered 429, by key or by address. */
  readonly rateLimited: Counter<'by'>;
  readonly #producers = new Set<string>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.ingestEvents = this.counter({
      name: 'headwater_ingest_events_total',
      help: 'OpenLineage events received, by outcome (stored, duplicate, invalid, failed, unavailable, forbidden) and producer',
      labelNames: ['outcome', 'producer'],
    });
    this.httpDuration = this.histogram({
      name: 'headwater_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: SECONDS_BUCKETS,
    });
    this.commitGroupEvents = this.histogram({
      name: 'headwater_ingest_commit_group_events',
      help: 'Events written per group commit',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
    });
    this.commitDuration = this.histogram({
      name: 'headwater_ingest_commit_duration_seconds',
      help: 'Time to write one group commit to the store',
      buckets: SECONDS_BUCKETS,
    });
    this.storeDuration = this.histogram({
      name: 'headwater_store_query_duration_seconds',
      help: 'Store latency per statement or transaction',
      labelNames: ['operation'],
      buckets: SECONDS_BUCKETS,
    });
    this.storeErrors = this.counter({
      name: 'headwater_store_errors_total',
      help: 'Statements or transactions the store failed',
      labelNames: ['operation'],
    });
    this.authFailures = this.counter({
      name: 'headwater_auth_failures_total',
      help: 'Requests refused for missing, invalid or insufficient credentials, by reason',
      labelNames: ['reason'],
    });
    this.rateLimited = this.counter({
      name: 'headwater_rate_limited_requests_total',
      help: 'Requests answered 429 Too Many Requests, by what was limited (key or address)',
      labelNames: ['by'],
    });
  }

  /** Registers a counter in this registry. */
  counter<T extends string>(config: Omit<CounterConfiguration<T>, 'registers'>): Counter<T> {
    return new Counter({ ...config, registers: [this.registry] });
  }

  /** Registers a gauge in this registry (give `collect` to read the value at scrape time). */
  gauge<T extends string>(config: Omit<GaugeConfiguration<T>, 'registers'>): Gauge<T> {
    return new Gauge({ ...config, registers: [this.registry] });
  }

  /** Registers a histogram in this registry. */
  histogram<T extends string>(config: Omit<HistogramConfiguration<T>, 'registers'>): Histogram<T> {
    return new Histogram({ ...config, registers: [this.registry] });
  }

  /** Counts the outcomes of events the front door handled. */
  countOutcomes(values: readonly unknown[], outcomes: readonly { readonly status: string }[]): void {
    outcomes.forEach((outcome, index) => {
      this.ingestEvents.inc({ outcome: outcome.status, producer: this.#producer(values[index]) });
    });
  }

  #producer(value: unknown): string {
    const producer =
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { producer?: unknown }).producer === 'string'
        ? (value as { producer: string }).producer.slice(0, 200)
        : 'unknown';
    if (this.#producers.has(producer)) return producer;
    if (this.#producers.size >= MAX_PRODUCERS) return 'other';
    this.#producers.add(producer);
    return producer;
  }

  /** The exposition text and its content type. */
  async expose(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

/**
 * `db` with every statement and transaction timed into `metrics` (store latency and errors). Everything else
 * the store offers passes through unchanged.
 */
export function instrumentDb<T extends Db>(db: T, metrics: Metrics): T {
  return timedDb(db, async (operation, run) => {
    const end = metrics.storeDuration.startTimer({ operation });
    try {
      return await run();
    } catch (error) {
      metrics.storeErrors.inc({ operation });
      throw error;
    } finally {
      end();
    }
  });
}
