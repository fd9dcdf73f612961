-- The present cutoff of each job (see graph/lineage-graph.ts and store/job-cutoffs.ts): the completion with the
-- latest start among its completed runs and JobEvents, kept by the writer with every batch. Start-up reads this
-- table instead of working out every job's cutoff from the history. A row is stale when the run that set it
-- learnt of an earlier event: the cutoff is then worked out from the history again (by the next batch, or by a
-- start that comes first). key is NULL for a job that has not completed.
CREATE TABLE job_cutoffs (
  job_id integer PRIMARY KEY REFERENCES jobs (id),
  key text,
  first timestamptz,
  stale boolean NOT NULL DEFAULT false
);

-- Existing jobs start stale: the first start works their cutoffs out as before, the first batch stores them.
INSERT INTO job_cutoffs (job_id, stale) SELECT id, true FROM jobs;
