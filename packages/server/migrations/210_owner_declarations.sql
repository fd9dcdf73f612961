-- Owners declared through the API (PUT .../datasets/{dataset}/owners and .../jobs/{job}/owners), beside the ones
-- producers report in ownership facets: a person's statement of who owns a node, which events never touch. Each
-- declaration replaces the node's list and is kept (one row each), so that who owned a node at a time can be
-- answered; an empty list withdraws the declaration. Human-made, so the table grows with people's edits, not
-- with history.
CREATE TABLE owner_declarations (
  id bigserial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('dataset', 'job')),
  node_id integer NOT NULL,
  owners jsonb NOT NULL,
  declared_at timestamptz NOT NULL,
  declared_by text NOT NULL
);

CREATE INDEX owner_declarations_node ON owner_declarations (kind, node_id, declared_at DESC, id DESC);
