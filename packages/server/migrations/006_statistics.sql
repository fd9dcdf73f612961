-- Planner statistics are for the columns queries filter, join and sort on. Sampling the large text and jsonb
-- values (event bodies, facets, schemas) costs most of an ANALYZE and helps no plan: leave them out. This matters
-- most on the embedded store, which analyses on its own thread between writes (src/store/statistics.ts).
ALTER TABLE events ALTER COLUMN body SET STATISTICS 0;
ALTER TABLE dataset_versions ALTER COLUMN fields SET STATISTICS 0;
ALTER TABLE job_versions ALTER COLUMN inputs SET STATISTICS 0;
ALTER TABLE job_versions ALTER COLUMN outputs SET STATISTICS 0;
ALTER TABLE run_io ALTER COLUMN facets SET STATISTICS 0;
ALTER TABLE run_facets ALTER COLUMN facet SET STATISTICS 0;
ALTER TABLE job_facets ALTER COLUMN facet SET STATISTICS 0;
ALTER TABLE dataset_facets ALTER COLUMN facet SET STATISTICS 0;
ALTER TABLE dq_metrics ALTER COLUMN metrics SET STATISTICS 0;
ALTER TABLE dataset_sightings ALTER COLUMN facets SET STATISTICS 0;
ALTER TABLE dataset_sightings ALTER COLUMN io_facets SET STATISTICS 0;
ALTER TABLE job_sightings ALTER COLUMN facets SET STATISTICS 0;
ALTER TABLE job_sightings ALTER COLUMN run_facets SET STATISTICS 0;
