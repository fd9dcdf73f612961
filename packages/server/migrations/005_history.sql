-- History for time travel (`asOf`). The model tables merge what events say into the present; these keep, for
-- every event, what it told each dataset and job, so that the model can be read back as of any event time: the
-- answer at t is the one a store holding only the events with eventTime <= t would give. Rows are keyed by the
-- event's hash, so deriving an already-stored event again (see src/store/writer.ts) adds nothing.

-- The code a run says it ran (its newest sourceCodeLocation): with what it read and wrote, its job version.
ALTER TABLE runs ADD COLUMN code_location text;
ALTER TABLE runs ADD COLUMN code_location_at timestamptz;
UPDATE runs r SET code_location = v.location, code_location_at = r.updated_at
FROM job_versions v WHERE v.id = r.job_version_id AND v.location IS NOT NULL;

-- One row per event and dataset it names.
CREATE TABLE dataset_sightings (
  dataset_id integer NOT NULL REFERENCES datasets (id),
  -- 0: read by a run or job, 1: written, 2: the dataset of a DatasetEvent, 3: only named as a column-lineage input
  kind smallint NOT NULL,
  event_hash uuid NOT NULL,
  event_time timestamptz NOT NULL,
  -- Arrival order (the event's id): events with equal eventTimes are decided as the writer decided them.
  seq bigint NOT NULL,
  job_id integer,
  run_uuid uuid,
  -- The dataset version the event named (for a run, the version it read or wrote).
  version_id bigint,
  -- The event described the dataset (schema, lifecycle, storage or symlinks), so its version became current.
  defines_version boolean NOT NULL,
  -- An output of a COMPLETE event or a DatasetEvent: the data changed (lastModifiedAt).
  modifies boolean NOT NULL,
  -- Facet name -> hash of the value the event gave (the value is in dataset_facets).
  facets jsonb NOT NULL,
  -- The run's input or output facets for the dataset (statistics, quality metrics), as the event gave them.
  io_facets jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (dataset_id, kind, event_hash)
);
CREATE INDEX dataset_sightings_time ON dataset_sightings (dataset_id, event_time);
CREATE INDEX dataset_sightings_run ON dataset_sightings (run_uuid) WHERE run_uuid IS NOT NULL;

-- One row per event of a job (kind 0), and per run event naming the job as its parent's job (kind 1).
CREATE TABLE job_sightings (
  job_id integer NOT NULL REFERENCES jobs (id),
  kind smallint NOT NULL,
  event_hash uuid NOT NULL,
  event_time timestamptz NOT NULL,
  seq bigint NOT NULL,
  -- The run of the event (kind 0), or the parent run it names (kind 1).
  run_uuid uuid,
  event_type text,
  -- The job version a JobEvent declared (a run's is what it read and wrote by then: see src/api/as-of.ts).
  version_id bigint,
  -- The job of the parent run the event named (kind 0).
  parent_job_id integer,
  -- Facet name -> hash, of the job's facets and of the run's facets (values in job_facets, run_facets).
  facets jsonb NOT NULL,
  run_facets jsonb NOT NULL,
  PRIMARY KEY (job_id, kind, event_hash)
);
CREATE INDEX job_sightings_time ON job_sightings (job_id, event_time);
CREATE INDEX job_sightings_run ON job_sightings (run_uuid, event_time) WHERE run_uuid IS NOT NULL;

-- Stores written before this migration: what the raw events and the merged tables still tell. Run events give
-- the run states; every job edge gets its first and last sighting, and every run's
-- dataset its last, so the current graph is unchanged. Facet values before now have no history.
INSERT INTO job_sightings (job_id, kind, event_hash, event_time, seq, run_uuid, event_type, version_id, parent_job_id,
                           facets, run_facets)
SELECT j.id, 0, e.hash, e.event_time, e.id, e.run_uuid, e.event_type,
       CASE WHEN e.kind = 'job' THEN j.current_version_id END, j.parent_job_id, '{}', '{}'
FROM events e
JOIN namespaces n ON n.name = e.job_namespace
JOIN jobs j ON j.namespace_id = n.id AND j.name = e.job_name
WHERE e.kind IN ('run', 'job')
ON CONFLICT DO NOTHING;

INSERT INTO dataset_sightings (dataset_id, kind, event_hash, event_time, seq, job_id, run_uuid, version_id,
                               defines_version, modifies, facets, io_facets)
SELECT io.dataset_id, io.direction, md5('run_io' || io.run_uuid || io.direction || io.dataset_id)::uuid,
       io.event_time, 0, r.job_id, io.run_uuid, io.dataset_version_id, true, io.direction = 1, '{}', io.facets
FROM run_io io JOIN runs r ON r.uuid = io.run_uuid
ON CONFLICT DO NOTHING;

INSERT INTO dataset_sightings (dataset_id, kind, event_hash, event_time, seq, job_id, run_uuid, version_id,
                               defines_version, modifies, facets)
SELECT e.dataset_id, e.direction, md5('job_io' || e.job_id || e.direction || e.dataset_id || s.which)::uuid,
       s.at, 0, e.job_id, NULL, NULL, false, false, '{}'
FROM job_io e CROSS JOIN LATERAL (VALUES ('first', e.first_seen), ('last', e.last_seen)) AS s(which, at)
ON CONFLICT DO NOTHING;
