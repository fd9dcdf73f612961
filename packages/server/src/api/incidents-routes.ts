/**
 * /api/v1/incidents: the incidents the engine (alerts/incidents.ts) opened, one with its signals and timeline,
 * acknowledging and resolving them; /api/v1/alerts/dry-run: who would be told of what is broken now. A caller sees
 * the incidents rooted in namespaces they may read, and acts on those in namespaces they may write.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { IncidentDescription } from '../alerts/incidents.js';
import {
  noticeHeadline,
  reasonPhrase,
  webhookId,
  type IncidentNotice,
  type Recipient,
} from '../alerts/notice.js';
import { HeadwaterError } from '../core/errors.js';
import { Closed, Nullable, OpenObject, Ref, Time, Type } from '../core/json-schema.js';
import { recordAudit } from '../store/queries/audit.js';
import {
  incidentById,
  incidentDeliveries,
  incidentSignals,
  incidentTransitions,
  listIncidents,
  type IncidentRow,
} from '../store/queries/incidents.js';
import type { AppDeps } from './deps.js';
import { parseJsonBody, storedText } from './json-body.js';
import { pageParams } from './paging.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import {
  DryRunGroupSchema,
  INCIDENT_STATUSES,
  IncidentDetailSchema,
  IncidentSchema,
  type IncidentDetailJson,
  type IncidentJson,
  type IncidentRecipientJson,
} from './schemas/incidents.js';

const TAGS = ['Incidents'];
const iso = (time: Date | null) => (time === null ? null : time.toISOString());

/** What the incident routes need: the store, the engine and the alerts configuration in force. */
export type IncidentRouteDeps = Pick<AppDeps, 'db' | 'state' | 'incidents' | 'alertsSettings'>;

/** A recipient with its reasons in words. */
const recipientJson = (recipient: Recipient): IncidentRecipientJson => ({
  address: recipient.address,
  reasons: recipient.reasons,
  why: recipient.reasons.map(reasonPhrase),
});

/** An incident as the API shows it. */
function incidentJson(row: IncidentRow): IncidentJson {
  const summary = row.summary as IncidentDescription;
  return {
    id: row.id,
    status: row.status,
    signal: row.signal as IncidentJson['signal'],
    root: row.rootNode,
    namespace: row.namespace,
    headline: noticeHeadline({ signal: row.signal, rootCause: summary.rootCause } as IncidentNotice),
    openedAt: row.openedAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    acknowledgedAt: iso(row.acknowledgedAt),
    acknowledgedBy: row.acknowledgedBy,
    resolvedAt: iso(row.resolvedAt),
    resolvedBy: row.resolvedBy,
    rootCause: summary.rootCause,
    impacted: summary.impacted,
    recipients: summary.recipients.map(recipientJson),
  };
}

/** Registers the incident routes. */
export const incidentRoutes = fastifyPlugin<IncidentRouteDeps>(registerIncidentRoutes, {
  name: 'incident-routes',
});

function registerIncidentRoutes(
  app: FastifyInstance,
  deps: IncidentRouteDeps,
  done: (error?: Error) => void,
): void {
  const { db } = deps;
  app.addSchema(IncidentSchema);

  /** The incident, when the caller may read its namespace (else as not found). */
  const visibleIncident = async (request: FastifyRequest, id: string): Promise<IncidentRow> => {
    const row = await incidentById(db, id);
    if (row === undefined || !request.principal.canRead(row.namespace))
      throw new HeadwaterError(
        'NOT_FOUND',
        `No incident ${JSON.stringify(id)} (or not visible to this caller).`,
      );
    return row;
  };

  app.get<{
    Querystring: {
      status?: (typeof INCIDENT_STATUSES)[number] | 'unresolved';
      limit: number;
      offset: number;
    };
  }>(
    '/api/v1/incidents',
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'List incidents, newest first',
        description:
          'One incident per root cause and signal kind: a failed run (after its retry grace) or failing ' +
          'assertions, with what they break downstream grouped into it. Only incidents rooted in namespaces the ' +
          'caller may read.',
        querystring: {
          type: 'object',
          properties: {
            status: {
              type: 'string',
              enum: [...INCIDENT_STATUSES, 'unresolved'],
              description: 'Only incidents in this state (unresolved: open or acknowledged)',
            },
            ...pageParams(),
          },
        },
        response: responses(
          Closed({ incidents: Type.Array(Ref(IncidentSchema)), totalCount: Type.Integer() }),
          400,
        ),
      },
    },
    async (request) => {
      const { status, limit, offset } = request.query;
      const principal = request.principal;
      const namespaces = principal.readsAll
        ? undefined
        : [...deps.state.namespaces.keys()].filter((name) => principal.canRead(name));
      const { incidents, total } = await listIncidents(db, { status, namespaces, limit, offset });
      return { incidents: incidents.map(incidentJson), totalCount: total };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/incidents/:id',
    {
      ...plainJson,
      schema: {
        tags: TAGS,
        summary: 'One incident: its signals and timeline, with each transition’s deliveries',
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        response: responses(IncidentDetailSchema, 404),
      },
    },
    async (request): Promise<IncidentDetailJson> => {
      const row = await visibleIncident(request, request.params.id);
      const [signals, transitions, deliveries] = await Promise.all([
        incidentSignals(db, row.id),
        incidentTransitions(db, row.id),
        incidentDeliveries(db, row.id),
      ]);
      return {
        incident: incidentJson(row),
        signals: signals.map((signal) => ({
          key: signal.key,
          kind: signal.kind as IncidentJson['signal'],
          node: signal.node,
          at: signal.at.toISOString(),
          detail: signal.detail as Record<string, unknown>,
        })),
        timeline: transitions.map((transition) => ({
          id: String(transition.seq),
          kind: transition.kind as IncidentDetailJson['timeline'][number]['kind'],
          at: transition.at.toISOString(),
          by: transition.actor,
          note: transition.note,
          throttled: transition.throttled,
          webhookId: webhookId(transition.notice as IncidentNotice),
          deliveries: deliveries
            .filter((delivery) => delivery.transitionSeq === transition.seq)
            .map((delivery) => ({
              channel: delivery.channel,
              state: delivery.sentAt ? 'sent' : delivery.givenUpAt ? 'given-up' : 'pending',
              attempts: delivery.attempts,
              nextAttemptAt:
                delivery.sentAt || delivery.givenUpAt ? null : delivery.nextAttemptAt.toISOString(),
              sentAt: iso(delivery.sentAt),
              givenUpAt: iso(delivery.givenUpAt),
              lastStatus: delivery.lastStatus,
              lastError: delivery.lastError,
            })),
        })),
      };
    },
  );

  for (const [action, kind] of [
    ['acknowledge', 'acknowledged'],
    ['resolve', 'resolved'],
  ] as const) {
    app.post<{ Params: { id: string }; Body: { note?: string } }>(
      `/api/v1/incidents/:id/${action}`,
      {
        ...plainJson,
        config: { access: 'write' },
        preValidation: parseJsonBody,
        schema: {
          tags: TAGS,
          summary: action === 'acknowledge' ? 'Acknowledge an incident' : 'Resolve an incident',
          description:
            `${action === 'acknowledge' ? 'Someone is on it: the' : 'It is over: the'} recipients of the ` +
            'incident are told, and the audit log records who did it. Needs the writer role in the namespace ' +
            "of the incident's root.",
          params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
          body: {
            type: 'object',
            properties: { note: { ...storedText, maxLength: 2000 } },
            additionalProperties: false,
          },
          response: responses(Ref(IncidentSchema), 400, 403, 404, 409),
        },
      },
      async (request) => {
        const row = await visibleIncident(request, request.params.id);
        const principal = request.principal;
        if (!principal.canWrite(row.namespace))
          throw new HeadwaterError(
            'FORBIDDEN',
            `The caller (${principal.name}) may read ${row.namespace} but lacks the writer role there.`,
          );
        const note = request.body.note;
        const updated = await deps.incidents.act(row.id, kind, principal.subject, note);
        await recordAudit(db, {
          at: new Date(),
          actor: principal.subject,
          action: `incidents.${action}`,
          target: row.id,
          status: 200,
          address: request.ip,
          detail: note,
        });
        return incidentJson(updated);
      },
    );
  }

  app.get(
    '/api/v1/alerts/dry-run',
    {
      ...plainJson,
      config: { access: 'admin', global: true },
      schema: {
        tags: TAGS,
        summary: 'Who would be told of what is broken now, and why, without sending anything',
        description:
          'Reads every signal now, groups them by root cause and applies the alerts configuration: for each ' +
          'broken root, the rules that apply, the impacted datasets and jobs, each recipient with its reasons, ' +
          'the channels a transition would go through and the recipients no channel reaches.',
        response: responses(Closed({ groups: Type.Array(DryRunGroupSchema) }), 409),
      },
    },
    async () => {
      const groups = await deps.incidents.dryRun();
      return {
        groups: groups.map(({ description, ...group }) => ({
          ...group,
          rootCause: description.rootCause,
          impacted: description.impacted,
          recipients: description.recipients.map(recipientJson),
          unroutable: group.unroutable.map((entry) => ({
            recipient: recipientJson(entry.recipient),
            reason: entry.reason,
          })),
        })),
      };
    },
  );
  const configResponse = Closed({
    document: Type.Union([OpenObject(), Type.Null()], {
      description:
        'The configuration in force as written, its secrets redacted (${ENV_VAR} references shown); null when none is',
    }),
    updatedAt: Nullable(Time()),
    updatedBy: Nullable(
      Type.String({ description: 'Who put it in force (system:alerts-config-file for a file)' }),
    ),
  });
  const view = async () => {
    const current = await deps.alertsSettings.view();
    return {
      document: current.document as Record<string, unknown> | null,
      updatedAt: iso(current.updatedAt),
      updatedBy: current.updatedBy,
    };
  };

  app.get(
    '/api/v1/alerts/config',
    {
      ...plainJson,
      config: { access: 'admin', global: true },
      schema: {
        tags: TAGS,
        summary: 'The alerts configuration in force (channels, owners, rules), secrets redacted',
        response: responses(configResponse, 403),
      },
    },
    view,
  );

  app.put<{ Body: unknown }>(
    '/api/v1/alerts/config',
    {
      ...plainJson,
      config: { access: 'admin', global: true },
      preValidation: parseJsonBody,
      schema: {
        tags: TAGS,
        summary: 'Put another alerts configuration in force, at once (headwater alerts apply FILE)',
        description:
          'The body is the configuration as the YAML of serve --alerts-config holds it, as JSON. It is checked ' +
          'whole (400 lists every problem), stored, and in force on the writer from then on, for every replica ' +
          'that takes over, until a server starts with --alerts-config again. ${ENV_VAR} references are ' +
          "resolved in the writer's environment. Audited.",
        body: { type: 'object' },
        response: responses(configResponse, 400, 403),
      },
    },
    async (request) => {
      await deps.alertsSettings.apply(request.body, request.principal.subject);
      return view();
    },
  );
  done();
}
