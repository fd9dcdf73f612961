-- The lineage graph is built from dataset_sightings and job_sightings (migration 005, whose backfill read job_io):
-- job_io and jobs.io_cutoff are no longer written or read.
DROP TABLE job_io;
ALTER TABLE jobs DROP COLUMN io_cutoff;
