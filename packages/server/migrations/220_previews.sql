-- Previews: a pull request's pipeline run apart from production (src/servers/previews.ts). Each preview's events
-- are kept in a store of its own (a schema hw_preview_<name> beside these tables, or a folder of the embedded
-- store's data dir); this table is the registry: which events are a preview's (its job namespace, or its pull
-- request and commit in sourceCodeLocation), which production namespace it stands in for, how its datasets'
-- names map onto production's, and when it expires. One row per preview: it grows with open pull requests.
CREATE TABLE previews (
  name text PRIMARY KEY,
  job_namespace text NOT NULL UNIQUE,
  base_namespace text NOT NULL,
  pull_request integer,
  commit_sha text,
  mappings jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  created_by text NOT NULL,
  expires_at timestamptz
);
