-- The job-level lineage of now, compact: one row per job, dataset and direction with the latest eventTime an event
-- named it. The server loads this (not the per-event history) at start, so start-up and memory follow the current
-- graph, not the number of events stored. The history (dataset_sightings) answers questions about the past.
CREATE TABLE lineage_edges (
  job_id integer NOT NULL REFERENCES jobs (id),
  -- 0: the job reads the dataset, 1: it writes it
  direction smallint NOT NULL,
  dataset_id integer NOT NULL REFERENCES datasets (id),
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (job_id, direction, dataset_id)
);

INSERT INTO lineage_edges (job_id, direction, dataset_id, last_seen)
SELECT job_id, kind, dataset_id, max(event_time) FROM dataset_sightings
WHERE job_id IS NOT NULL AND kind IN (0, 1)
GROUP BY job_id, kind, dataset_id;

-- Lineage as of a time walks the history from either end of an edge.
CREATE INDEX dataset_sightings_edges_by_job ON dataset_sightings (job_id, kind, dataset_id, event_time)
  WHERE job_id IS NOT NULL AND kind IN (0, 1);
CREATE INDEX dataset_sightings_edges_by_dataset ON dataset_sightings (dataset_id, kind, job_id, event_time)
  WHERE job_id IS NOT NULL AND kind IN (0, 1);
-- Completions of a job's runs (the cutoff that retires edges).
CREATE INDEX job_sightings_completions ON job_sightings (job_id, event_time)
  WHERE kind = 0 AND (event_type = 'COMPLETE' OR run_uuid IS NULL);
