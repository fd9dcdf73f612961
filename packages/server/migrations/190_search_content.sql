-- The advanced search (/api/v2beta/search) also matches a dataset's field names and a job's SQL, as Marquez's
-- OpenSearch index does: trigram indexes on those texts, so that ILIKE '%q%' reads only the candidate rows.
-- Field names (nested ones too) as one JSON text per version: a candidate is then checked name by name.
CREATE INDEX dataset_versions_field_names_trgm ON dataset_versions
  USING gin ((jsonb_path_query_array(fields, '$.**.name')::text) gin_trgm_ops);
CREATE INDEX job_facets_sql_trgm ON job_facets USING gin ((facet ->> 'query') gin_trgm_ops) WHERE name = 'sql';
