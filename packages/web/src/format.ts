/** Formatting shared by every view; one place so that a duration reads the same everywhere. */

/** `72000` → `1 min 12 s`; `null` → `—`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** `2048` → `2.0 KiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

/** A timestamp in the reader's locale and time zone; `—` when absent. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

/** `3 h ago`, for lists where recency matters more than the exact time. */
export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const ms = now - new Date(iso).getTime();
  if (!Number.isFinite(ms)) return iso;
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/**
 * The part of a dotted or slashed name a person recognises at a glance: `analytics.marts.revenue_daily` →
 * `revenue_daily`, `s3://raw/orders.csv` → `orders.csv` (a file's extension is kept).
 */
export function shortName(name: string): string {
  const afterSlash = name.replace(/\/+$/, '').split('/').at(-1) ?? name;
  if (afterSlash !== name) return afterSlash || name;
  const parts = name.split('.');
  return parts.length > 1 ? parts.at(-1) || name : name;
}

/**
 * The owners an `ownership` facet (of a dataset or a job) names, as `team:data (team), ana`; `—` when none.
 */
export function formatOwners(facets: Record<string, unknown> | null | undefined): string {
  const owners = (facets?.ownership as { owners?: { name?: string; type?: string }[] } | undefined)?.owners;
  return formatOwnerList(
    (Array.isArray(owners) ? owners : []).filter(
      (o): o is { name: string; type?: string } => typeof o?.name === 'string',
    ),
  );
}

/** Owners as `team:data (team), ana`; `—` when there are none. */
export function formatOwnerList(owners: readonly { name: string; type?: string | null }[]): string {
  if (owners.length === 0) return '—';
  return owners.map((o) => `${o.name}${o.type ? ` (${o.type.toLowerCase()})` : ''}`).join(', ');
}
