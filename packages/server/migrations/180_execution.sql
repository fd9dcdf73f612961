-- Whether a run executed (ingest/execution.ts: executed, skipped, reused, no-op; NULL when no event said, which
-- counts as executed) and the time of the event that said so, and whether an assertion result is of a check that
-- did not run (ingest/assertions.ts). Analyses count neither a non-executed run nor a skipped result.
ALTER TABLE runs ADD COLUMN execution text;
ALTER TABLE runs ADD COLUMN execution_at timestamptz;
ALTER TABLE dq_assertions ADD COLUMN skipped boolean NOT NULL DEFAULT false;

-- The rows stored before, by the rules of those modules for dbt-ol, whose runs carry a dbt_version facet: an
-- unsuccessful result without counts is a test dbt did not run, and a run with such a result and no error-severity
-- failure was skipped (its FAIL came from them). Keep these in step with the modules.
UPDATE dq_assertions a SET skipped = true
WHERE NOT a.success AND a.expected IS NULL AND a.actual IS NULL
  AND EXISTS (SELECT 1 FROM run_facets f WHERE f.run_uuid = a.run_uuid AND f.name = 'dbt_version');
UPDATE runs r SET execution = 'skipped', execution_at = r.updated_at
WHERE EXISTS (SELECT 1 FROM dq_assertions a WHERE a.run_uuid = r.uuid AND a.skipped)
  AND NOT EXISTS (SELECT 1 FROM dq_assertions a WHERE a.run_uuid = r.uuid AND NOT a.skipped AND NOT a.success
                    AND lower(coalesce(a.severity, '')) <> 'warn');
