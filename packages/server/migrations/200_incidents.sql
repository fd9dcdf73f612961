-- Incidents (alerts/incidents.ts): one per root cause and signal kind while it is open, the signals grouped into
-- it, its transitions (each with the notice it sent) and the outbox of deliveries those transitions cause. Every
-- write here is made by the writer, fenced by its epoch (store/queries/incidents.ts), so replicas never open an
-- incident twice or send a delivery that another writer owns.
CREATE TABLE incidents (
  id text PRIMARY KEY,
  -- '<signal kind> <root nodeId>': at most one open incident per key.
  key text NOT NULL,
  signal text NOT NULL,
  root_node text NOT NULL,
  -- The root's namespace, for namespace scopes.
  namespace text NOT NULL,
  -- open, acknowledged or resolved.
  status text NOT NULL,
  opened_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  acknowledged_at timestamptz,
  acknowledged_by text,
  resolved_at timestamptz,
  resolved_by text,
  -- The newest notice's root cause, impact and recipients, as the list and the explorer show them.
  summary jsonb NOT NULL,
  -- When the last `updated` transition was sent: the throttle's reference.
  last_update_sent_at timestamptz
);
CREATE UNIQUE INDEX incidents_open_key ON incidents (key) WHERE status <> 'resolved';
CREATE INDEX incidents_opened ON incidents (opened_at DESC, id DESC);

-- Each signal belongs to the incident it was first grouped into, for good: a signal already told of (a failed
-- run, one failing result of an assertion) never opens another incident, even once that one is resolved.
CREATE TABLE incident_signals (
  signal_key text PRIMARY KEY,
  incident_id text NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  kind text NOT NULL,
  node text NOT NULL,
  at timestamptz NOT NULL,
  detail jsonb NOT NULL
);
CREATE INDEX incident_signals_incident ON incident_signals (incident_id);

CREATE TABLE incident_transitions (
  incident_id text NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  kind text NOT NULL,
  at timestamptz NOT NULL,
  actor text,
  note text,
  -- The IncidentNotice (alerts/notice.ts) the transition sent, or would have sent when throttled.
  notice jsonb NOT NULL,
  throttled boolean NOT NULL DEFAULT false,
  PRIMARY KEY (incident_id, seq)
);

-- One row per channel a transition goes to: written with the transition, sent at least once by the writer.
CREATE TABLE alert_outbox (
  -- '<incident>/<transition>/<channel>'.
  key text PRIMARY KEY,
  incident_id text NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  transition_seq integer NOT NULL,
  channel text NOT NULL,
  -- The rendered OutboundMessage (alerts/delivery-plan.ts): every attempt sends these bytes.
  message jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  -- The epoch of the writer sending the row now (NULL once the attempt is recorded): a row an earlier writer
  -- took and never recorded is sent again at once by the next.
  claimed_epoch bigint,
  sent_at timestamptz,
  -- Set when it will not be sent: the channel answered 410, refused it, or is no longer configured.
  given_up_at timestamptz,
  last_status integer,
  last_error text
);
CREATE INDEX alert_outbox_due ON alert_outbox (next_attempt_at) WHERE sent_at IS NULL AND given_up_at IS NULL;
CREATE INDEX alert_outbox_incident ON alert_outbox (incident_id, transition_seq);

-- Channels disabled because their receiver answered 410 Gone, as configured then (a channel given a new URL is
-- enabled again).
CREATE TABLE alert_channels_disabled (
  channel text PRIMARY KEY,
  fingerprint text NOT NULL,
  at timestamptz NOT NULL,
  reason text NOT NULL
);

-- The schedule a job keeps (its runs' nominal start times), newest first: what a missing run is judged against.
CREATE INDEX runs_job_nominal ON runs (job_id, nominal_start_time DESC) WHERE nominal_start_time IS NOT NULL;

-- The alerts configuration in force, as written (its ${ENV_VAR} references unresolved): set by the writer from
-- `serve --alerts-config FILE` or through the API, read by the server that becomes the writer.
CREATE TABLE alerts_config (
  id integer PRIMARY KEY CHECK (id = 1),
  document jsonb NOT NULL,
  updated_at timestamptz NOT NULL,
  updated_by text NOT NULL
);
