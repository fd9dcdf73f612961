/**
 * What one incident transition tells its recipients, as plain data: the input of every message renderer. The
 * incident engine builds one {@link IncidentNotice} per transition (opened, updated, acknowledged, resolved) and
 * stores it with the outbox rows it causes, in the event's transaction; everything after that is a pure function
 * of it, so a retry or another replica renders the very same bytes.
 *
 * The identifiers here are what makes at-least-once delivery safe for receivers: a webhook's `webhook-id` and an
 * e-mail's `Message-ID` are derived from the incident and transition ids alone.
 */
import { Closed, StringEnum, Time, Type, type Static } from '../core/json-schema.js';
import { signalKinds } from './config-schema.js';

/** A job or dataset, by the spec's namespace and name. */
export const NodeRefSchema = Closed({ namespace: Type.String(), name: Type.String() });
export type NodeRef = Static<typeof NodeRefSchema>;

/** What happened to the incident. */
export const TRANSITION_KINDS = ['opened', 'updated', 'acknowledged', 'resolved'] as const;
export type TransitionKind = (typeof TRANSITION_KINDS)[number];

/** The transition a notice is about. */
export const IncidentTransitionSchema = Closed({
  id: Type.String({
    description:
      "Unique within the incident and stable across retries and replicas (the transition's number)",
  }),
  kind: StringEnum(TRANSITION_KINDS),
  at: Time({ description: 'When it happened' }),
  by: Type.Optional(Type.String({ description: 'Who acknowledged or resolved it, when a person did' })),
  note: Type.Optional(
    Type.String({ description: 'A note given with it, or what changed, or why it resolved by itself' }),
  ),
});
export type IncidentTransition = Static<typeof IncidentTransitionSchema>;

/** A failed assertion, as a data quality facet names it. */
export const AssertionRefSchema = Closed({ name: Type.String(), column: Type.Optional(Type.String()) });
export type AssertionRef = Static<typeof AssertionRefSchema>;

/** The root cause: a job's run (failed, overdue, missing) or a dataset's failed assertion. */
export const RootCauseSchema = Type.Union([
  Closed({
    kind: Type.Literal('job'),
    job: NodeRefSchema,
    runId: Type.Optional(Type.String({ description: 'The failed or overdue run; none for a missing run' })),
    errorMessage: Type.Optional(Type.String()),
    expectedBy: Type.Optional(Time({ description: 'For an overdue or missing run: when it was due' })),
  }),
  Closed({
    kind: Type.Literal('dataset'),
    dataset: NodeRefSchema,
    assertion: AssertionRefSchema,
    job: Type.Optional(NodeRefSchema),
    runId: Type.Optional(Type.String({ description: 'The run that reported the assertion' })),
    errorMessage: Type.Optional(Type.String()),
  }),
]);
export type RootCause = Static<typeof RootCauseSchema>;

/** A downstream dataset or job the root cause reaches. */
export const ImpactedNodeSchema = Closed({
  namespace: Type.String(),
  name: Type.String(),
  depth: Type.Integer({ description: 'Hops from the root cause, 1 for its direct outputs' }),
  columns: Type.Optional(
    Type.Array(Type.String(), { description: 'At column precision, the columns reached' }),
  ),
});
export type ImpactedNode = Static<typeof ImpactedNodeSchema>;

/** Where a recipient is told. */
export const RecipientAddressSchema = Type.Union([
  Closed({ channel: Type.String() }),
  Closed({ email: Type.String() }),
]);
export type RecipientAddress = Static<typeof RecipientAddressSchema>;

const nodeType = StringEnum(['job', 'dataset'] as const);

/** Why a recipient is told. */
export const RecipientReasonSchema = Type.Union([
  Closed({ kind: Type.Literal('owns-root'), owner: Type.String(), node: NodeRefSchema, nodeType }),
  Closed({
    kind: Type.Literal('owns-impacted'),
    owner: Type.String(),
    node: NodeRefSchema,
    nodeType,
    depth: Type.Integer(),
    columns: Type.Optional(Type.Array(Type.String())),
  }),
  Closed({ kind: Type.Literal('rule'), rule: Type.String() }),
]);
export type RecipientReason = Static<typeof RecipientReasonSchema>;

/** One address told of the transition, once, with every reason it has. */
export const RecipientSchema = Closed({
  address: RecipientAddressSchema,
  reasons: Type.Array(RecipientReasonSchema),
});
export type Recipient = Static<typeof RecipientSchema>;

/** The datasets and jobs downstream of the root cause. */
export const ImpactedSchema = Closed({
  datasets: Type.Array(ImpactedNodeSchema),
  jobs: Type.Array(ImpactedNodeSchema),
});

/** Everything a message about one incident transition says. */
export const IncidentNoticeSchema = Closed({
  incidentId: Type.String(),
  signal: StringEnum(signalKinds),
  openedAt: Time({ description: 'When the incident opened' }),
  transition: IncidentTransitionSchema,
  rootCause: RootCauseSchema,
  impacted: ImpactedSchema,
  recipients: Type.Array(RecipientSchema),
});
export type IncidentNotice = Static<typeof IncidentNoticeSchema>;

/** Links into the explorer; all absent when no explorer URL is configured. */
export interface NoticeLinks {
  readonly incident?: string;
  readonly root?: string;
  readonly run?: string;
  /** Everything downstream of the root, as the explorer's impact view shows it. */
  readonly impact?: string;
}

const seg = encodeURIComponent;

/**
 * The explorer's addresses for a notice, following the web app's routes (`packages/web/src/paths.ts`): namespaces
 * and names are whole, percent-encoded path segments, since `postgres://host:5432` contains slashes.
 */
export function noticeLinks(notice: IncidentNotice, explorerUrl: string | undefined): NoticeLinks {
  if (explorerUrl === undefined) return {};
  const base = explorerUrl.replace(/\/+$/, '');
  const root = notice.rootCause;
  const node = root.kind === 'job' ? root.job : root.dataset;
  const type = root.kind === 'job' ? 'jobs' : 'datasets';
  const nodeId = `${root.kind}:${node.namespace}:${node.name}`;
  return {
    incident: `${base}/incidents/${seg(notice.incidentId)}`,
    root: `${base}/${type}/${seg(node.namespace)}/${seg(node.name)}`,
    ...(root.runId === undefined ? {} : { run: `${base}/runs/${seg(root.runId)}` }),
    impact: `${base}/impact?node=${seg(nodeId).replace(/%3A/g, ':').replace(/%2F/g, '/')}`,
  };
}

/** The explorer's address of a dataset or job. */
export function nodeLink(
  explorerUrl: string | undefined,
  type: 'job' | 'dataset',
  node: NodeRef,
): string | undefined {
  if (explorerUrl === undefined) return undefined;
  return `${explorerUrl.replace(/\/+$/, '')}/${type}s/${seg(node.namespace)}/${seg(node.name)}`;
}

/** A node as people read it: `namespace/name`, the spec's naming of a dataset's URI. */
export const nodeLabel = (node: NodeRef): string => `${node.namespace}/${node.name}`;

/** The `webhook-id` of a transition: the same for every attempt, every replica and every channel. */
export const webhookId = (notice: IncidentNotice): string =>
  `hw_${idPart(notice.incidentId)}.${idPart(notice.transition.id)}`;

/**
 * The `Message-ID` of a transition's e-mail, without angle brackets. The opening's is the incident's own, so every
 * later transition can name it in `In-Reply-To` and `References` without knowing what was sent before.
 */
export function emailMessageId(notice: IncidentNotice, domain: string): string {
  const incident = `incident.${idPart(notice.incidentId)}`;
  return notice.transition.kind === 'opened'
    ? `${incident}@${domain}`
    : `${incident}.${idPart(notice.transition.id)}@${domain}`;
}

/** The `Message-ID` of the incident's opening e-mail, the root of its thread. */
export const emailThreadId = (notice: IncidentNotice, domain: string): string =>
  `incident.${idPart(notice.incidentId)}@${domain}`;

/** Keeps ids within the characters every header and Message-ID allows; others are written as `=XX`. */
const idPart = (id: string): string =>
  [...new TextEncoder().encode(id)]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9_-]/.test(char) ? char : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');

/** The headline of a notice: what broke, in a few words. */
export function noticeHeadline(notice: IncidentNotice): string {
  const root = notice.rootCause;
  switch (notice.signal) {
    case 'run_failed':
      return `Run failed: ${nodeLabel(rootNode(notice))}`;
    case 'assertion_failed':
      return root.kind === 'dataset'
        ? `Assertion failed: ${root.assertion.name} on ${nodeLabel(root.dataset)}`
        : `Assertion failed: ${nodeLabel(rootNode(notice))}`;
    case 'run_overdue':
      return `Run overdue: ${nodeLabel(rootNode(notice))}`;
    case 'run_missing':
      return `Run missing: ${nodeLabel(rootNode(notice))}`;
  }
}

/** The transition in words: `Opened`, `Acknowledged by ann`, `Resolved`. */
export function transitionLabel(transition: IncidentTransition): string {
  const verb = { opened: 'Opened', updated: 'Updated', acknowledged: 'Acknowledged', resolved: 'Resolved' }[
    transition.kind
  ];
  return transition.by === undefined ? verb : `${verb} by ${transition.by}`;
}

/** The root cause's own node: the job, or the dataset of an assertion. */
export const rootNode = (notice: IncidentNotice): NodeRef =>
  notice.rootCause.kind === 'job' ? notice.rootCause.job : notice.rootCause.dataset;

/** The root cause in one sentence. */
export function rootCauseSentence(notice: IncidentNotice): string {
  const root = notice.rootCause;
  const run = root.runId === undefined ? '' : ` (run ${root.runId})`;
  if (root.kind === 'dataset') {
    const column = root.assertion.column === undefined ? '' : ` on column ${root.assertion.column}`;
    const by = root.job === undefined ? '' : `, reported by ${nodeLabel(root.job)}${run}`;
    return `The assertion ${root.assertion.name}${column} of ${nodeLabel(root.dataset)} failed${by}.`;
  }
  const job = nodeLabel(root.job);
  switch (notice.signal) {
    case 'run_overdue':
      return `The run of ${job}${run} has not completed${root.expectedBy === undefined ? '' : ` (due by ${root.expectedBy})`}.`;
    case 'run_missing':
      return `${job} has not run${root.expectedBy === undefined ? '' : ` (due by ${root.expectedBy})`}.`;
    default:
      return `The run of ${job}${run} failed.`;
  }
}

/** Why a recipient is told, in one phrase: `team:finance owns finance/orders (2 hops downstream)`. */
export function reasonPhrase(reason: RecipientReason): string {
  switch (reason.kind) {
    case 'owns-root':
      return `${reason.owner} owns ${nodeLabel(reason.node)}, the root cause`;
    case 'owns-impacted': {
      const hops = `${hopsPhrase(reason.depth)} downstream`;
      const columns =
        reason.columns === undefined || reason.columns.length === 0
          ? ''
          : `, columns ${reason.columns.join(', ')}`;
      return `${reason.owner} owns ${nodeLabel(reason.node)} (${hops}${columns})`;
    }
    case 'rule':
      return `the rule ${reason.rule} sends here`;
  }
}

/** Impacted datasets and jobs in one list, nearest first (datasets before jobs at one depth, then by name). */
export function impactedInOrder(notice: IncidentNotice): { node: ImpactedNode; type: 'dataset' | 'job' }[] {
  return [
    ...byDepth(notice.impacted.datasets).map((node) => ({ node, type: 'dataset' as const })),
    ...byDepth(notice.impacted.jobs).map((node) => ({ node, type: 'job' as const })),
  ].sort((a, b) => a.node.depth - b.node.depth);
}

/** The distinct reasons of some recipients, as phrases, in their order. */
export const reasonPhrases = (recipients: readonly Recipient[]): string[] => [
  ...new Set(recipients.flatMap((recipient) => recipient.reasons.map(reasonPhrase))),
];

/** `1 hop`, `5 hops`. */
export const hopsPhrase = (depth: number): string => `${depth} ${depth === 1 ? 'hop' : 'hops'}`;

/** Impacted nodes nearest first, then by name: a stable order, so that the same notice renders the same bytes. */
export function byDepth(nodes: readonly ImpactedNode[]): ImpactedNode[] {
  return [...nodes].sort(
    (a, b) => a.depth - b.depth || compare(a.namespace, b.namespace) || compare(a.name, b.name),
  );
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Whether two addresses are the same: channels by name, e-mail addresses without regard to case. */
export function sameAddress(a: RecipientAddress, b: RecipientAddress): boolean {
  if ('channel' in a) return 'channel' in b && a.channel === b.channel;
  return 'email' in b && a.email.toLowerCase() === b.email.toLowerCase();
}
