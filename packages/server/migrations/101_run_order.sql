-- Run lists and latestRun order runs by start, else by end (RUN_ORDER in src/store/queries/runs.ts): a run that
-- only reported COMPLETE sorts by when it ended, and a run known only from a child's parent facet (no times) last.
DROP INDEX IF EXISTS runs_job_started;
CREATE INDEX runs_job_started ON runs (job_id, (COALESCE(started_at, first_running_at, ended_at)) DESC NULLS LAST, created_at DESC);
