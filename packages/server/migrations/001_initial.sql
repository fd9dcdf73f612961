-- Headwater lineage store, version 1.
-- Ids of namespaces, sources, datasets, jobs and versions are assigned by the single writer process
-- (see src/store/writer.ts), so a batch of events turns into a fixed number of multi-row statements
-- with no round trip to learn generated keys. Times called *_at or *_time are OpenLineage eventTimes
-- unless named received_at: the model follows event time, never arrival order.

CREATE TABLE namespaces (
  id integer PRIMARY KEY,
  name text NOT NULL UNIQUE,
  owner_name text NOT NULL DEFAULT 'anonymous',
  description text,
  is_hidden boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE sources (
  id integer PRIMARY KEY,
  name text NOT NULL UNIQUE,
  type text NOT NULL,
  connection_url text NOT NULL,
  description text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Raw events exactly as received (body is the event's JSON text). hash identifies identical events.
CREATE TABLE events (
  id bigint PRIMARY KEY,
  hash uuid NOT NULL UNIQUE,
  kind text NOT NULL,
  event_type text,
  event_time timestamptz NOT NULL,
  run_uuid uuid,
  job_namespace text,
  job_name text,
  received_at timestamptz NOT NULL,
  body text NOT NULL
);
CREATE INDEX events_event_time ON events (event_time DESC, id DESC);
CREATE INDEX events_run_uuid ON events (run_uuid) WHERE run_uuid IS NOT NULL;

CREATE TABLE datasets (
  id integer PRIMARY KEY,
  namespace_id integer NOT NULL REFERENCES namespaces (id),
  name text NOT NULL,
  source_id integer NOT NULL REFERENCES sources (id),
  type text NOT NULL DEFAULT 'DB_TABLE',
  description text,
  current_version_id bigint,
  -- eventTime of the event that made current_version_id current: a late event never displaces a newer version.
  current_version_time timestamptz,
  lifecycle_state text,
  last_modified_at timestamptz,
  is_hidden boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (namespace_id, name)
);

-- A dataset version is addressed by what describes the dataset (schema, lifecycle state, storage, symlinks),
-- not by the run that wrote it: a rerun writing the same schema adds no version.
CREATE TABLE dataset_versions (
  id bigint PRIMARY KEY,
  dataset_id integer NOT NULL REFERENCES datasets (id),
  version uuid NOT NULL UNIQUE,
  fields jsonb NOT NULL,
  lifecycle_state text,
  created_at timestamptz NOT NULL,
  created_by_run uuid
);
CREATE INDEX dataset_versions_dataset ON dataset_versions (dataset_id, created_at DESC);

CREATE TABLE dataset_symlinks (
  dataset_id integer NOT NULL REFERENCES datasets (id),
  namespace text NOT NULL,
  name text NOT NULL,
  type text NOT NULL,
  PRIMARY KEY (dataset_id, namespace, name)
);

CREATE TABLE jobs (
  id integer PRIMARY KEY,
  namespace_id integer NOT NULL REFERENCES namespaces (id),
  name text NOT NULL,
  simple_name text NOT NULL,
  parent_job_id integer REFERENCES jobs (id),
  type text NOT NULL DEFAULT 'BATCH',
  integration text,
  job_type text,
  description text,
  location text,
  current_version_id bigint,
  current_version_time timestamptz,
  -- First event time of the newest COMPLETED run: an edge last seen before it was not named by that run, so it
  -- is retired from the current graph (it stays in history for time travel).
  io_cutoff timestamptz,
  is_hidden boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (namespace_id, name)
);
CREATE INDEX jobs_parent ON jobs (parent_job_id) WHERE parent_job_id IS NOT NULL;

CREATE TABLE job_versions (
  id bigint PRIMARY KEY,
  job_id integer NOT NULL REFERENCES jobs (id),
  version uuid NOT NULL UNIQUE,
  location text,
  inputs jsonb NOT NULL,
  outputs jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX job_versions_job ON job_versions (job_id, created_at DESC);

CREATE TABLE runs (
  uuid uuid PRIMARY KEY,
  external_id text,
  job_id integer NOT NULL REFERENCES jobs (id),
  parent_run_uuid uuid,
  job_version_id bigint,
  state text NOT NULL,
  transitioned_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz,
  first_running_at timestamptz,
  nominal_start_time timestamptz,
  nominal_end_time timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX runs_job ON runs (job_id, started_at DESC NULLS LAST, created_at DESC);
CREATE INDEX runs_parent ON runs (parent_run_uuid) WHERE parent_run_uuid IS NOT NULL;
CREATE INDEX runs_state ON runs (state, ended_at DESC);

-- Datasets a run read (direction 0) or wrote (1), the version it saw, and the per-run input/output facets
-- (statistics, quality metrics): these belong to the run, not to the dataset version.
CREATE TABLE run_io (
  run_uuid uuid NOT NULL,
  direction smallint NOT NULL,
  dataset_id integer NOT NULL REFERENCES datasets (id),
  dataset_version_id bigint,
  facets jsonb NOT NULL DEFAULT '{}',
  event_time timestamptz NOT NULL,
  PRIMARY KEY (run_uuid, direction, dataset_id)
);
CREATE INDEX run_io_dataset ON run_io (dataset_id, direction);

-- The job-level lineage graph: a job read (0) or wrote (1) a dataset, from first_seen to last_seen.
CREATE TABLE job_io (
  job_id integer NOT NULL REFERENCES jobs (id),
  direction smallint NOT NULL,
  dataset_id integer NOT NULL REFERENCES datasets (id),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (job_id, direction, dataset_id)
);
CREATE INDEX job_io_dataset ON job_io (dataset_id, direction);

CREATE TABLE column_lineage (
  output_dataset_id integer NOT NULL REFERENCES datasets (id),
  output_field text NOT NULL,
  input_dataset_id integer NOT NULL REFERENCES datasets (id),
  input_field text NOT NULL,
  transformation_type text NOT NULL,
  transformation_subtype text NOT NULL,
  transformation_description text,
  masking boolean NOT NULL DEFAULT false,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (output_dataset_id, output_field, input_dataset_id, input_field, transformation_type, transformation_subtype)
);
CREATE INDEX column_lineage_input ON column_lineage (input_dataset_id, input_field);

-- Facet history, one row per distinct value (hash) of a facet on an entity; the latest merged view is the
-- row with the newest event_time per name.
CREATE TABLE run_facets (
  run_uuid uuid NOT NULL,
  name text NOT NULL,
  hash bigint NOT NULL,
  facet jsonb NOT NULL,
  event_time timestamptz NOT NULL,
  PRIMARY KEY (run_uuid, name, hash)
);

CREATE TABLE job_facets (
  job_id integer NOT NULL REFERENCES jobs (id),
  name text NOT NULL,
  hash bigint NOT NULL,
  facet jsonb NOT NULL,
  event_time timestamptz NOT NULL,
  run_uuid uuid,
  PRIMARY KEY (job_id, name, hash)
);

CREATE TABLE dataset_facets (
  dataset_id integer NOT NULL REFERENCES datasets (id),
  name text NOT NULL,
  hash bigint NOT NULL,
  facet jsonb NOT NULL,
  event_time timestamptz NOT NULL,
  run_uuid uuid,
  PRIMARY KEY (dataset_id, name, hash)
);

CREATE TABLE dq_assertions (
  run_uuid uuid NOT NULL,
  dataset_id integer NOT NULL REFERENCES datasets (id),
  assertion text NOT NULL,
  column_name text NOT NULL,
  success boolean NOT NULL,
  severity text,
  expected text,
  actual text,
  event_time timestamptz NOT NULL,
  PRIMARY KEY (run_uuid, dataset_id, assertion, column_name)
);
CREATE INDEX dq_assertions_dataset ON dq_assertions (dataset_id, event_time DESC);

CREATE TABLE dq_metrics (
  run_uuid uuid NOT NULL,
  dataset_id integer NOT NULL REFERENCES datasets (id),
  metrics jsonb NOT NULL,
  event_time timestamptz NOT NULL,
  PRIMARY KEY (run_uuid, dataset_id)
);

CREATE TABLE tags (
  name text PRIMARY KEY,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO tags (name, description) VALUES
  ('PII', 'Personally identifiable information'),
  ('SENSITIVE', 'Contains sensitive information');

CREATE TABLE dataset_tags (
  dataset_id integer NOT NULL REFERENCES datasets (id),
  tag text NOT NULL REFERENCES tags (name),
  tagged_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset_id, tag)
);

CREATE TABLE dataset_field_tags (
  dataset_id integer NOT NULL REFERENCES datasets (id),
  field text NOT NULL,
  tag text NOT NULL REFERENCES tags (name),
  tagged_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset_id, field, tag)
);

CREATE TABLE job_tags (
  job_id integer NOT NULL REFERENCES jobs (id),
  tag text NOT NULL REFERENCES tags (name),
  tagged_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, tag)
);
