import type { Queryable } from '../db.js';
import type { FeedEntry } from '../read-delta.js';

/** Entries read from the commit feed per query while catching up. */
export const FEED_PAGE = 200;

/** Commit-feed entries older than this are pruned by the writer (a replica further behind reloads its state). */
const FEED_RETENTION = '15 minutes';

/** One entry of the commit feed (migration 010). */
export interface FeedRow {
  readonly seq: number;
  readonly committed_at: Date;
  readonly entry: FeedEntry;
}

/** The seq of the commit feed's last entry, or null while the feed is empty. */
export async function readFeedEnd(db: Queryable): Promise<number | null> {
  const [row] = await db.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM commit_feed');
  return row?.seq ?? null;
}

/** The feed's entries after seq `after` up to seq `until` (included), in order, at most {@link FEED_PAGE}. */
export function readFeedPage(db: Queryable, after: number, until: number): Promise<FeedRow[]> {
  return db.query<FeedRow>(
    `SELECT seq, committed_at, entry FROM commit_feed WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT ${FEED_PAGE}`,
    [after, until],
  );
}

/** Deletes the feed's entries older than its retention, always keeping the last one (it numbers the next). */
export async function pruneFeed(db: Queryable): Promise<void> {
  await db.query(
    `DELETE FROM commit_feed WHERE committed_at < now() - interval '${FEED_RETENTION}'
         AND seq < (SELECT max(seq) FROM commit_feed)`,
  );
}

/** Where the writer takes requests, as it advertised in the writer lease; undefined if it did not. */
export async function readLeaderUrl(db: Queryable): Promise<string | undefined> {
  const [row] = await db.query<{ leader_url: string | null }>(
    'SELECT leader_url FROM writer_lease WHERE id = 1',
  );
  return row?.leader_url ?? undefined;
}

/** The store's replica secret (migration 014), or undefined if it has none. */
export async function readReplicaSecret(db: Queryable): Promise<string | undefined> {
  const rows = await db.query<{ secret: string }>('SELECT secret FROM replica_secret');
  return rows[0]?.secret;
}
