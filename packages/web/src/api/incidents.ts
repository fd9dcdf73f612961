/**
 * Incidents as the server answers them (`/api/v1/incidents`): the server decides what is broken, what it reaches
 * and who is told; this module only finds the incidents that touch a node and puts the answer into words.
 */
import { datasetNodeId, jobNodeId } from '../paths.js';
import type {
  Incident,
  IncidentDelivery,
  IncidentImpact,
  IncidentSignal,
  IncidentSignalKind,
  IncidentStatus,
  IncidentTransition,
  Recipient,
  RecipientAddress,
} from './types.js';

/** The incidents a list shows: open or acknowledged (the default), resolved, or all. */
export type IncidentFilter = 'unresolved' | 'resolved' | 'all';

/** What a person may do to an incident, as the server's routes name it. */
export type IncidentAction = 'acknowledge' | 'resolve';

/** An incident's status in words. */
export const statusLabels: Record<IncidentStatus, string> = {
  open: 'Open',
  acknowledged: 'Acknowledged',
  resolved: 'Resolved',
};

/** What broke at a root, in words; the same words head the incident page. */
export const signalLabels: Record<IncidentSignalKind, string> = {
  run_failed: 'Run failed',
  assertion_failed: 'Assertion failed',
  run_overdue: 'Run overdue',
  run_missing: 'Run missing',
};

/** A transition of an incident's timeline, in words. */
export const transitionLabels: Record<IncidentTransition['kind'], string> = {
  opened: 'Opened',
  updated: 'Updated',
  acknowledged: 'Acknowledged',
  resolved: 'Resolved',
};

/** `1 hop`, `5 hops`. */
export const hops = (depth: number): string => `${depth} ${depth === 1 ? 'hop' : 'hops'}`;

/** `1 dataset`, `3 jobs`. */
const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** A dataset or job the root cause reaches, with its node id. */
export interface ImpactedEntry {
  readonly type: 'dataset' | 'job';
  readonly nodeId: string;
  readonly node: IncidentImpact;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The datasets and jobs an incident reaches in one list: nearest first, datasets before jobs, then by name. */
export function impactedInOrder(incident: Pick<Incident, 'impacted'>): ImpactedEntry[] {
  const entries: ImpactedEntry[] = [
    ...incident.impacted.datasets.map((node) => ({
      type: 'dataset' as const,
      nodeId: datasetNodeId(node.namespace, node.name),
      node,
    })),
    ...incident.impacted.jobs.map((node) => ({
      type: 'job' as const,
      nodeId: jobNodeId(node.namespace, node.name),
      node,
    })),
  ];
  return entries.sort(
    (a, b) =>
      a.node.depth - b.node.depth ||
      Number(a.type === 'job') - Number(b.type === 'job') ||
      compareText(a.node.name, b.node.name) ||
      compareText(a.node.namespace, b.node.namespace),
  );
}

/** `3 datasets, 2 jobs`; `nothing downstream` when the root reaches nothing. */
export function impactedSummary(incident: Pick<Incident, 'impacted'>): string {
  const { datasets, jobs } = incident.impacted;
  if (datasets.length + jobs.length === 0) return 'nothing downstream';
  return `${count(datasets.length, 'dataset')}, ${count(jobs.length, 'job')}`;
}

/** An unresolved incident that touches a node: its root (`depth` 0) or among what it reaches. */
export interface NodeIncident {
  readonly incident: Incident;
  /** Hops from the root cause; 0 when the node is the root. */
  readonly depth: number;
  readonly columns?: readonly string[] | undefined;
}

/**
 * The unresolved incidents whose root is one of `nodeIds` (`dataset:<ns>:<name>` or `job:<ns>:<name>`: a dataset
 * and the dataset it is an alias of, say) or that list one among the datasets and jobs they impact, in the
 * server's order (newest first); each once, at its nearest.
 */
export function incidentsOfNode(incidents: readonly Incident[], nodeIds: readonly string[]): NodeIncident[] {
  const wanted = new Set(nodeIds);
  const found: NodeIncident[] = [];
  for (const incident of incidents) {
    if (incident.status === 'resolved') continue;
    if (wanted.has(incident.root)) {
      found.push({ incident, depth: 0 });
      continue;
    }
    // impactedInOrder is nearest first.
    const reached = impactedInOrder(incident).find((entry) => wanted.has(entry.nodeId));
    if (reached) found.push({ incident, depth: reached.node.depth, columns: reached.node.columns });
  }
  return found;
}

/** A dataset that unresolved incidents break, with each incident and how far up its root is. */
export interface BrokenDataset {
  readonly nodeId: string;
  readonly namespace: string;
  readonly name: string;
  readonly breaks: readonly { readonly incident: Incident; readonly depth: number }[];
}

/**
 * Every dataset the unresolved incidents break, the furthest downstream first (what people look at: dashboards,
 * marts), then by name; a dataset whose own assertions fail counts at depth 0. Each lists its incidents, nearest
 * root first.
 */
export function brokenDatasets(incidents: readonly Incident[]): BrokenDataset[] {
  const byNode = new Map<
    string,
    { nodeId: string; namespace: string; name: string; breaks: { incident: Incident; depth: number }[] }
  >();
  const add = (namespace: string, name: string, incident: Incident, depth: number) => {
    const nodeId = datasetNodeId(namespace, name);
    let entry = byNode.get(nodeId);
    if (!entry) byNode.set(nodeId, (entry = { nodeId, namespace, name, breaks: [] }));
    if (!entry.breaks.some((b) => b.incident.id === incident.id)) entry.breaks.push({ incident, depth });
  };
  for (const incident of incidents) {
    if (incident.status === 'resolved') continue;
    const root = incident.rootCause;
    if (root.kind === 'dataset') add(root.dataset.namespace, root.dataset.name, incident, 0);
    for (const node of incident.impacted.datasets) add(node.namespace, node.name, incident, node.depth);
  }
  const deepest = (d: BrokenDataset) => Math.max(...d.breaks.map((b) => b.depth));
  return [...byNode.values()]
    .map((entry) => ({ ...entry, breaks: entry.breaks.sort((a, b) => a.depth - b.depth) }))
    .sort((a, b) => deepest(b) - deepest(a) || compareText(a.name, b.name));
}

/** What broke at the root, as the end of "broken by …": `daily_etl.load_orders failing`. */
export function causePhrase(incident: Pick<Incident, 'signal' | 'rootCause'>): string {
  const root = incident.rootCause;
  if (root.kind === 'dataset') {
    const column = root.assertion.column === undefined ? '' : ` on column ${root.assertion.column}`;
    return `the assertion ${root.assertion.name}${column} failing on ${root.dataset.name}`;
  }
  switch (incident.signal) {
    case 'run_overdue':
      return `${root.job.name} running late`;
    case 'run_missing':
      return `${root.job.name} not running when due`;
    default:
      return `${root.job.name} failing`;
  }
}

/** `broken by daily_etl.load_orders failing, 5 hops up`; at depth 0 the root is the dataset itself. */
export const brokenByPhrase = (incident: Pick<Incident, 'signal' | 'rootCause'>, depth: number): string =>
  `broken by ${causePhrase(incident)}${depth === 0 ? '' : `, ${hops(depth)} up`}`;

/** Where a recipient is told: `channel finance`, or the e-mail address. */
export const addressText = (address: RecipientAddress): string =>
  'channel' in address ? `channel ${address.channel}` : address.email;

/** Who an incident's latest transition told: `channel finance, ann@example.com`, or `nobody`. */
export const recipientsSummary = (recipients: readonly Recipient[]): string =>
  recipients.length === 0 ? 'nobody' : recipients.map((r) => addressText(r.address)).join(', ');

/**
 * A delivery's state in words: `sent 14 Mar 09:01`, `pending after 2 attempts, next 09:05: HTTP 503 …`, `given up
 * after 5 attempts: …`. `time` formats the timestamps.
 */
export function deliveryText(delivery: IncidentDelivery, time: (iso: string | null) => string): string {
  const attempts = count(delivery.attempts, 'attempt');
  const last = [
    delivery.lastStatus === null ? undefined : `HTTP ${delivery.lastStatus}`,
    delivery.lastError ?? undefined,
  ]
    .filter((part) => part !== undefined)
    .join(', ');
  switch (delivery.state) {
    case 'sent':
      return `sent ${time(delivery.sentAt)}${delivery.attempts > 1 ? ` after ${attempts}` : ''}`;
    case 'given-up':
      return `given up ${time(delivery.givenUpAt)} after ${attempts}${last ? `: ${last}` : ''}`;
    case 'pending':
      return delivery.attempts === 0
        ? `pending, not tried yet`
        : `pending after ${attempts}, next ${time(delivery.nextAttemptAt)}${last ? `: ${last}` : ''}`;
  }
}

/** The parts of a signal's `detail` the explorer shows; the server keeps it an open object, so each is checked. */
export interface SignalDetail {
  readonly runId?: string;
  readonly errorMessage?: string;
  /** `freshness(loaded_at): expected 24h, actual 49h` */
  readonly assertion?: string;
  /** The node id of the job whose run reported the assertion. */
  readonly reportedBy?: string;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** What a signal's detail says: its run, its error, the failing assertion and who reported it. */
export function signalDetail(signal: Pick<IncidentSignal, 'detail'>): SignalDetail {
  const detail = signal.detail;
  const assertion =
    typeof detail.assertion === 'object' && detail.assertion !== null
      ? (detail.assertion as Record<string, unknown>)
      : undefined;
  const runId = text(detail.runId);
  const errorMessage = text(detail.errorMessage);
  const reportedBy = text(detail.reportedBy);
  let described: string | undefined;
  if (assertion) {
    const name = text(assertion.name) ?? text(assertion.assertion) ?? 'an assertion';
    const column = text(assertion.column);
    const expected = text(assertion.expected);
    const actual = text(assertion.actual);
    described =
      `${name}${column ? `(${column})` : ''}` +
      (expected !== undefined || actual !== undefined
        ? `: expected ${expected ?? '—'}, actual ${actual ?? '—'}`
        : '');
  }
  return {
    ...(runId !== undefined ? { runId } : {}),
    ...(errorMessage !== undefined ? { errorMessage } : {}),
    ...(described !== undefined ? { assertion: described } : {}),
    ...(reportedBy !== undefined ? { reportedBy } : {}),
  };
}
