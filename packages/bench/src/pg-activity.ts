import pg from 'pg';

/** A point-in-time reading of a PostgreSQL database's write activity. */
export interface WriteSnapshot {
  /** A transaction id taken now: every transaction that writes takes the next one, so ids count commits. */
  readonly xid: number;
  /** Exact row count of each table. */
  readonly rows: ReadonlyMap<string, number>;
}

/** What the server wrote between two snapshots, per ingested event. */
export interface WriteActivity {
  readonly transactions: number;
  /** Events per write transaction: how well group commit groups. */
  readonly eventsPerTransaction: number;
  /** Rows added (inserted minus deleted) per event, over all tables. */
  readonly rowsPerEvent: number;
  /** The same per table, largest first. */
  readonly rowsPerEventByTable: readonly { readonly table: string; readonly rows: number }[];
}

/**
 * Reads the transaction counter and exact table sizes of the benchmark database. pg_stat_* counters would be
 * cheaper but PostgreSQL flushes them lazily (up to 10 s late); transaction ids and count(*) are exact now.
 */
export async function snapshotWrites(url: string): Promise<WriteSnapshot> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    const rows = new Map<string, number>();
    if (tables.rows.length > 0) {
      const counts = await client.query<{ name: string; count: string }>(
        tables.rows
          .map(({ name }) => `SELECT '${name}' AS name, count(*)::text AS count FROM ${name}`)
          .join(' UNION ALL '),
      );
      for (const row of counts.rows) rows.set(row.name, Number(row.count));
    }
    const xid = await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
    return { xid: Number(xid.rows[0]?.xid ?? 0), rows };
  } finally {
    await client.end();
  }
}

/** The activity between two snapshots, for `events` ingested events. */
export function writeActivity(before: WriteSnapshot, after: WriteSnapshot, events: number): WriteActivity {
  // Ids strictly between the two snapshots' own ids belong to the server's transactions.
  const transactions = Math.max(0, after.xid - before.xid - 1);
  const perEvent = (rows: number) => (events === 0 ? 0 : rows / events);
  const byTable = [...after.rows]
    .map(([table, count]) => ({ table, rows: perEvent(count - (before.rows.get(table) ?? 0)) }))
    .filter((entry) => entry.rows !== 0)
    .sort((a, b) => b.rows - a.rows);
  return {
    transactions,
    eventsPerTransaction: transactions === 0 ? 0 : events / transactions,
    rowsPerEvent: byTable.reduce((sum, entry) => sum + entry.rows, 0),
    rowsPerEventByTable: byTable,
  };
}
