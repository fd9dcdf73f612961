-- Dataset aliases (issue 12, item 8): an admin's declaration that one dataset is another, which the lineage and
-- column graphs join where they read edges (src/graph/aliases.ts). A table of its own rather than rows of
-- dataset_symlinks: symlinks are what producers' events said, rewritten by ingest from each event; an alias is an
-- administrator's repair, made and removed through the API and audited, and events never touch it. Each dataset
-- is an alias of at most one other (the key), and the API refuses chains and cycles, so every alias names its
-- canonical dataset directly.
CREATE TABLE dataset_aliases (
  dataset_id integer PRIMARY KEY REFERENCES datasets (id),
  target_id integer NOT NULL REFERENCES datasets (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text NOT NULL,
  CHECK (dataset_id <> target_id)
);

CREATE INDEX dataset_aliases_target ON dataset_aliases (target_id);
