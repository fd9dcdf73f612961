-- The sightings that carry a run's input facets for a dataset: the few that the dataset answers merge in (see
-- withInputFacets in store/queries/facets.ts), found without reading every event that ever read the dataset.
CREATE INDEX dataset_sightings_input_facets ON dataset_sightings (dataset_id, event_time)
  WHERE kind = 0 AND io_facets <> '{}'::jsonb;
