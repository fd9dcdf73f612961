import type { Queryable } from '../db.js';

/** One audit entry: who did what to what, when, and how it was answered. */
export interface AuditEntry {
  readonly at: Date;
  /** The principal's subject ('key:<id>', 'oidc:<sub>', 'anonymous'). */
  readonly actor: string;
  /** 'DELETE /api/v1/namespaces/{namespace}', 'keys.create', 'auth.failure', ... */
  readonly action: string;
  /** What was acted on: the request path, a key id. */
  readonly target: string;
  /** The HTTP status answered (0 for the CLI). */
  readonly status: number;
  readonly address?: string | undefined;
  readonly detail?: string | undefined;
}

/** Appends an entry. */
export async function recordAudit(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.query(
    'INSERT INTO audit_log (at, actor, action, target, status, address, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [
      entry.at,
      entry.actor,
      entry.action.slice(0, 500),
      entry.target.slice(0, 2000),
      entry.status,
      entry.address ?? null,
      entry.detail?.slice(0, 2000) ?? null,
    ],
  );
}

/** Filters of {@link listAudit}. */
export interface AuditQuery {
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  readonly actor?: string | undefined;
  /** Entries whose action starts with this ('auth.' lists the refused credentials). */
  readonly action?: string | undefined;
  readonly limit: number;
  readonly offset: number;
}

/** Entries newest first, with the total matching the filters. */
export async function listAudit(
  db: Queryable,
  query: AuditQuery,
): Promise<{ entries: AuditEntry[]; totalCount: number }> {
  const where = `at >= $1 AND at <= $2 AND ($3::text IS NULL OR actor = $3) AND ($4::text IS NULL OR starts_with(action, $4))`;
  const params = [
    query.since ?? new Date(0),
    query.until ?? new Date('2100-01-01T00:00:00Z'),
    query.actor ?? null,
    query.action ?? null,
  ];
  const [entries, [count]] = await Promise.all([
    db.query<AuditEntry>(
      `SELECT at, actor, action, target, status, address, detail FROM audit_log WHERE ${where}
       ORDER BY at DESC, id DESC LIMIT $5 OFFSET $6`,
      [...params, query.limit, query.offset],
    ),
    db.query<{ count: number }>(`SELECT count(*)::int AS count FROM audit_log WHERE ${where}`, params),
  ]);
  return { entries, totalCount: count?.count ?? 0 };
}

/** An entry as JSON. */
export function auditJson(entry: AuditEntry) {
  return {
    at: entry.at.toISOString(),
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    status: entry.status,
    address: entry.address ?? null,
    detail: entry.detail ?? null,
  };
}
