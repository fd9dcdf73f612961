-- A data-quality assertion is identified by its name where the producer gives one, else by its type and column
-- (assertionIdentity in src/ingest/assertions.ts writes the same text for new rows). Two assertions of one type on
-- one column in a run are two rows, and a dataset's quality is the latest result of each identity from any run.
ALTER TABLE dq_assertions ADD COLUMN name text;
ALTER TABLE dq_assertions ADD COLUMN description text;
ALTER TABLE dq_assertions ADD COLUMN identity text;
UPDATE dq_assertions SET identity = 't:' || replace(replace(assertion, '\', '\\'), ':', '\:') || ':' ||
  replace(replace(column_name, '\', '\\'), ':', '\:');
ALTER TABLE dq_assertions ALTER COLUMN identity SET NOT NULL;
ALTER TABLE dq_assertions DROP CONSTRAINT dq_assertions_pkey;
ALTER TABLE dq_assertions ADD PRIMARY KEY (run_uuid, dataset_id, identity);
DROP INDEX IF EXISTS dq_assertions_dataset;
CREATE INDEX dq_assertions_identity ON dq_assertions (dataset_id, identity, event_time DESC);
