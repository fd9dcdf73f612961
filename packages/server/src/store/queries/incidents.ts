/**
 * The SQL of incidents and their deliveries (migration 200). Writes take the writer's epoch and run in a
 * transaction that first locks the writer lease FOR SHARE: a server whose epoch is over writes nothing, and a
 * takeover waits for the write under way (as headwater_commit does for events).
 */
import type { Db, Queryable } from '../db.js';
import { EXECUTED } from './analysis.js';
import { RUN_ORDER } from './runs.js';

/** A write refused because another server writes now. */
export class FencedError extends Error {
  constructor(epoch: number, current: number | undefined) {
    super(
      `fenced: writer epoch ${epoch} is over, another Headwater server writes with epoch ${current ?? 'none'}`,
    );
    this.name = 'FencedError';
  }
}

/** Runs `fn` in a transaction fenced by `epoch`. */
export async function fencedTransaction<T>(
  db: Db,
  epoch: number,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  return db.transaction(async (tx) => {
    const [lease] = await tx.query<{ epoch: number }>(
      'SELECT epoch FROM writer_lease WHERE id = 1 FOR SHARE',
    );
    if (lease?.epoch !== epoch) throw new FencedError(epoch, lease?.epoch);
    return fn(tx);
  });
}

/** The states of an incident. */
export type IncidentStatus = 'open' | 'acknowledged' | 'resolved';

/** An incident as stored. */
export interface IncidentRow {
  readonly id: string;
  readonly key: string;
  readonly signal: string;
  readonly rootNode: string;
  readonly namespace: string;
  readonly status: IncidentStatus;
  readonly openedAt: Date;
  readonly updatedAt: Date;
  readonly acknowledgedAt: Date | null;
  readonly acknowledgedBy: string | null;
  readonly resolvedAt: Date | null;
  readonly resolvedBy: string | null;
  readonly summary: unknown;
  readonly lastUpdateSentAt: Date | null;
}

const INCIDENT_COLUMNS = `id, key, signal, root_node AS "rootNode", namespace, status, opened_at AS "openedAt",
  updated_at AS "updatedAt", acknowledged_at AS "acknowledgedAt", acknowledged_by AS "acknowledgedBy",
  resolved_at AS "resolvedAt", resolved_by AS "resolvedBy", summary, last_update_sent_at AS "lastUpdateSentAt"`;

/** The incidents not resolved yet (few: one per broken root at most). */
export function openIncidents(db: Queryable): Promise<IncidentRow[]> {
  return db.query<IncidentRow>(
    `SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE status <> 'resolved' ORDER BY opened_at, id`,
  );
}

/** One incident, or undefined. */
export async function incidentById(db: Queryable, id: string): Promise<IncidentRow | undefined> {
  const [row] = await db.query<IncidentRow>(`SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE id = $1`, [id]);
  return row;
}

/** Filters of {@link listIncidents}. */
export interface IncidentQuery {
  readonly status?: IncidentStatus | 'unresolved' | undefined;
  /** Only incidents rooted in these namespaces; undefined for all. */
  readonly namespaces?: readonly string[] | undefined;
  readonly limit: number;
  readonly offset: number;
}

/** Incidents, newest first, and how many match. */
export async function listIncidents(
  db: Queryable,
  query: IncidentQuery,
): Promise<{ incidents: IncidentRow[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.status === 'unresolved') where.push(`status <> 'resolved'`);
  else if (query.status !== undefined) where.push(`status = $${params.push(query.status)}`);
  if (query.namespaces !== undefined)
    where.push(`namespace = ANY($${params.push(query.namespaces)}::text[])`);
  const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
  const [count] = await db.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM incidents ${filter}`,
    params,
  );
  const incidents = await db.query<IncidentRow>(
    `SELECT ${INCIDENT_COLUMNS} FROM incidents ${filter} ORDER BY opened_at DESC, id DESC
     LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, query.limit, query.offset],
  );
  return { incidents, total: count?.total ?? 0 };
}

/** Which of these signals belong to an incident already: signal key -> incident id. */
export async function signalIncidents(db: Queryable, keys: readonly string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db.query<{ key: string; incident: string }>(
    'SELECT signal_key AS key, incident_id AS incident FROM incident_signals WHERE signal_key = ANY($1::text[])',
    [keys],
  );
  return new Map(rows.map((row) => [row.key, row.incident]));
}

/** A signal grouped into an incident. */
export interface IncidentSignalRow {
  readonly key: string;
  readonly kind: string;
  readonly node: string;
  readonly at: Date;
  readonly detail: unknown;
}

/** The signals of an incident, oldest first. */
export function incidentSignals(db: Queryable, incidentId: string): Promise<IncidentSignalRow[]> {
  return db.query<IncidentSignalRow>(
    `SELECT signal_key AS key, kind, node, at, detail FROM incident_signals WHERE incident_id = $1
     ORDER BY at, signal_key`,
    [incidentId],
  );
}

/** A transition as stored. */
export interface TransitionRow {
  readonly seq: number;
  readonly kind: string;
  readonly at: Date;
  readonly actor: string | null;
  readonly note: string | null;
  readonly notice: unknown;
  readonly throttled: boolean;
}

/** The transitions of an incident, in order. */
export function incidentTransitions(db: Queryable, incidentId: string): Promise<TransitionRow[]> {
  return db.query<TransitionRow>(
    `SELECT seq, kind, at, actor, note, notice, throttled FROM incident_transitions WHERE incident_id = $1
     ORDER BY seq`,
    [incidentId],
  );
}

/** A delivery as stored, without its message. */
export interface DeliveryRow {
  readonly key: string;
  readonly transitionSeq: number;
  readonly channel: string;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly nextAttemptAt: Date;
  readonly sentAt: Date | null;
  readonly givenUpAt: Date | null;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
}

/** The deliveries of an incident, by transition and channel. */
export function incidentDeliveries(db: Queryable, incidentId: string): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>(
    `SELECT key, transition_seq AS "transitionSeq", channel, attempts, created_at AS "createdAt",
       next_attempt_at AS "nextAttemptAt", sent_at AS "sentAt", given_up_at AS "givenUpAt",
       last_status AS "lastStatus", last_error AS "lastError"
     FROM alert_outbox WHERE incident_id = $1 ORDER BY transition_seq, channel`,
    [incidentId],
  );
}

/** A new incident. */
export interface IncidentInsert {
  readonly id: string;
  readonly key: string;
  readonly signal: string;
  readonly rootNode: string;
  readonly namespace: string;
  readonly at: Date;
  readonly summary: unknown;
}

/** Inserts an open incident; false when one with its key is open already. */
export async function insertIncident(tx: Queryable, incident: IncidentInsert): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO incidents (id, key, signal, root_node, namespace, status, opened_at, updated_at, summary)
     VALUES ($1, $2, $3, $4, $5, 'open', $6, $6, $7)
     ON CONFLICT (key) WHERE status <> 'resolved' DO NOTHING RETURNING id`,
    [
      incident.id,
      incident.key,
      incident.signal,
      incident.rootNode,
      incident.namespace,
      incident.at,
      JSON.stringify(incident.summary),
    ],
  );
  return rows.length === 1;
}

/** A change of an incident's status or summary. */
export interface IncidentUpdate {
  readonly status?: IncidentStatus;
  readonly at: Date;
  readonly actor?: string | undefined;
  readonly summary?: unknown;
  readonly updateSent?: boolean;
}

/** Updates an incident. */
export async function updateIncident(tx: Queryable, id: string, update: IncidentUpdate): Promise<void> {
  await tx.query(
    `UPDATE incidents SET updated_at = $2,
       status = COALESCE($3, status),
       acknowledged_at = CASE WHEN $3 = 'acknowledged' THEN $2 ELSE acknowledged_at END,
       acknowledged_by = CASE WHEN $3 = 'acknowledged' THEN $4 ELSE acknowledged_by END,
       resolved_at = CASE WHEN $3 = 'resolved' THEN $2 ELSE resolved_at END,
       resolved_by = CASE WHEN $3 = 'resolved' THEN $4 ELSE resolved_by END,
       summary = COALESCE($5::jsonb, summary),
       last_update_sent_at = CASE WHEN $6 THEN $2 ELSE last_update_sent_at END
     WHERE id = $1`,
    [
      id,
      update.at,
      update.status ?? null,
      update.actor ?? null,
      update.summary === undefined ? null : JSON.stringify(update.summary),
      update.updateSent === true,
    ],
  );
}

/** A signal to group into an incident. */
export interface SignalInsert {
  readonly key: string;
  readonly kind: string;
  readonly node: string;
  readonly at: Date;
  readonly detail: unknown;
}

/** Groups signals into an incident (a signal already in one stays there). */
export async function insertSignals(
  tx: Queryable,
  incidentId: string,
  signals: readonly SignalInsert[],
): Promise<void> {
  if (signals.length === 0) return;
  await tx.query(
    `INSERT INTO incident_signals (signal_key, incident_id, kind, node, at, detail)
     SELECT s.key, $1, s.kind, s.node, s.at, s.detail
     FROM jsonb_to_recordset($2::jsonb) AS s(key text, kind text, node text, at timestamptz, detail jsonb)
     ON CONFLICT (signal_key) DO NOTHING`,
    [incidentId, JSON.stringify(signals)],
  );
}

/** A transition to record, with the deliveries it causes. */
export interface TransitionInsert {
  readonly incidentId: string;
  readonly kind: string;
  readonly at: Date;
  readonly actor?: string | undefined;
  readonly note?: string | undefined;
  readonly throttled: boolean;
  /** Builds the notice from the transition's number (its id). */
  readonly notice: (seq: number) => unknown;
  /** The deliveries of the notice: key and rendered message per channel. */
  readonly deliveries: (
    seq: number,
    notice: unknown,
  ) => readonly { key: string; channel: string; message: unknown }[];
}

/** Records a transition and its outbox rows; resolves with its number. */
export async function insertTransition(tx: Queryable, transition: TransitionInsert): Promise<number> {
  const [next] = await tx.query<{ seq: number }>(
    'SELECT COALESCE(max(seq), 0) + 1 AS seq FROM incident_transitions WHERE incident_id = $1',
    [transition.incidentId],
  );
  const seq = next!.seq;
  const notice = transition.notice(seq);
  await tx.query(
    `INSERT INTO incident_transitions (incident_id, seq, kind, at, actor, note, notice, throttled)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      transition.incidentId,
      seq,
      transition.kind,
      transition.at,
      transition.actor ?? null,
      transition.note ?? null,
      JSON.stringify(notice),
      transition.throttled,
    ],
  );
  const deliveries = transition.throttled ? [] : transition.deliveries(seq, notice);
  if (deliveries.length > 0) {
    await tx.query(
      `INSERT INTO alert_outbox (key, incident_id, transition_seq, channel, message, created_at, next_attempt_at)
       SELECT d.key, $1, $2, d.channel, d.message, $3, $3
       FROM jsonb_to_recordset($4::jsonb) AS d(key text, channel text, message jsonb)
       ON CONFLICT (key) DO NOTHING`,
      [transition.incidentId, seq, transition.at, JSON.stringify(deliveries)],
    );
  }
  return seq;
}

/** An outbox row taken to send. */
export interface ClaimedDelivery {
  readonly key: string;
  readonly incidentId: string;
  readonly channel: string;
  readonly message: unknown;
  /** Attempts before this one. */
  readonly attempts: number;
}

/**
 * Takes up to `limit` due deliveries for the writer with `epoch` (rows another transaction holds are skipped), and
 * pushes their next attempt `leaseMs` ahead: while this writer sends them, nothing else will. Rows an earlier writer
 * took are due at once (it lost the writer lock, so it died or was fenced while sending them): a receiver may then
 * get a message twice, with the same `webhook-id`, but never not at all.
 */
export async function claimDueDeliveries(
  db: Db,
  epoch: number,
  now: Date,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  return fencedTransaction(db, epoch, (tx) =>
    tx.query<ClaimedDelivery>(
      `UPDATE alert_outbox o SET claimed_epoch = $1, next_attempt_at = $2::timestamptz + make_interval(secs => $4::float8 / 1000)
       FROM (SELECT key FROM alert_outbox WHERE sent_at IS NULL AND given_up_at IS NULL
               AND (next_attempt_at <= $2 OR claimed_epoch < $1)
             ORDER BY next_attempt_at, key LIMIT $3 FOR UPDATE SKIP LOCKED) due
       WHERE o.key = due.key
       RETURNING o.key, o.incident_id AS "incidentId", o.channel, o.message, o.attempts`,
      [epoch, now, limit, leaseMs],
    ),
  );
}

/** How a delivery's attempts ended, to record. */
export type DeliveryOutcome =
  | { readonly kind: 'sent'; readonly at: Date; readonly attempts: number; readonly status: number | null }
  | {
      readonly kind: 'retry';
      readonly attempts: number;
      readonly nextAttemptAt: Date;
      readonly status: number | null;
      readonly error: string;
    }
  | {
      readonly kind: 'given-up';
      readonly at: Date;
      readonly attempts: number;
      readonly status: number | null;
      readonly error: string;
    };

/** Records what became of a claimed delivery. */
export async function recordDelivery(
  db: Db,
  epoch: number,
  key: string,
  outcome: DeliveryOutcome,
): Promise<void> {
  await fencedTransaction(db, epoch, (tx) =>
    tx.query(
      `UPDATE alert_outbox SET attempts = $2, last_status = $3,
         sent_at = CASE WHEN $4 = 'sent' THEN $5::timestamptz END,
         given_up_at = CASE WHEN $4 = 'given-up' THEN $5::timestamptz END,
         next_attempt_at = CASE WHEN $4 = 'retry' THEN $5::timestamptz ELSE next_attempt_at END,
         claimed_epoch = NULL, last_error = $6
       WHERE key = $1 AND sent_at IS NULL`,
      [
        key,
        outcome.attempts,
        outcome.status,
        outcome.kind,
        outcome.kind === 'retry' ? outcome.nextAttemptAt : outcome.at,
        outcome.kind === 'sent' ? null : outcome.error.slice(0, 2000),
      ],
    ),
  );
}

/** When the next delivery is due, or undefined when none waits. */
export async function nextDeliveryDue(db: Queryable): Promise<Date | undefined> {
  const [row] = await db.query<{ at: Date | null }>(
    'SELECT min(next_attempt_at) AS at FROM alert_outbox WHERE sent_at IS NULL AND given_up_at IS NULL',
  );
  return row?.at ?? undefined;
}

/** Channels disabled by a 410: name -> the fingerprint of the configuration that was disabled. */
export async function disabledChannels(db: Queryable): Promise<Map<string, string>> {
  const rows = await db.query<{ channel: string; fingerprint: string }>(
    'SELECT channel, fingerprint FROM alert_channels_disabled',
  );
  return new Map(rows.map((row) => [row.channel, row.fingerprint]));
}

/** Disables a channel as configured now. */
export async function disableChannel(
  tx: Queryable,
  channel: string,
  fingerprint: string,
  at: Date,
  reason: string,
): Promise<void> {
  await tx.query(
    `INSERT INTO alert_channels_disabled (channel, fingerprint, at, reason) VALUES ($1, $2, $3, $4)
     ON CONFLICT (channel) DO UPDATE SET fingerprint = $2, at = $3, reason = $4`,
    [channel, fingerprint, at, reason.slice(0, 2000)],
  );
}

/** Gives up the unsent deliveries of a channel (it was disabled). */
export async function giveUpChannel(tx: Queryable, channel: string, at: Date, reason: string): Promise<void> {
  await tx.query(
    `UPDATE alert_outbox SET given_up_at = $2, last_error = $3
     WHERE channel = $1 AND sent_at IS NULL AND given_up_at IS NULL`,
    [channel, at, reason.slice(0, 2000)],
  );
}

/** Failed runs among the children of these runs (a DAG run that failed because a task did): parent -> children. */
export async function failedChildRuns(
  db: Queryable,
  parentUuids: readonly string[],
): Promise<Map<string, { uuid: string; jobId: number }[]>> {
  const result = new Map<string, { uuid: string; jobId: number }[]>();
  if (parentUuids.length === 0) return result;
  const rows = await db.query<{ parent: string; uuid: string; jobId: number }>(
    `SELECT r.parent_run_uuid::text AS parent, r.uuid::text AS uuid, r.job_id AS "jobId" FROM runs r
     WHERE r.parent_run_uuid = ANY($1::uuid[]) AND r.state IN ('FAILED', 'ABORTED')
       AND ${EXECUTED}
     ORDER BY 1, 2`,
    [parentUuids],
  );
  for (const row of rows) {
    let list = result.get(row.parent);
    if (!list) result.set(row.parent, (list = []));
    list.push({ uuid: row.uuid, jobId: row.jobId });
  }
  return result;
}

/** The jobs whose latest executed run is RUNNING, with when it started (few: the runs under way). */
export async function jobsRunning(db: Queryable): Promise<number[]> {
  const rows = await db.query<{ jobId: number }>(
    `SELECT DISTINCT r.job_id AS "jobId" FROM runs r WHERE r.state = 'RUNNING' AND ${EXECUTED}`,
  );
  return rows.map((row) => row.jobId);
}

/** How long each job's last `limit` completed executed runs took, ms, newest first. */
export async function completedDurations(
  db: Queryable,
  jobIds: readonly number[],
  limit: number,
): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>();
  if (jobIds.length === 0) return result;
  const rows = await db.query<{ jobId: number; ms: number }>(
    `SELECT wanted.job_id AS "jobId", done.ms FROM unnest($1::int[]) AS wanted(job_id)
     CROSS JOIN LATERAL (
       SELECT extract(epoch FROM r.ended_at - COALESCE(r.started_at, r.first_running_at)) * 1000 AS ms
       FROM runs r WHERE r.job_id = wanted.job_id AND r.state = 'COMPLETED' AND ${EXECUTED}
         AND r.ended_at IS NOT NULL AND COALESCE(r.started_at, r.first_running_at) IS NOT NULL
       ORDER BY ${RUN_ORDER} LIMIT $2) done`,
    [jobIds, limit],
  );
  for (const row of rows) {
    let list = result.get(row.jobId);
    if (!list) result.set(row.jobId, (list = []));
    list.push(Number(row.ms));
  }
  return result;
}

/** The newest `limit` nominal start times of each job's runs, newest first (jobs without any are absent). */
export async function nominalStarts(
  db: Queryable,
  jobIds: readonly number[],
  limit: number,
): Promise<Map<number, Date[]>> {
  const result = new Map<number, Date[]>();
  if (jobIds.length === 0) return result;
  const rows = await db.query<{ jobId: number; at: Date }>(
    `SELECT wanted.job_id AS "jobId", n.at FROM unnest($1::int[]) AS wanted(job_id)
     CROSS JOIN LATERAL (
       SELECT DISTINCT r.nominal_start_time AS at FROM runs r
       WHERE r.job_id = wanted.job_id AND r.nominal_start_time IS NOT NULL
       ORDER BY 1 DESC LIMIT $2) n`,
    [jobIds, limit],
  );
  for (const row of rows) {
    let list = result.get(row.jobId);
    if (!list) result.set(row.jobId, (list = []));
    list.push(row.at);
  }
  return result;
}

/** The stored alerts configuration document. */
export interface StoredAlertsConfig {
  readonly document: unknown;
  readonly updatedAt: Date;
  readonly updatedBy: string;
}

/** The alerts configuration in force, or undefined when none was ever set. */
export async function storedAlertsConfig(db: Queryable): Promise<StoredAlertsConfig | undefined> {
  const [row] = await db.query<StoredAlertsConfig>(
    'SELECT document, updated_at AS "updatedAt", updated_by AS "updatedBy" FROM alerts_config WHERE id = 1',
  );
  return row;
}

/** Sets the alerts configuration in force. */
export async function storeAlertsConfig(
  tx: Queryable,
  document: unknown,
  at: Date,
  by: string,
): Promise<void> {
  await tx.query(
    `INSERT INTO alerts_config (id, document, updated_at, updated_by) VALUES (1, $1, $2, $3)
     ON CONFLICT (id) DO UPDATE SET document = $1, updated_at = $2, updated_by = $3`,
    [JSON.stringify(document), at, by],
  );
}
