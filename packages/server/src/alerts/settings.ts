/**
 * Which alerts configuration is in force, across restarts and replicas. It is stored in the database as written
 * (its `${ENV_VAR}` references unresolved, so secrets can stay in each server's environment) and resolved by the
 * writer, the one server that acts on it:
 * - a server that writes from the start with `--alerts-config FILE` puts the file in force;
 * - `PUT /api/v1/alerts/config` (`headwater alerts apply FILE`) puts another in force at once, until a server
 *   starts with a file again;
 * - a server that becomes the writer later (a takeover) reads what is stored, or puts its own file in force when
 *   nothing is.
 */
import { HeadwaterError } from '../core/errors.js';
import type { Db } from '../store/db.js';
import { fencedTransaction, storeAlertsConfig, storedAlertsConfig } from '../store/queries/incidents.js';
import {
  checkAlertsConfig,
  formatAlertsConfigProblem,
  redactAlertsDocument,
  type AlertsConfig,
  type AlertsDocument,
} from './config.js';

/** What the API shows of the configuration in force. */
export interface AlertsConfigView {
  /** The document as written, secrets redacted (`${ENV_VAR}` references shown); null when none is in force. */
  readonly document: unknown;
  readonly updatedAt: Date | null;
  readonly updatedBy: string | null;
}

/** Options of {@link AlertsSettings}. */
export interface AlertsSettingsOptions {
  readonly db: Db;
  readonly epoch: () => number | undefined;
  /** The file of `--alerts-config`, read at start. */
  readonly file: AlertsDocument | undefined;
  /** Told of each configuration put in force (the engine and the outbox take it). */
  readonly onConfig: (config: AlertsConfig | undefined) => void;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Keeps the configuration in force; see the module comment. */
export class AlertsSettings {
  readonly #options: AlertsSettingsOptions;

  constructor(options: AlertsSettingsOptions) {
    this.#options = options;
  }

  /** On start as the writer: the file, if any, is put in force; else what is stored. */
  async startWriting(): Promise<void> {
    const { file } = this.#options;
    if (file !== undefined) await this.#store(file.document, 'system:alerts-config-file', file.config);
    else await this.takeOver();
  }

  /** On becoming the writer: what is stored is put in force, or this server's file when nothing is. */
  async takeOver(): Promise<void> {
    const stored = await storedAlertsConfig(this.#options.db);
    if (stored === undefined) {
      if (this.#options.file !== undefined)
        await this.#store(
          this.#options.file.document,
          'system:alerts-config-file',
          this.#options.file.config,
        );
      else this.#options.onConfig(undefined);
      return;
    }
    const check = checkAlertsConfig(stored.document, { env: this.#options.env ?? process.env });
    if (!check.ok)
      // Stored once valid, it can only fail on this server's environment: a variable it references is unset.
      throw new HeadwaterError(
        'INVALID_CONFIG',
        `The alerts configuration in force (set by ${stored.updatedBy}) cannot be resolved on this server: ` +
          check.problems.map((problem) => formatAlertsConfigProblem(problem)).join('; '),
      );
    this.#options.onConfig(check.config);
  }

  /**
   * Checks a configuration document and puts it in force.
   * @throws HeadwaterError BAD_REQUEST with every problem, STORE_UNAVAILABLE on a server that does not write.
   */
  async apply(document: unknown, actor: string): Promise<AlertsConfig> {
    const check = checkAlertsConfig(document, { env: this.#options.env ?? process.env });
    if (!check.ok) {
      const details = check.problems.map((problem) => formatAlertsConfigProblem(problem));
      throw new HeadwaterError(
        'BAD_REQUEST',
        `The alerts configuration has ${details.length === 1 ? 'a problem' : `${details.length} problems`} ` +
          '(listed in errors); nothing was changed.',
        { details },
      );
    }
    await this.#store(document, actor, check.config);
    return check.config;
  }

  /** Turns alerts off on this server (its configuration could not be resolved). */
  off(): void {
    this.#options.onConfig(undefined);
  }

  /** The configuration in force, redacted. */
  async view(): Promise<AlertsConfigView> {
    const stored = await storedAlertsConfig(this.#options.db);
    return stored === undefined
      ? { document: null, updatedAt: null, updatedBy: null }
      : {
          document: redactAlertsDocument(stored.document),
          updatedAt: stored.updatedAt,
          updatedBy: stored.updatedBy,
        };
  }

  async #store(document: unknown, actor: string, config: AlertsConfig): Promise<void> {
    const epoch = this.#options.epoch();
    if (epoch === undefined)
      throw new HeadwaterError('STORE_UNAVAILABLE', 'This server does not write now; try again shortly.', {
        retryAfterSeconds: 1,
      });
    await fencedTransaction(this.#options.db, epoch, (tx) =>
      storeAlertsConfig(tx, document, new Date(), actor),
    );
    this.#options.onConfig(config);
  }
}
