-- The sightings that name a parent job (a run's parent facet, a JobEvent's headwater_parentJob facet): a job's
-- child jobs are read from them (childJobsOf in store/queries/analysis.ts), since a node may belong to several
-- pipelines while jobs.parent_job_id holds only the newest.
CREATE INDEX job_sightings_parent ON job_sightings (parent_job_id, event_time) WHERE parent_job_id IS NOT NULL;
