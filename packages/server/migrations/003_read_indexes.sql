-- Indexes for the Marquez-compatible read API (src/api/*-routes.ts, src/store/queries/).

-- A job's runs newest first, as the API orders them: by Marquez's startedAt (the earliest START, else the
-- earliest RUNNING), runs that never started last. Serves GET .../jobs/{job}/runs, latestRun(s) and the
-- lastRunStates filter (the newest run of each job).
CREATE INDEX runs_job_started ON runs (job_id, (COALESCE(started_at, first_running_at)) DESC NULLS LAST, created_at DESC);

-- JobVersion.latestRun: the newest run of a job version.
CREATE INDEX runs_job_version ON runs (job_version_id) WHERE job_version_id IS NOT NULL;

-- Job lists are ordered by updated_at DESC, within a namespace or across all of them.
CREATE INDEX jobs_namespace_updated ON jobs (namespace_id, updated_at DESC, id DESC);
CREATE INDEX jobs_updated ON jobs (updated_at DESC, id DESC);

-- Dashboard growth charts (/stats/jobs, /stats/datasets): rows created per hour or day.
CREATE INDEX jobs_created ON jobs (created_at);
CREATE INDEX datasets_created ON datasets (created_at);

-- Latest merged facets: per entity and name, the row with the newest event_time.
CREATE INDEX dataset_facets_latest ON dataset_facets (dataset_id, name, event_time DESC);
CREATE INDEX job_facets_latest ON job_facets (job_id, name, event_time DESC);
CREATE INDEX run_facets_latest ON run_facets (run_uuid, name, event_time DESC);
