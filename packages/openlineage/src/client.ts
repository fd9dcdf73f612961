import type { ConfigSources, ConfigTree, ResolvedConfig, TransportFromConfigOptions } from './config.js';
import { OpenLineageConfigError, createTransportFromConfig, resolveConfig } from './config.js';
import { environmentVariablesRunFacet, tagsJobFacet, tagsRunFacet } from './generated/facet-builders.js';
import type { OpenLineageEvent, RunEvent, TagsJobFacetFields } from './generated/model.js';
import type { FacetHygiene, FacetHygieneOptions } from './hygiene.js';
import { createFacetHygiene, parseHygieneRules } from './hygiene.js';
import { DEFAULT_PRODUCER } from './producer.js';
import type { SpoolOptions } from './spool.js';
import { createSpoolWriter } from './spool.js';
import { createConsoleTransport } from './transports/console-transport.js';
import { createHttpTransport } from './transports/http-transport.js';
import { createNoopTransport } from './transports/noop-transport.js';
import { withRetry } from './transports/retry.js';
import type { Transport } from './transports/transport.js';
import { safeEmit, toError, withTimeout } from './transports/transport.js';

/** Why events were not delivered. */
export type UndeliveredReason =
  /** The transport reported a failure, or still retryable after its retries. */
  | 'transport'
  /** Too many emits were in flight (`maxPendingEmits`). */
  | 'overflow'
  /** `emit` after `close()`. */
  | 'closed'
  /** Hygiene or the event itself failed (e.g. not serialisable). */
  | 'invalid';

/** What the `onError` hook receives besides the error. */
export interface EmitErrorContext {
  readonly reason: UndeliveredReason;
  /** The events concerned. */
  readonly events: readonly OpenLineageEvent[];
  /** Where they went: spooled to disk or dropped. */
  readonly outcome: 'spooled' | 'dropped';
}

/** Counters since the client was created. */
export interface ClientStats {
  /** Calls to `emit`. */
  readonly emitted: number;
  /** Events the transport accepted (for async transports: queued). */
  readonly accepted: number;
  /** Events skipped by `filters`. */
  readonly filtered: number;
  /** Events not delivered (the sum of `spooled` and `dropped`). */
  readonly undelivered: number;
  /** Undelivered events written to the spool file. */
  readonly spooled: number;
  /** Undelivered events lost. */
  readonly dropped: number;
  /** `emit` calls that returned at `emitTimeoutMs` while delivery went on in the background. */
  readonly timedOut: number;
  /** Facets removed by hygiene (disabled or too large). */
  readonly facetsRemoved: number;
}

/** Options of {@link createClient}. */
export interface ClientOptions extends Pick<
  TransportFromConfigOptions,
  'transportFactories' | 'transformers' | 'retryDefaults'
> {
  /** A ready transport; skips the transport configuration (but not `OPENLINEAGE_DISABLED`). */
  readonly transport?: Transport;
  /** Explicit configuration, as in `openlineage.yml`; it wins over the file and the environment. */
  readonly config?: ConfigTree;
  /** Where configuration is read from (environment, folders); the real process by default. */
  readonly sources?: ConfigSources;
  /**
   * The `producer` the builders of this client ({@link track}) write.
   * @default DEFAULT_PRODUCER
   */
  readonly producer?: string;
  /**
   * Longest time `emit()` waits for the transport; after that it returns and delivery goes on in the
   * background (still bounded by `maxPendingEmits`).
   * @default 5000
   */
  readonly emitTimeoutMs?: number;
  /**
   * Most deliveries in flight at once; further events are treated as undelivered (`overflow`). Bounds memory
   * when the backend is slow and the host emits without waiting.
   * @default 1000
   */
  readonly maxPendingEmits?: number;
  /**
   * Facet hygiene before sending, or `false` to send events untouched.
   * @default { maxSqlLength: 4000 } plus the default redaction of secrets
   */
  readonly hygiene?: FacetHygieneOptions | false;
  /** Keep undelivered events in a file instead of dropping them. */
  readonly spool?: SpoolOptions;
  /**
   * Called for every batch of undelivered events. Never throws into the client; a throw is ignored.
   * @default a console warning, at most once a minute
   */
  readonly onError?: (error: Error, context: EmitErrorContext) => void;
  /**
   * Receives warnings about the configuration (console fallback, ignored keys).
   * @default console.warn
   */
  readonly onWarning?: (message: string) => void;
}

/** An OpenLineage client: sends events through the configured transport without ever hurting the host. */
export interface OpenLineageClient {
  /** The transport in use. */
  readonly transport: Transport;
  /** The `producer` for events built by helpers of this client. */
  readonly producer: string;
  /** The configuration the client resolved. */
  readonly config: ResolvedConfig;
  /**
   * Sends an event. Never throws or rejects, and resolves within `emitTimeoutMs`. Events of one run are
   * sent in the order `emit` was called, even when earlier ones are still retrying.
   */
  emit(event: OpenLineageEvent): Promise<void>;
  /** Counters since creation. */
  stats(): ClientStats;
  /**
   * Waits until every emitted event is delivered or given up, and the transport's buffers are flushed.
   * Resolves `true` when that happened within `timeoutMs`.
   * @param timeoutMs - @default 10000
   */
  flush(timeoutMs?: number): Promise<boolean>;
  /**
   * Flushes, then closes the transport. Later emits are undelivered (`closed`). Resolves `true` when all of
   * it finished within `timeoutMs`; either way the client holds no timer or socket that keeps the process alive.
   * @param timeoutMs - @default 10000
   */
  close(timeoutMs?: number): Promise<boolean>;
}

const WARN_INTERVAL_MS = 60_000;

/**
 * Creates a client, resolving its transport like the Python client: `OPENLINEAGE_DISABLED`, an explicit
 * transport, a `transport` config (explicit, YAML file, `OPENLINEAGE__` variables), `OPENLINEAGE_URL`, and
 * finally the console.
 *
 * @throws OpenLineageConfigError once, here, when the configuration is bad.
 * @example
 * ```ts
 * const client = createClient({ config: { transport: { type: 'http', url: 'http://localhost:5000' } } });
 * await client.emit(runEvent({ eventType: 'START', job: { namespace: 'etl', name: 'load' } }));
 * await client.close();
 * ```
 */
export function createClient(options: ClientOptions = {}): OpenLineageClient {
  const resolved = resolveConfig(options.config, options.sources);
  const onWarning = options.onWarning ?? ((message: string) => console.warn(message));
  const emitTimeoutMs = options.emitTimeoutMs ?? 5000;
  const maxPendingEmits = options.maxPendingEmits ?? 1000;
  const counters = {
    emitted: 0,
    accepted: 0,
    filtered: 0,
    undelivered: 0,
    spooled: 0,
    dropped: 0,
    timedOut: 0,
    facetsRemoved: 0,
  };
  const pending = new Set<Promise<void>>();
  // Last delivery per run id: the next event of that run waits for it, which keeps START before COMPLETE.
  const lastOfRun = new Map<string, Promise<void>>();
  let closed = false;
  let lastWarningMs = -Infinity;
  let suppressedWarnings = 0;

  const spool = options.spool === undefined ? undefined : createSpoolWriter(options.spool);
  const hygiene = createHygiene(options.hygiene, resolved.config);
  const filters = createFilters(resolved.config);
  const environmentVariables = readEnvironmentVariableNames(resolved.config);
  const userTags = readTags(resolved.config);
  const producer = options.producer ?? DEFAULT_PRODUCER;

  const reportError = (error: Error, context: EmitErrorContext): void => {
    if (options.onError !== undefined) {
      try {
        options.onError(error, context);
      } catch {
        // The hook is user code; it must not break the client.
      }
      return;
    }
    const now = Date.now();
    if (now - lastWarningMs < WARN_INTERVAL_MS) {
      suppressedWarnings++;
      return;
    }
    const more = suppressedWarnings > 0 ? ` (${suppressedWarnings} similar warnings suppressed)` : '';
    suppressedWarnings = 0;
    lastWarningMs = now;
    console.warn(
      `[openlineage] ${context.events.length} event(s) ${context.outcome} (${context.reason}): ${error.message}${more}`,
    );
  };

  const undelivered = async (
    events: readonly OpenLineageEvent[],
    error: Error,
    reason: UndeliveredReason,
  ): Promise<void> => {
    counters.undelivered += events.length;
    let outcome: 'spooled' | 'dropped' = 'dropped';
    if (spool !== undefined && (await spool.write(events))) outcome = 'spooled';
    counters[outcome] += events.length;
    reportError(error, { reason, events, outcome });
  };

  const watch = (promise: Promise<void>): void => {
    // Settled, never rejected: nothing here may surface as an unhandled rejection in the host.
    const settled = promise.catch(() => undefined);
    pending.add(settled);
    void settled.finally(() => pending.delete(settled));
  };

  const transport = ((): Transport => {
    if (resolved.disabled) return createNoopTransport();
    if (options.transport !== undefined) return options.transport;
    const transportConfig = resolved.config.transport;
    if (
      transportConfig !== undefined &&
      transportConfig !== null &&
      (typeof transportConfig !== 'object' || (transportConfig as ConfigTree).type !== undefined)
    ) {
      return createTransportFromConfig(transportConfig, {
        onWarning,
        onUndelivered: (events, error) => watch(undelivered(events, error, 'transport')),
        ...(options.transportFactories === undefined
          ? {}
          : { transportFactories: options.transportFactories }),
        ...(options.transformers === undefined ? {} : { transformers: options.transformers }),
        ...(options.retryDefaults === undefined ? {} : { retryDefaults: options.retryDefaults }),
      });
    }
    const url = resolved.env.OPENLINEAGE_URL;
    if (url !== undefined && url !== '') {
      const apiKey = resolved.env.OPENLINEAGE_API_KEY;
      const endpoint = resolved.env.OPENLINEAGE_ENDPOINT;
      try {
        return withRetry(
          createHttpTransport({
            url,
            ...(endpoint ? { endpoint } : {}),
            ...(apiKey ? { auth: { type: 'api_key' as const, apiKey } } : {}),
          }),
          options.retryDefaults,
        );
      } catch (cause) {
        throw new OpenLineageConfigError('OPENLINEAGE_URL', (cause as Error).message, { cause });
      }
    }
    onWarning(
      'OpenLineage: no transport configured; events will be printed to the console. Set OPENLINEAGE_URL or write an openlineage.yml.',
    );
    return createConsoleTransport();
  })();

  const prepare = (event: OpenLineageEvent): OpenLineageEvent | undefined => {
    if (filters.some((matches) => matches(event))) return undefined;
    let out = event;
    if (
      environmentVariables.length > 0 &&
      isRunEvent(out) &&
      out.run.facets?.environmentVariables === undefined
    ) {
      const present = environmentVariables.filter((name) => resolved.env[name] !== undefined);
      if (present.length > 0) {
        const facet = environmentVariablesRunFacet(
          { environmentVariables: present.map((name) => ({ name, value: resolved.env[name]! })) },
          { producer },
        );
        out = { ...out, run: { ...out.run, facets: { ...out.run.facets, environmentVariables: facet } } };
      }
    }
    if (userTags.job.length > 0 && 'job' in out && out.job !== undefined) {
      const current = out.job.facets?.tags;
      const tags = tagsJobFacet({ tags: mergeTags(current?.tags ?? [], userTags.job) }, { producer });
      out = { ...out, job: { ...out.job, facets: { ...out.job.facets, tags } } };
    }
    if (userTags.run.length > 0 && isRunEvent(out)) {
      const current = out.run.facets?.tags;
      const tags = tagsRunFacet({ tags: mergeTags(current?.tags ?? [], userTags.run) }, { producer });
      out = { ...out, run: { ...out.run, facets: { ...out.run.facets, tags } } };
    }
    if (hygiene !== undefined) {
      const cleaned = hygiene(out);
      counters.facetsRemoved += cleaned.report.removedFacets.length;
      out = cleaned.event;
    }
    return out;
  };

  const deliver = async (event: OpenLineageEvent, after: Promise<void> | undefined): Promise<void> => {
    if (after !== undefined) await after;
    const result = await safeEmit(transport, event);
    if (result.status === 'success') counters.accepted++;
    else await undelivered([event], result.error, 'transport');
  };

  const client: OpenLineageClient = {
    transport,
    producer,
    config: resolved,
    async emit(event) {
      counters.emitted++;
      try {
        if (closed) {
          watch(undelivered([event], new Error('emit() after close(); the event was not sent'), 'closed'));
          return;
        }
        if (pending.size >= maxPendingEmits) {
          const error = new Error(
            `${maxPendingEmits} deliveries already in flight (maxPendingEmits); is the backend down?`,
          );
          watch(undelivered([event], error, 'overflow'));
          return;
        }
        let prepared: OpenLineageEvent | undefined;
        try {
          prepared = prepare(event);
        } catch (thrown) {
          const error = new Error(`the event could not be prepared: ${toError(thrown).message}`, {
            cause: thrown,
          });
          watch(undelivered([event], error, 'invalid'));
          return;
        }
        if (prepared === undefined) {
          counters.filtered++;
          return;
        }
        const runId = isRunEvent(prepared) ? prepared.run.runId : undefined;
        // deliver() handles transport results itself; the catch only guards against bugs in hooks and spool.
        const delivery = deliver(prepared, runId === undefined ? undefined : lastOfRun.get(runId)).catch(
          () => undefined,
        );
        watch(delivery);
        if (runId !== undefined) {
          lastOfRun.set(runId, delivery);
          void delivery.then(() => {
            if (lastOfRun.get(runId) === delivery) lastOfRun.delete(runId);
          });
        }
        if (
          (await withTimeout(
            delivery.then(() => true),
            emitTimeoutMs,
          )) === undefined
        )
          counters.timedOut++;
      } catch {
        // emit() must never throw into the host program.
      }
    },
    stats: () => ({ ...counters }),
    async flush(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      try {
        while (pending.size > 0) {
          const remaining = deadline - Date.now();
          if (remaining <= 0) return false;
          if ((await withTimeout(Promise.all(pending), remaining)) === undefined) return false;
        }
        const remaining = Math.max(0, deadline - Date.now());
        const flushed =
          transport.flush === undefined
            ? true
            : ((await withTimeout(transport.flush(remaining), remaining)) ?? false);
        // An async transport may hand undelivered events back while flushing; wait for their spooling too.
        const settled =
          (await withTimeout(Promise.all(pending), Math.max(0, deadline - Date.now()))) !== undefined;
        return flushed && settled;
      } catch {
        return false;
      }
    },
    async close(timeoutMs = 10_000) {
      const started = Date.now();
      const flushed = await client.flush(timeoutMs);
      closed = true;
      const remaining = Math.max(0, timeoutMs - (Date.now() - started));
      try {
        const transportClosed =
          transport.close === undefined
            ? true
            : ((await withTimeout(transport.close(remaining), remaining)) ?? false);
        await withTimeout(Promise.all(pending), Math.max(0, timeoutMs - (Date.now() - started)));
        return flushed && transportClosed;
      } catch {
        return false;
      }
    },
  };
  return client;
}

function isRunEvent(event: OpenLineageEvent): event is RunEvent {
  return 'run' in event && typeof event.run === 'object' && event.run !== null;
}

function createHygiene(
  options: FacetHygieneOptions | false | undefined,
  config: ConfigTree,
): FacetHygiene | undefined {
  if (options === false) return undefined;
  // Java-style `facets: { <key>: { disabled: true } }` in openlineage.yml adds to the deny-list.
  const fromConfig: string[] = [];
  const facets = config.facets;
  if (typeof facets === 'object' && facets !== null) {
    for (const [key, value] of Object.entries(facets as ConfigTree)) {
      if (typeof value === 'object' && value !== null && (value as ConfigTree).disabled === true)
        fromConfig.push(key);
    }
  }
  // `hygiene: { rules: [...] }` in openlineage.yml: the named rules of a server's redaction config, same format.
  const hygiene = config.hygiene;
  const rules = parseHygieneRules(
    typeof hygiene === 'object' && hygiene !== null ? (hygiene as ConfigTree).rules : undefined,
    'hygiene.rules',
  );
  return createFacetHygiene({
    ...options,
    disabledFacets: [...(options?.disabledFacets ?? []), ...fromConfig],
    rules: [...(options?.rules ?? []), ...rules],
  });
}

/** `filters: [{ type: exact, match }, { type: regex, regex }]`: drop run events whose job name matches. */
function createFilters(config: ConfigTree): ((event: OpenLineageEvent) => boolean)[] {
  const filters = config.filters;
  if (filters === undefined || filters === null) return [];
  if (!Array.isArray(filters))
    throw new OpenLineageConfigError('filters', 'must be a list of {type, match|regex}');
  return filters.map((filter: unknown, index) => {
    const key = `filters.${index}`;
    if (typeof filter !== 'object' || filter === null)
      throw new OpenLineageConfigError(key, 'must be a mapping');
    const { type, match, regex } = filter as ConfigTree;
    if (type === 'exact' && typeof match === 'string') {
      return (event) => isRunEvent(event) && event.job.name === match;
    }
    if (type === 'regex' && typeof regex === 'string') {
      let pattern: RegExp;
      try {
        // Python's re.match anchors at the start only.
        pattern = new RegExp(`^(?:${regex})`);
      } catch (cause) {
        throw new OpenLineageConfigError(`${key}.regex`, `is not a valid regular expression: ${regex}`, {
          cause,
        });
      }
      return (event) => isRunEvent(event) && pattern.test(event.job.name);
    }
    throw new OpenLineageConfigError(
      key,
      'must be {type: exact, match: <job name>} or {type: regex, regex: <pattern>}',
    );
  });
}

function readEnvironmentVariableNames(config: ConfigTree): string[] {
  const facets = config.facets;
  if (typeof facets !== 'object' || facets === null) return [];
  const names = (facets as ConfigTree).environment_variables;
  if (names === undefined || names === null) return [];
  if (!Array.isArray(names) || names.some((name) => typeof name !== 'string')) {
    throw new OpenLineageConfigError(
      'facets.environment_variables',
      'must be a list of environment variable names',
    );
  }
  return names as string[];
}

/** `tags: { job: { key: value }, run: { key: value } }` in the configuration, as the Python client reads it. */
function readTags(config: ConfigTree): { job: TagsJobFacetFields[]; run: TagsJobFacetFields[] } {
  const tags = config.tags;
  if (tags === undefined || tags === null) return { job: [], run: [] };
  if (typeof tags !== 'object' || Array.isArray(tags)) {
    throw new OpenLineageConfigError(
      'tags',
      'must be a mapping with `job` and/or `run` mappings of tag key to value',
    );
  }
  const read = (section: 'job' | 'run'): TagsJobFacetFields[] => {
    const entries = (tags as ConfigTree)[section];
    if (entries === undefined || entries === null) return [];
    if (typeof entries !== 'object' || Array.isArray(entries)) {
      throw new OpenLineageConfigError(`tags.${section}`, 'must be a mapping of tag key to value');
    }
    return Object.entries(entries as ConfigTree).map(([key, value]) => {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw new OpenLineageConfigError(`tags.${section}.${key}`, 'must be a string');
      }
      return { key, value: String(value), source: 'USER' };
    });
  };
  return { job: read('job'), run: read('run') };
}

/**
 * User tags override tags already on the event with the same key, compared case-insensitively; the event's
 * spelling of the key is kept (the Python client's rule).
 */
function mergeTags(
  existing: readonly TagsJobFacetFields[],
  user: readonly TagsJobFacetFields[],
): TagsJobFacetFields[] {
  const userKeys = new Set(user.map((tag) => tag.key.toLowerCase()));
  const existingKeys = new Map(existing.map((tag) => [tag.key.toLowerCase(), tag.key]));
  return [
    ...existing.filter((tag) => !userKeys.has(tag.key.toLowerCase())),
    ...user.map((tag) => ({ ...tag, key: existingKeys.get(tag.key.toLowerCase()) ?? tag.key })),
  ];
}
