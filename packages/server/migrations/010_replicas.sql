-- Replicas on one PostgreSQL (see src/replica/). One server writes at a time: the writer holds a session advisory
-- lock and, on taking it, raises the lease's epoch. Every write the writer makes carries its epoch, and
-- headwater_commit refuses it once another writer has raised the epoch since (fencing: an old writer that was
-- paused and lost its lock writes nothing after a new one took over). The FOR SHARE lock makes a takeover wait for
-- a write already under way.
CREATE TABLE writer_lease (
  id smallint PRIMARY KEY CHECK (id = 1),
  epoch bigint NOT NULL,
  leader_url text,
  since timestamptz NOT NULL DEFAULT now()
);

INSERT INTO writer_lease (id, epoch) VALUES (1, 0);

-- The commit feed: what each committed write changed for the read side, in commit order, without gaps (seq is
-- the last one plus one, under the writer's fencing). Replicas LISTEN on headwater_commit and read the entries
-- after the last one they applied. Old entries are pruned.
CREATE TABLE commit_feed (
  seq bigint PRIMARY KEY,
  epoch bigint NOT NULL,
  committed_at timestamptz NOT NULL DEFAULT now(),
  entry jsonb NOT NULL
);

CREATE INDEX commit_feed_committed_at ON commit_feed (committed_at);

CREATE FUNCTION headwater_commit(writer_epoch bigint) RETURNS bigint LANGUAGE plpgsql AS $$ DECLARE current_epoch bigint; next_seq bigint; BEGIN SELECT epoch INTO current_epoch FROM writer_lease WHERE id = 1 FOR SHARE; IF current_epoch IS DISTINCT FROM writer_epoch THEN RAISE EXCEPTION 'fenced: writer epoch % is over, another Headwater server writes with epoch %', writer_epoch, current_epoch USING ERRCODE = 'HW409'; END IF; SELECT coalesce(max(seq), 0) + 1 INTO next_seq FROM commit_feed; PERFORM pg_notify('headwater_commit', next_seq::text); RETURN next_seq; END $$;
