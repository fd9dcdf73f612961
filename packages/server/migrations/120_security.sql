-- API keys and the audit log (see src/security/). A key is `hw_<id>_<secret>`: `id` finds the row, and only a
-- salted SHA-256 of the secret is kept. The secret is 256 random bits, so no hash can be reversed or guessed
-- faster than the key itself; a slow password hash (bcrypt, argon2) would add nothing but cost per request.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  name text NOT NULL,
  role text NOT NULL,
  -- Namespace patterns the key covers ('*' matches any run of characters).
  namespaces text[] NOT NULL,
  salt bytea NOT NULL,
  hash bytea NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz
);

-- Every write other than ingest (deletes, tags, owners, keys) and every refused credential: who, when, what.
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target text NOT NULL,
  status integer NOT NULL,
  address text,
  detail text
);
CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC);
