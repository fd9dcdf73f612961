/**
 * The outbox worker: sends the deliveries incident transitions wrote (store/queries/incidents.ts), on the writer
 * only. Each round takes the due rows, fenced by the writer's epoch, and pushes their next attempt a lease ahead
 * before sending, so that a writer killed mid-send leaves them due again for the next writer: at least once, with
 * the same `webhook-id` and Message-ID every time (the message is rendered when the transition is written).
 * Between replicas a delivery is sent by one writer at a time; a receiver may see it again only after a writer
 * died between sending it and recording that it was sent.
 *
 * A 410 disables the channel (as configured then), gives up its other unsent deliveries and is audited; a refusal
 * (another 4xx) gives up that delivery; a retry keeps the row with its back-off.
 *
 * Memory: the rows of one round (`batch`).
 */
import type { Db } from '../store/db.js';
import { recordAudit } from '../store/queries/audit.js';
import {
  claimDueDeliveries,
  disableChannel,
  fencedTransaction,
  giveUpChannel,
  nextDeliveryDue,
  recordDelivery,
  type ClaimedDelivery,
} from '../store/queries/incidents.js';
import { NO_ALERTS, type AlertsConfig } from './config.js';
import { deliverWithRetry, type DeliveryPolicy } from './deliver.js';
import {
  createChannelSenders,
  type ChannelSenders,
  type ChannelSendersOptions,
  type OutboundMessage,
} from './delivery-plan.js';
import type { AlertsLog } from './incidents.js';
import { channelFingerprint } from './incidents.js';

/** Options of {@link OutboxWorker}. */
export interface OutboxWorkerOptions {
  readonly db: Db;
  readonly config: AlertsConfig | undefined;
  readonly epoch: () => number | undefined;
  readonly log: AlertsLog;
  /** The retries of one round; later ones wait in the outbox. @default maxAttempts 5, maxWaitMs 30000 */
  readonly policy?: DeliveryPolicy;
  readonly senders?: ChannelSendersOptions;
  /** How long a taken row is left to its sender before another round may take it. @default 120000 */
  readonly leaseMs?: number;
  /** Rows per round. @default 20 */
  readonly batch?: number;
  /** How often the outbox is looked at when nothing wakes the worker (another writer's rows, retries). @default 5000 */
  readonly pollMs?: number;
}

/** Sends the outbox; see the module comment. */
export class OutboxWorker {
  readonly #options: OutboxWorkerOptions;
  #senders: ChannelSenders;
  #config: AlertsConfig;
  readonly #abort = new AbortController();
  #wake: (() => void) | undefined;
  #woken = false;
  #loop: Promise<void> | undefined;

  constructor(options: OutboxWorkerOptions) {
    this.#options = options;
    this.#config = options.config ?? NO_ALERTS;
    this.#senders = createChannelSenders(this.#config, options.senders);
  }

  /**
   * Sends through another configuration's channels from now on (a delivery to a channel no longer configured is
   * given up). Attempts under way finish with the old one.
   */
  configure(config: AlertsConfig | undefined): void {
    const old = this.#senders;
    this.#config = config ?? NO_ALERTS;
    this.#senders = createChannelSenders(this.#config, this.#options.senders);
    // Its e-mail transports close once the attempts under way have had their time.
    setTimeout(() => old.close(), 60_000).unref();
    this.wake();
  }

  /** Starts sending. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Looks at the outbox now (a transition was written). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Stops: the round under way is cancelled (its rows are sent again by the next writer or start). */
  async close(): Promise<void> {
    this.#abort.abort();
    this.#wake?.();
    await this.#loop;
    this.#senders.close();
  }

  async #run(): Promise<void> {
    const pollMs = this.#options.pollMs ?? 5000;
    while (!this.#abort.signal.aborted) {
      this.#woken = false;
      let waitMs = pollMs;
      const epoch = this.#options.epoch();
      // Alerts off: nothing is written to the outbox, and nothing is looked for in it.
      if (epoch !== undefined && this.#config !== NO_ALERTS) {
        try {
          const sent = await this.#round(epoch);
          if (sent > 0) continue;
          const due = await nextDeliveryDue(this.#options.db);
          if (due !== undefined) waitMs = Math.max(0, Math.min(pollMs, due.getTime() - Date.now()));
        } catch (error) {
          if (!this.#abort.signal.aborted)
            this.#options.log.warn({ err: error }, 'the alerts outbox could not be sent; trying again');
        }
      }
      if (this.#woken || this.#abort.signal.aborted) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        timer.unref();
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  /** One round: takes the due rows and sends them side by side; resolves with how many were taken. */
  async #round(epoch: number): Promise<number> {
    const { db } = this.#options;
    const rows = await claimDueDeliveries(
      db,
      epoch,
      new Date(),
      this.#options.batch ?? 20,
      this.#options.leaseMs ?? 120_000,
    );
    await Promise.all(rows.map((row) => this.#send(epoch, row)));
    return rows.length;
  }

  async #send(epoch: number, row: ClaimedDelivery): Promise<void> {
    const { db, log } = this.#options;
    const config = this.#config;
    const senders = this.#senders;
    const message = row.message as OutboundMessage;
    const report = await deliverWithRetry(
      (_attempt, options) => senders.send(message, options),
      { maxAttempts: 5, maxWaitMs: 30_000, ...this.#options.policy },
      {
        signal: this.#abort.signal,
        previousAttempts: row.attempts,
      },
    );
    const result = report.result;
    const status = result.statusCode ?? null;
    const attempts = report.totalAttempts;
    if (result.status === 'delivered') {
      await recordDelivery(db, epoch, row.key, { kind: 'sent', at: new Date(), attempts, status });
      return;
    }
    const error = result.error.message;
    if (result.status === 'retry') {
      await recordDelivery(db, epoch, row.key, {
        kind: 'retry',
        attempts,
        nextAttemptAt: new Date(report.nextAttemptAtMs ?? Date.now() + 60_000),
        status,
        error,
      });
      log.warn({ delivery: row.key, attempts, err: result.error }, 'an alert delivery will be tried again');
      return;
    }
    await recordDelivery(db, epoch, row.key, { kind: 'given-up', at: new Date(), attempts, status, error });
    if (result.status === 'gone') {
      const channel = config.channels[row.channel];
      const at = new Date();
      const reason = `the receiver answered 410 Gone: ${error}`;
      await fencedTransaction(db, epoch, async (tx) => {
        if (channel !== undefined)
          await disableChannel(tx, row.channel, channelFingerprint(channel), at, reason);
        await giveUpChannel(tx, row.channel, at, `the channel ${row.channel} is disabled: ${reason}`);
        await recordAudit(tx, {
          at,
          actor: 'system:alerts',
          action: 'alerts.channel.disable',
          target: row.channel,
          status: 410,
          detail: reason,
        });
      });
      log.error({ channel: row.channel, err: result.error }, 'an alert channel answered 410 and is disabled');
      return;
    }
    log.error({ delivery: row.key, err: result.error }, 'an alert delivery was refused and is given up');
  }
}
