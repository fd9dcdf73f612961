/** The answers of /api/v1/incidents and /api/v1/alerts: incidents, their signals, timeline and deliveries. */
import {
  Closed,
  Nullable,
  OpenObject,
  Shared,
  StringEnum,
  Time,
  Type,
  type Static,
} from '../../core/json-schema.js';
import { signalKinds } from '../../alerts/config-schema.js';
import {
  ImpactedSchema,
  RecipientAddressSchema,
  RecipientReasonSchema,
  RootCauseSchema,
  TRANSITION_KINDS,
} from '../../alerts/notice.js';

export const INCIDENT_STATUSES = ['open', 'acknowledged', 'resolved'] as const;

/** A recipient as the API shows it: the notice's, with each reason also in words (as messages say it). */
export const IncidentRecipientSchema = Closed({
  address: RecipientAddressSchema,
  reasons: Type.Array(RecipientReasonSchema),
  why: Type.Array(Type.String(), { description: 'Each reason in words, in the order of `reasons`' }),
});
export type IncidentRecipientJson = Static<typeof IncidentRecipientSchema>;

/** An incident as lists show it. */
export const IncidentSchema = Shared('Incident', {
  id: Type.String(),
  status: StringEnum(INCIDENT_STATUSES),
  signal: StringEnum(signalKinds, { description: "The root's signal" }),
  root: Type.String({ description: "The root cause's nodeId (a job, or a dataset with failing assertions)" }),
  namespace: Type.String({ description: "The root's namespace" }),
  headline: Type.String({ description: 'What broke, in a few words' }),
  openedAt: Time(),
  updatedAt: Time(),
  acknowledgedAt: Nullable(Time()),
  acknowledgedBy: Nullable(Type.String()),
  resolvedAt: Nullable(Time()),
  resolvedBy: Nullable(Type.String()),
  rootCause: RootCauseSchema,
  impacted: ImpactedSchema,
  recipients: Type.Array(IncidentRecipientSchema, { description: 'Who its latest transition told, and why' }),
});
export type IncidentJson = Static<typeof IncidentSchema>;

/** A signal grouped into an incident. */
export const IncidentSignalSchema = Closed({
  key: Type.String({ description: 'run:<run id>, or assertion:<dataset id>:<assertion identity>:<run id>' }),
  kind: StringEnum(signalKinds),
  node: Type.String({ description: 'The nodeId of the job or dataset' }),
  at: Time({ description: "When it happened: the run's end, the result's time" }),
  detail: OpenObject({ description: 'The run id, error message, assertion and reporting job' }),
});

/** One channel's delivery of a transition. */
export const DeliverySchema = Closed({
  channel: Type.String(),
  state: StringEnum(['pending', 'sent', 'given-up'] as const),
  attempts: Type.Integer(),
  nextAttemptAt: Nullable(Time(), { description: 'While pending' }),
  sentAt: Nullable(Time()),
  givenUpAt: Nullable(Time()),
  lastStatus: Nullable(Type.Integer({ description: "The receiver's last HTTP status" })),
  lastError: Nullable(Type.String()),
});

/** One transition of an incident, with what it sent. */
export const TransitionSchema = Closed({
  id: Type.String(),
  kind: StringEnum(TRANSITION_KINDS),
  at: Time(),
  by: Nullable(Type.String()),
  note: Nullable(Type.String()),
  throttled: Type.Boolean({ description: 'Recorded but not sent: within the rules’ throttle' }),
  webhookId: Type.String({ description: 'The webhook-id every webhook delivery of it carries' }),
  deliveries: Type.Array(DeliverySchema),
});

/** One incident with its signals and timeline. */
export const IncidentDetailSchema = Closed({
  incident: IncidentSchema,
  signals: Type.Array(IncidentSignalSchema),
  timeline: Type.Array(TransitionSchema),
});
export type IncidentDetailJson = Static<typeof IncidentDetailSchema>;

/** One broken root in a dry run. */
export const DryRunGroupSchema = Closed({
  key: Type.String(),
  signal: StringEnum(signalKinds),
  root: Type.String(),
  signals: Type.Array(Type.String()),
  incident: Nullable(Type.String(), { description: 'The open incident it belongs to, if any' }),
  rules: Type.Array(Type.String(), { description: 'The rules that apply' }),
  rootCause: RootCauseSchema,
  impacted: ImpactedSchema,
  recipients: Type.Array(IncidentRecipientSchema),
  channels: Type.Array(Type.String(), { description: 'The channels a transition would be sent through' }),
  unroutable: Type.Array(Closed({ recipient: IncidentRecipientSchema, reason: Type.String() }), {
    description: 'Recipients no channel reaches, and why',
  }),
});
