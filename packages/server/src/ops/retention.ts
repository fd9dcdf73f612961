import type { Db } from '../store/db.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import { retentionPass, type RetentionResult } from '../store/retention.js';
import { recordAudit } from '../store/queries/audit.js';
import type { Metrics } from './metrics.js';

const DAY_MS = 86_400_000;

/** The longest wait before the first pass after start. */
const FIRST_PASS_MS = 60_000;

/** Options of {@link RetentionKeeper}. */
export interface RetentionKeeperOptions {
  /** The window: what is older than this many days goes. */
  readonly days: number;
  /** Time between passes. */
  readonly intervalMs: number;
  readonly log: {
    info(object: object, message: string): void;
    error(object: object, message: string): void;
  };
}

/**
 * Runs retention passes (store/retention.ts) in the background on the server that writes: a follower skips its
 * turn (the writer's passes delete for every replica of the store). Each pass is logged, recorded in the audit
 * log (actor `system:retention`) and counted in /metrics.
 */
export class RetentionKeeper {
  readonly #db: Db;
  readonly #pipeline: IngestPipeline;
  readonly #options: RetentionKeeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<RetentionResult | undefined> | undefined;
  #closed = false;
  readonly #deleted;
  readonly #passes;
  #last: RetentionResult | undefined;
  #lastAt: number | undefined;

  constructor(db: Db, pipeline: IngestPipeline, metrics: Metrics, options: RetentionKeeperOptions) {
    this.#db = db;
    this.#pipeline = pipeline;
    this.#options = options;
    this.#deleted = metrics.counter({
      name: 'headwater_retention_deleted_rows_total',
      help: 'Rows deleted by the retention window, by table',
      labelNames: ['table'],
    });
    this.#passes = metrics.counter({
      name: 'headwater_retention_passes_total',
      help: 'Retention passes, by outcome (completed, failed)',
      labelNames: ['outcome'],
    });
    const gauge = (name: string, help: string, value: () => number) =>
      metrics.gauge({
        name,
        help,
        collect() {
          this.set(value());
        },
      });
    gauge(
      'headwater_retention_last_run_timestamp_seconds',
      'When the last retention pass finished (0 before the first)',
      () => (this.#lastAt ?? 0) / 1000,
    );
    gauge(
      'headwater_retention_last_run_duration_seconds',
      'How long the last retention pass took',
      () => (this.#last?.durationMs ?? 0) / 1000,
    );
    gauge(
      'headwater_retention_cutoff_timestamp_seconds',
      'The cutoff of the last retention pass: older history is deleted',
      () => (this.#last?.cutoff.getTime() ?? 0) / 1000,
    );
  }

  /** Schedules the passes: the first within a minute, then one per interval. */
  start(): void {
    const schedule = (ms: number) => {
      if (this.#closed) return;
      this.#timer = setTimeout(() => {
        void this.runOnce().finally(() => schedule(this.#options.intervalMs));
      }, ms);
      this.#timer.unref();
    };
    schedule(Math.min(FIRST_PASS_MS, this.#options.intervalMs));
  }

  /**
   * Runs one pass now (or waits for the one under way), with the cutoff `days` before `now`. Resolves undefined
   * when this server is not the writer or the pass failed (which is logged).
   */
  runOnce(now = Date.now()): Promise<RetentionResult | undefined> {
    this.#running ??= this.#pass(now).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(now: number): Promise<RetentionResult | undefined> {
    if (this.#closed || this.#db.epoch === undefined) return undefined;
    const cutoff = new Date(now - this.#options.days * DAY_MS);
    try {
      const result = await retentionPass(
        this.#db,
        cutoff,
        (fn, apply) => this.#pipeline.maintain(fn, apply),
        { stopped: () => this.#closed },
      );
      // The audit entry first, then the log line, then the series: whoever sees the series sees the rest.
      await recordAudit(this.#db, {
        at: new Date(),
        actor: 'system:retention',
        action: 'retention.pass',
        target: `before ${cutoff.toISOString()}`,
        status: 0,
        detail: JSON.stringify({ deleted: result.deleted, chunks: result.chunks, ms: result.durationMs }),
      });
      const total = Object.values(result.deleted).reduce((sum, rows) => sum + rows, 0);
      this.#options.log.info(
        {
          retention: {
            cutoff: cutoff.toISOString(),
            deleted: result.deleted,
            chunks: result.chunks,
            ms: result.durationMs,
          },
        },
        `retention: deleted ${total} rows older than ${cutoff.toISOString()} in ${result.durationMs} ms`,
      );
      this.#last = result;
      this.#lastAt = Date.now();
      for (const [table, rows] of Object.entries(result.deleted)) this.#deleted.inc({ table }, rows);
      this.#passes.inc({ outcome: 'completed' });
      return result;
    } catch (error) {
      this.#passes.inc({ outcome: 'failed' });
      this.#options.log.error(
        { err: error },
        `retention: the pass for ${cutoff.toISOString()} failed; the next one tries again`,
      );
      return undefined;
    }
  }

  /** Stops scheduling and waits for a pass under way (it stops at its next chunk). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
