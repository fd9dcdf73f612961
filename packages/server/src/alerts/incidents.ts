/**
 * The incident engine: keeps the stored incidents in step with the signals (signals.ts) and writes each transition
 * with the deliveries it causes, in one transaction fenced by the writer's epoch. The outbox worker (outbox.ts)
 * sends them.
 *
 * It reconciles state rather than reacting to events: after a commit that could change one (a run failed, an
 * assertion reported, a run of a job an open incident or pending signal stands on changed; see touched()) it
 * reads the signals of those jobs and datasets and of every open incident's root, compares them with what is
 * stored, and writes the difference. A restart, a takeover by another replica, or a retry grace running out on a timer all come to
 * the same reconciliation, so nothing is told twice and nothing is missed. (The event and the transition it causes
 * are therefore two transactions, not one: the pipeline prepares the next batch before the last one commits, and
 * what a batch changes downstream is only known once it has.)
 *
 * Transitions:
 * - opened: a signal not yet grouped into any incident, under a root with no open incident;
 * - updated: new signals grouped into an open incident (throttled by the rules' `throttle`);
 * - resolved: the root's job's latest executed run completed, or the root dataset has no failing assertion left
 *   (or the root is no longer in the lineage), or a person resolved it;
 * - acknowledged: a person acknowledged it.
 * A signal belongs to the incident it was first grouped into for good (incident_signals): a failure that lasts
 * beyond a manual resolution does not open a second incident, a new failure does.
 *
 * Memory: the signals pending a retry grace (one per failing job at most), when each current failure was first
 * seen (signals.ts, FirstSeen: failures looked at in the last grace and ten minutes) and the nodes touched since
 * the last reconciliation; all bounded by the graph, none by history.
 */
import { randomUUID } from 'node:crypto';
import type { AnalysisSource } from '../analysis/context.js';
import { impact, type ImpactResult } from '../analysis/impact.js';
import { HeadwaterError } from '../core/errors.js';
import { contentHash64, canonicalJson } from '../core/ids.js';
import { parseNodeId } from '../core/node-id.js';
import type { Db } from '../store/db.js';
import type { RunRow } from '../store/model-state.js';
import { latestOwners } from '../store/queries/owners.js';
import {
  disabledChannels,
  fencedTransaction,
  jobsRunning,
  incidentById,
  insertIncident,
  insertSignals,
  insertTransition,
  openIncidents,
  signalIncidents,
  updateIncident,
  type IncidentRow,
  type IncidentStatus,
} from '../store/queries/incidents.js';
import { NO_ALERTS, type AlertRule, type AlertsConfig, type Channel } from './config.js';
import { planDeliveries, renderDelivery, type UnroutableRecipient } from './delivery-plan.js';
import type {
  ImpactedNode,
  IncidentNotice,
  NodeRef,
  Recipient,
  RecipientAddress,
  RecipientReason,
  RootCause,
  TransitionKind,
} from './notice.js';
import { matchingRules, ownerAddresses } from './rules.js';
import {
  mayRaiseSignal,
  nodeOfId,
  readSignals,
  subjectOf,
  type FirstSeen,
  type GroupedSignal,
  type PendingSignal,
  type Signal,
  type SignalNode,
  type SignalScope,
} from './signals.js';

/** What an incident's notices say besides the transition: stored as the incident's summary. */
export interface IncidentDescription {
  readonly rootCause: RootCause;
  readonly impacted: IncidentNotice['impacted'];
  readonly recipients: Recipient[];
}

/** Logging of the engine and the outbox worker. */
export interface AlertsLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** Options of {@link IncidentEngine}. */
export interface IncidentEngineOptions {
  readonly db: Db;
  /** What analyses read; resolves once the column lineage (for column precision) is loaded. */
  readonly source: () => Promise<AnalysisSource>;
  /** The configuration to start with; none leaves the engine idle until {@link IncidentEngine.configure}. */
  readonly config: AlertsConfig | undefined;
  /** The writer's epoch while this server writes; undefined on a follower, which reconciles nothing. */
  readonly epoch: () => number | undefined;
  readonly log: AlertsLog;
  /** Told when deliveries were written. */
  readonly onDeliveries?: () => void;
  /** The clock, epoch ms. @default Date.now */
  readonly now?: () => number;
  /**
   * How often every open incident's root and every pending signal is looked at again without a commit (a root
   * deleted or hidden since, a grace whose timer was lost to a failed reconciliation).
   * @default 30000
   */
  readonly tickMs?: number;
  /** How often every job's schedule is looked at for missing runs. @default 300000 */
  readonly missingEveryMs?: number;
}

/** One group of the dry run: who would be told of it and why. */
export interface DryRunGroup {
  readonly key: string;
  readonly signal: Signal['kind'];
  readonly root: string;
  readonly signals: readonly string[];
  /** The open incident it would update, if any. */
  readonly incident: string | null;
  readonly rules: readonly string[];
  readonly description: IncidentDescription;
  readonly channels: readonly string[];
  readonly unroutable: readonly UnroutableRecipient[];
}

const keyOf = (root: Pick<Signal, 'kind' | 'node'>): string => `${root.kind} ${root.node.nodeId}`;
const ref = (node: { namespace: string; name: string }): NodeRef => ({
  namespace: node.namespace,
  name: node.name,
});

/** The fingerprint of a channel as configured: a channel given a new URL is another receiver. */
export const channelFingerprint = (channel: Channel): string => contentHash64(canonicalJson(channel));

/** Keeps incidents in step with signals; see the module comment. */
export class IncidentEngine {
  readonly #options: IncidentEngineOptions;
  readonly #now: () => number;
  #scope: { jobs: Set<number>; datasets: Set<number> } = { jobs: new Set(), datasets: new Set() };
  /** What the next reconciliation covers besides what was touched (see {@link Pass}). */
  #pass: Pass = { ...NO_PASS };
  #lastMissingPass = 0;
  #pending = new Map<string, PendingSignal>();
  /** The jobs the open incidents' roots and the pending signals stand on, as of the last reconciliation. */
  #watched: ReadonlySet<number> = new Set();
  /**
   * The jobs the reconciliation under way reads (any may become a root before it ends); `all` until it knows them.
   */
  #reading: ReadonlySet<number> | 'all' = new Set();
  readonly #firstSeen: FirstSeen = new Map();
  #running: Promise<void> | undefined;
  #dueTimer: NodeJS.Timeout | undefined;
  #tick: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  #config: AlertsConfig | undefined;

  constructor(options: IncidentEngineOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#config = options.config;
  }

  /** The configuration in force; undefined while alerts are off. */
  get config(): AlertsConfig | undefined {
    return this.#config;
  }

  /** Puts another configuration in force (applied through the API, or read on becoming the writer). */
  configure(config: AlertsConfig | undefined): void {
    this.#config = config;
    if (config !== undefined) this.reconcileAll();
  }

  /**
   * Starts the periodic look at open incidents' roots, pending signals and runs under way (for overdue runs),
   * and, every `missingEveryMs`, at every job's schedule (for missing runs).
   */
  start(): void {
    this.#tick ??= setInterval(() => {
      this.#pass.due = true;
      if (this.#now() - this.#lastMissingPass >= (this.#options.missingEveryMs ?? 300_000)) {
        this.#pass.allJobs = true;
        this.#pass.missing = true;
      }
      this.#kick();
    }, this.#options.tickMs ?? 30_000);
    this.#tick.unref();
  }

  /**
   * Looks again, soon, at what a commit changed: the jobs of runs that failed ({@link mayRaiseSignal}), the
   * datasets given assertion results, and, when a run of a job an incident or pending signal stands on changed,
   * the open roots and pending signals (which every reconciliation reads). A batch of starts and completions of
   * other jobs costs nothing.
   */
  touched(
    runs: Iterable<Pick<RunRow, 'jobId' | 'aggregate' | 'execution'>>,
    datasets: Iterable<number>,
  ): void {
    if (this.#config === undefined) return;
    let look = false;
    for (const run of runs) {
      if (mayRaiseSignal(run)) {
        this.#scope.jobs.add(run.jobId);
        look = true;
      } else if (this.#watched.has(run.jobId) || this.#reading === 'all' || this.#reading.has(run.jobId)) {
        this.#pass.roots = true;
        look = true;
      }
    }
    for (const id of datasets) {
      this.#scope.datasets.add(id);
      look = true;
    }
    if (look) this.#kick();
  }

  /** Looks at every job and dataset (on start and on becoming the writer). */
  reconcileAll(): void {
    this.#pass = { due: true, roots: true, allJobs: true, allDatasets: true, missing: true };
    this.#kick();
  }

  /** Resolves once no reconciliation is under way or waiting. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#tick);
    clearTimeout(this.#dueTimer);
    clearTimeout(this.#retry);
    await this.settled();
  }

  #kick(): void {
    if (this.#closed || this.#running) return;
    this.#running = (async () => {
      try {
        while (
          !this.#closed &&
          (this.#pass.due || this.#pass.roots || this.#scope.jobs.size > 0 || this.#scope.datasets.size > 0)
        ) {
          const pass = this.#pass;
          const scope = this.#scope;
          this.#pass = { ...NO_PASS };
          this.#scope = { jobs: new Set(), datasets: new Set() };
          try {
            this.#reading = 'all';
            await this.#reconcile(pass, scope);
          } catch (error) {
            // Looked at again shortly: the store may be back, or the other writer's incidents are its own.
            this.#pass = {
              due: true,
              roots: true,
              allJobs: pass.allJobs || this.#pass.allJobs,
              allDatasets: pass.allDatasets || this.#pass.allDatasets,
              missing: pass.missing || this.#pass.missing,
            };
            for (const id of scope.jobs) this.#scope.jobs.add(id);
            for (const id of scope.datasets) this.#scope.datasets.add(id);
            if (this.#options.epoch() !== undefined)
              this.#options.log.warn(
                { err: error },
                'incidents could not be reconciled; trying again in 1 s',
              );
            clearTimeout(this.#retry);
            this.#retry = setTimeout(() => this.#kick(), 1000);
            this.#retry.unref();
            return;
          } finally {
            this.#reading = new Set();
          }
        }
      } finally {
        this.#running = undefined;
      }
    })();
  }

  async #reconcile(pass: Pass, touched: SignalScope): Promise<void> {
    const { db } = this.#options;
    const config = this.#config;
    const epoch = this.#options.epoch();
    if (epoch === undefined || config === undefined) return;
    const source = await this.#options.source();
    const { state } = source;
    const nowMs = this.#now();
    const open = await openIncidents(db);
    if (pass.missing) this.#lastMissingPass = nowMs;
    const jobs = new Set(pass.allJobs ? state.jobsById.keys() : touched.jobs);
    const datasets = new Set(pass.allDatasets ? state.datasetsById.keys() : touched.datasets);
    // Runs under way, whether they are overdue yet: few, and no commit says when they become so.
    if (pass.due) for (const id of await jobsRunning(db)) jobs.add(id);
    const roots = new Map<string, SignalNode | undefined>();
    for (const incident of open) {
      const node = nodeOfId(state, incident.rootNode);
      roots.set(incident.id, node);
      if (node) (node.type === 'job' ? jobs : datasets).add(node.id);
    }
    for (const pending of this.#pending.values())
      (pending.node.type === 'job' ? jobs : datasets).add(pending.node.id);
    this.#reading = jobs; // until #kick clears it, once this reconciliation is over (or failed)

    const reading = await readSignals(source, config, { jobs, datasets }, nowMs, this.#firstSeen, {
      missing: pass.missing,
      known: async (keys) => new Set((await signalIncidents(db, keys)).keys()),
    });
    this.#forgetSeen(nowMs);
    this.#pending = new Map(reading.pending.map((p) => [`${p.node.type}:${p.node.id}`, p]));
    this.#scheduleDue();

    const groups = groupByRoot(reading.grouped);
    const seen = await signalIncidents(
      db,
      [...groups.values()].flatMap((group) => group.signals.map((s) => s.key)),
    );
    const openByKey = new Map(open.map((incident) => [incident.key, incident]));
    const disabled = await disabledChannels(db);
    const active = new Set<string>();

    for (const [key, group] of groups) {
      active.add(key);
      const fresh = group.signals.filter((s) => !seen.has(s.key));
      if (fresh.length === 0) continue;
      const incident = openByKey.get(key);
      const told = seen.get(group.root.key);
      if (incident === undefined && told !== undefined) {
        // The root was told of in an incident resolved since (by a person): what follows from it joins that one.
        await fencedTransaction(db, epoch, (tx) => insertSignals(tx, told, fresh.map(signalInsert)));
        continue;
      }
      const rules = matchingRules(config, subjectOf(group.root));
      const description = await incidentDescription(source, config, rules, group.root, group.signals, nowMs);
      const at = new Date(nowMs);
      if (incident === undefined) {
        const id = randomUUID();
        await fencedTransaction(db, epoch, async (tx) => {
          const inserted = await insertIncident(tx, {
            id,
            key,
            signal: group.root.kind,
            rootNode: group.root.node.nodeId,
            namespace: group.root.node.namespace,
            at,
            summary: description,
          });
          if (!inserted) return;
          await insertSignals(tx, id, fresh.map(signalInsert));
          await insertTransition(tx, this.#transition(id, 'opened', at, at, description, disabled, {}));
        });
        this.#options.log.info(
          { incident: id, root: group.root.node.nodeId, signal: group.root.kind },
          'incident opened',
        );
      } else {
        const throttleMs = Math.max(0, ...rules.map((rule) => rule.throttleMs));
        const last = incident.lastUpdateSentAt?.getTime();
        const throttled = last !== undefined && nowMs - last < throttleMs;
        await fencedTransaction(db, epoch, async (tx) => {
          await insertSignals(tx, incident.id, fresh.map(signalInsert));
          await insertTransition(
            tx,
            this.#transition(incident.id, 'updated', at, incident.openedAt, description, disabled, {
              throttled,
              note: `${fresh.length} more signal${fresh.length === 1 ? '' : 's'}: ${fresh.map(signalPhrase).join('; ')}`,
            }),
          );
          await updateIncident(tx, incident.id, { at, summary: description, updateSent: !throttled });
        });
      }
      this.#options.onDeliveries?.();
    }

    // What is over.
    for (const incident of open) {
      if (active.has(incident.key)) continue;
      const node = roots.get(incident.id);
      let note: string | undefined;
      if (node === undefined) note = `${incident.rootNode} is no longer in the lineage`;
      else if (incident.signal === 'run_failed') {
        const latest = reading.latestRuns.get(node.id);
        if (latest !== undefined && latest.state === 'COMPLETED')
          note = `run ${latest.uuid} of ${node.name} completed`;
      } else if (incident.signal === 'assertion_failed' && !reading.failingDatasets.has(node.id)) {
        note = `no assertion on ${node.name} fails any more`;
      } else if (incident.signal === 'run_overdue' || incident.signal === 'run_missing') {
        const root = (incident.summary as IncidentDescription).rootCause;
        const latest = reading.latestRuns.get(node.id);
        const expected = root.kind === 'job' && root.expectedBy ? Date.parse(root.expectedBy) : undefined;
        if (incident.signal === 'run_overdue' && root.kind === 'job' && latest !== undefined) {
          if (latest.uuid !== root.runId || latest.state !== 'RUNNING')
            note = `run ${root.runId} of ${node.name} is over (${latest.uuid === root.runId ? latest.state : `a later run is ${latest.state}`})`;
        } else if (
          incident.signal === 'run_missing' &&
          latest?.startedAt != null &&
          expected !== undefined &&
          latest.startedAt.getTime() >= expected
        )
          note = `run ${latest.uuid} of ${node.name} started`;
      }
      if (note === undefined) continue;
      await this.#write(incident, 'resolved', { note, actor: undefined, disabled, epoch, nowMs });
      this.#options.log.info({ incident: incident.id, note }, 'incident resolved');
    }

    // A root resolved above stays watched until the next reconciliation: one more look costs little.
    const watched = new Set<number>();
    const watch = (node: SignalNode | undefined) => {
      if (node?.type === 'job') watched.add(node.id);
    };
    for (const node of roots.values()) watch(node);
    for (const group of groups.values()) watch(group.root.node);
    for (const pending of this.#pending.values()) watch(pending.node);
    this.#watched = watched;
  }

  /** A person's acknowledgement or resolution. */
  async act(
    id: string,
    kind: 'acknowledged' | 'resolved',
    actor: string,
    note: string | undefined,
  ): Promise<IncidentRow> {
    const { db } = this.#options;
    const epoch = this.#options.epoch();
    if (epoch === undefined)
      throw new HeadwaterError('STORE_UNAVAILABLE', 'This server does not write now; try again shortly.', {
        retryAfterSeconds: 1,
      });
    const incident = await incidentById(db, id);
    if (incident === undefined) throw new HeadwaterError('NOT_FOUND', `No incident ${JSON.stringify(id)}.`);
    if (incident.status === 'resolved')
      throw new HeadwaterError(
        'CONFLICT',
        `Incident ${id} is resolved already (at ${incident.resolvedAt?.toISOString()}).`,
      );
    if (kind === 'acknowledged' && incident.status === 'acknowledged')
      throw new HeadwaterError(
        'CONFLICT',
        `Incident ${id} was acknowledged already by ${incident.acknowledgedBy}.`,
      );
    await this.#write(incident, kind, {
      note,
      actor,
      disabled: await disabledChannels(db),
      epoch,
      nowMs: this.#now(),
    });
    this.#options.onDeliveries?.();
    return (await incidentById(db, id))!;
  }

  /** What would be told now of each broken root, and to whom, without writing or sending anything. */
  async dryRun(): Promise<DryRunGroup[]> {
    const { db } = this.#options;
    const config = this.#config;
    if (config === undefined)
      throw new HeadwaterError(
        'CONFLICT',
        'Alerts are not configured on this server: start it with serve --alerts-config FILE, or apply one ' +
          '(headwater alerts apply FILE).',
      );
    const source = await this.#options.source();
    const nowMs = this.#now();
    const reading = await readSignals(
      source,
      config,
      { jobs: new Set(source.state.jobsById.keys()), datasets: new Set(source.state.datasetsById.keys()) },
      nowMs,
      // A dry run counts graces from when this server first saw each failure, and keeps nothing.
      new Map([...this.#firstSeen].map(([uuid, seen]) => [uuid, { ...seen }])),
    );
    const groups = groupByRoot(reading.grouped);
    const openByKey = new Map((await openIncidents(db)).map((incident) => [incident.key, incident.id]));
    const result: DryRunGroup[] = [];
    for (const [key, group] of groups) {
      const rules = matchingRules(config, subjectOf(group.root));
      const description = await incidentDescription(source, config, rules, group.root, group.signals, nowMs);
      const plan = planDeliveries(
        noticeOf(
          'dry-run',
          'opened',
          new Date(nowMs),
          new Date(nowMs),
          description,
          {},
          '0',
          group.root.kind,
        ),
        config,
      );
      result.push({
        key,
        signal: group.root.kind,
        root: group.root.node.nodeId,
        signals: group.signals.map((s) => s.key),
        incident: openByKey.get(key) ?? null,
        rules: rules.map((rule) => rule.name),
        description,
        channels: plan.deliveries.map((delivery) => delivery.channel),
        unroutable: plan.unroutable,
      });
    }
    return result;
  }

  async #write(
    incident: IncidentRow,
    kind: 'acknowledged' | 'resolved',
    context: {
      note: string | undefined;
      actor: string | undefined;
      disabled: ReadonlyMap<string, string>;
      epoch: number;
      nowMs: number;
    },
  ): Promise<void> {
    const at = new Date(context.nowMs);
    const description = incident.summary as IncidentDescription;
    const status: IncidentStatus = kind === 'resolved' ? 'resolved' : 'acknowledged';
    await fencedTransaction(this.#options.db, context.epoch, async (tx) => {
      await insertTransition(
        tx,
        this.#transition(incident.id, kind, at, incident.openedAt, description, context.disabled, {
          note: context.note,
          actor: context.actor,
        }),
      );
      await updateIncident(tx, incident.id, { at, status, actor: context.actor ?? 'system:alerts' });
    });
  }

  #transition(
    incidentId: string,
    kind: TransitionKind,
    at: Date,
    openedAt: Date,
    description: IncidentDescription,
    disabled: ReadonlyMap<string, string>,
    extra: { throttled?: boolean; note?: string | undefined; actor?: string | undefined },
  ) {
    const config = this.#config ?? NO_ALERTS;
    return {
      incidentId,
      kind,
      at,
      actor: extra.actor,
      note: extra.note,
      throttled: extra.throttled ?? false,
      notice: (seq: number) =>
        noticeOf(
          incidentId,
          kind,
          at,
          openedAt,
          description,
          extra,
          String(seq),
          signalOfDescription(description),
        ),
      deliveries: (_seq: number, notice: unknown) =>
        planDeliveries(notice as IncidentNotice, config)
          .deliveries.filter((delivery) => {
            const channel = config.channels[delivery.channel];
            return channel === undefined || disabled.get(delivery.channel) !== channelFingerprint(channel);
          })
          .map((delivery) => ({
            key: delivery.key,
            channel: delivery.channel,
            message: renderDelivery(notice as IncidentNotice, delivery, config),
          })),
    };
  }

  /**
   * Forgets when a failure was first seen once no reconciliation has looked at it for the longest grace and ten
   * minutes: it was retried, or told of and left alone (should it be looked at again, it is told of already).
   */
  #forgetSeen(nowMs: number): void {
    const longest = Math.max(0, ...(this.#config?.rules ?? []).map((rule) => rule.retryGraceMs));
    for (const [uuid, seen] of this.#firstSeen)
      if (seen.used < nowMs - longest - 600_000) this.#firstSeen.delete(uuid);
  }

  #scheduleDue(): void {
    clearTimeout(this.#dueTimer);
    if (this.#closed || this.#pending.size === 0) return;
    const due = Math.min(...[...this.#pending.values()].map((p) => p.dueAt));
    // The pending signals are in every reconciliation's scope: one with nothing touched looks at them.
    this.#dueTimer = setTimeout(
      () => {
        this.#pass.due = true;
        this.#kick();
      },
      Math.max(0, due - this.#now()) + 5,
    );
    this.#dueTimer.unref();
  }
}

/**
 * What a reconciliation looks at besides the nodes touched and the roots of open incidents and pending signals
 * (always looked at; `roots` asks for a pass that looks at nothing more): `due`, the runs under way (a timer or the periodic tick, rather than a commit); `allJobs` and
 * `allDatasets`, the whole graph (on start and takeover; every job on the missing-run pass); `missing`, schedules.
 */
interface Pass {
  due: boolean;
  /** Only the open roots and pending signals: a run of a job one stands on changed. */
  roots: boolean;
  allJobs: boolean;
  allDatasets: boolean;
  missing: boolean;
}
const NO_PASS: Pass = { due: false, roots: false, allJobs: false, allDatasets: false, missing: false };

/** Signals by the key of their root: each group holds its root's signal and every signal under it, once. */
function groupByRoot(grouped: readonly GroupedSignal[]): Map<string, { root: Signal; signals: Signal[] }> {
  const groups = new Map<string, { root: Signal; signals: Signal[] }>();
  for (const { signal, root } of grouped) {
    const key = keyOf(root);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { root, signals: [] }));
    for (const one of [signal, root])
      if (!group.signals.some((s) => s.key === one.key)) group.signals.push(one);
  }
  return groups;
}

/** The signal kind a stored description's root stands on. */
function signalOfDescription(description: IncidentDescription): Signal['kind'] {
  return description.rootCause.kind === 'dataset' ? 'assertion_failed' : 'run_failed';
}

function noticeOf(
  incidentId: string,
  kind: TransitionKind,
  at: Date,
  openedAt: Date,
  description: IncidentDescription,
  extra: { note?: string | undefined; actor?: string | undefined },
  transitionId: string,
  signal: Signal['kind'],
): IncidentNotice {
  return {
    incidentId,
    signal,
    openedAt: openedAt.toISOString(),
    transition: {
      id: transitionId,
      kind,
      at: at.toISOString(),
      ...(extra.actor === undefined ? {} : { by: extra.actor }),
      ...(extra.note === undefined ? {} : { note: extra.note }),
    },
    rootCause: description.rootCause,
    impacted: description.impacted,
    recipients: description.recipients,
  };
}

const signalInsert = (signal: Signal) => ({
  key: signal.key,
  kind: signal.kind,
  node: signal.node.nodeId,
  at: signal.at,
  detail: {
    runId: signal.runUuid,
    ...(signal.errorMessage === null ? {} : { errorMessage: signal.errorMessage }),
    ...(signal.assertion === undefined ? {} : { assertion: signal.assertion }),
    ...(signal.reporter === undefined ? {} : { reportedBy: signal.reporter.nodeId }),
  },
});

const signalPhrase = (signal: Signal): string =>
  signal.kind === 'run_failed'
    ? `run ${signal.runUuid} of ${signal.node.name} failed`
    : `${signal.assertion?.name ?? signal.assertion?.assertion ?? 'an assertion'} failed on ${signal.node.name}`;

/**
 * What an incident says: its root cause, everything downstream of it (at column precision when the root is
 * failing assertions on columns), and who is told under the rules that match its root.
 */
export async function incidentDescription(
  source: AnalysisSource,
  config: AlertsConfig,
  rules: readonly AlertRule[],
  root: Signal,
  signals: readonly Signal[],
  nowMs: number,
): Promise<IncidentDescription> {
  const { db } = source;
  const at = { at: new Date(nowMs) };
  let results: ImpactResult[];
  if (root.node.type === 'job') {
    results = [await impact(source, { kind: 'job', id: root.node.id }, 'none', at)];
  } else {
    const own = signals.filter((s) => s.kind === 'assertion_failed' && s.node.id === root.node.id);
    const columns = [...new Set(own.map((s) => s.assertion?.column ?? null))];
    results = columns.includes(null)
      ? [await impact(source, { kind: 'dataset', id: root.node.id }, 'none', at)]
      : await Promise.all(
          columns.map((field) =>
            impact(source, { kind: 'datasetField', datasetId: root.node.id, field: field! }, 'none', at),
          ),
        );
  }
  // The nearest distance of each node over the starts, with every column reached.
  const reached = new Map<string, { kind: 'dataset' | 'job'; node: ImpactedNode; owners: string[] }>();
  for (const result of results) {
    for (const node of result.nodes) {
      const parsed = parseNodeId(node.nodeId);
      if (parsed.type !== 'dataset' && parsed.type !== 'job') continue;
      const columns = node.columns.map((column) => column.slice(column.lastIndexOf(':') + 1));
      const known = reached.get(node.nodeId);
      const merged = [...new Set([...(known?.node.columns ?? []), ...columns])].sort();
      reached.set(node.nodeId, {
        kind: node.kind,
        node: {
          namespace: parsed.namespace,
          name: parsed.name,
          depth: Math.min(known?.node.depth ?? Infinity, node.distance),
          ...(merged.length === 0 ? {} : { columns: merged }),
        },
        owners: [...new Set([...(known?.owners ?? []), ...node.owners.map((owner) => owner.name)])],
      });
    }
  }
  const rootOwners = (await latestOwners(db, root.node.type, [root.node.id])).get(root.node.id) ?? [];

  const recipients = new Map<string, { address: RecipientAddress; reasons: RecipientReason[] }>();
  const tell = (address: RecipientAddress, reason: RecipientReason) => {
    const key = 'channel' in address ? `channel:${address.channel}` : `email:${address.email.toLowerCase()}`;
    let recipient = recipients.get(key);
    if (!recipient) recipients.set(key, (recipient = { address, reasons: [] }));
    if (!recipient.reasons.some((known) => canonicalJson(known) === canonicalJson(reason)))
      recipient.reasons.push(reason);
  };
  for (const rule of rules) {
    const scope = rule.notify.owners;
    if (scope === 'root' || scope === 'both') {
      for (const owner of rootOwners)
        for (const address of ownerAddresses(config, owner.name))
          tell(address, {
            kind: 'owns-root',
            owner: owner.name,
            node: ref(root.node),
            nodeType: root.node.type,
          });
    }
    if (scope === 'impacted' || scope === 'both') {
      for (const { kind, node, owners } of reached.values()) {
        if (rule.notify.depth !== undefined && node.depth > rule.notify.depth) continue;
        for (const owner of owners)
          for (const address of ownerAddresses(config, owner))
            tell(address, {
              kind: 'owns-impacted',
              owner,
              node: ref(node),
              nodeType: kind,
              depth: node.depth,
              ...(node.columns === undefined ? {} : { columns: node.columns }),
            });
      }
    }
    for (const channel of rule.notify.channels) tell({ channel }, { kind: 'rule', rule: rule.name });
  }

  const byDepth = (a: ImpactedNode, b: ImpactedNode) =>
    a.depth - b.depth ||
    (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const impacted = {
    datasets: [...reached.values()]
      .filter((r) => r.kind === 'dataset')
      .map((r) => r.node)
      .sort(byDepth),
    jobs: [...reached.values()]
      .filter((r) => r.kind === 'job')
      .map((r) => r.node)
      .sort(byDepth),
  };
  const reporter = root.reporter;
  const rootCause: RootCause =
    root.node.type === 'job'
      ? {
          kind: 'job',
          job: ref(root.node),
          ...(root.runUuid === '' ? {} : { runId: root.runUuid }),
          ...(root.errorMessage === null ? {} : { errorMessage: root.errorMessage }),
          ...(root.expectedBy === undefined ? {} : { expectedBy: root.expectedBy.toISOString() }),
        }
      : {
          kind: 'dataset',
          dataset: ref(root.node),
          assertion: {
            name: root.assertion?.name ?? root.assertion?.assertion ?? 'assertion',
            ...(root.assertion?.column ? { column: root.assertion.column } : {}),
          },
          ...(reporter === undefined ? {} : { job: ref(reporter) }),
          runId: root.runUuid,
        };
  return { rootCause, impacted, recipients: [...recipients.values()] };
}
