-- The retention window (serve --retention-days, see src/store/retention.ts). A pass first finds, among the history
-- older than the window, the events that still answer a question about a time inside it (the witnesses: the
-- latest sighting of each edge, version, facet ... before the cutoff), and keeps their hashes here; it is emptied
-- at the start of each pass, so it holds at most one row per such fact, on disk rather than in memory.
CREATE TABLE retention_keep (
  event_hash uuid PRIMARY KEY
);

-- The earliest event time whose history is complete: time travel to before it is refused (HISTORY_EXPIRED), since
-- a store missing the older events would answer a truncated past. Raised by each pass before it deletes anything.
CREATE TABLE retention_horizon (
  single boolean PRIMARY KEY DEFAULT true CHECK (single),
  history_from timestamptz NOT NULL
);
