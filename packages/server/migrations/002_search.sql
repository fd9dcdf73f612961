-- Trigram indexes so that search (ILIKE '%q%') does not scan every dataset and job.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX datasets_name_trgm ON datasets USING gin (name gin_trgm_ops);
CREATE INDEX jobs_name_trgm ON jobs USING gin (name gin_trgm_ops);
