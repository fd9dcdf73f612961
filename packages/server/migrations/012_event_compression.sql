-- Raw events on a PostgreSQL built without lz4 (the embedded store's binaries, PGlite) were kept uncompressed by
-- 004, to spare the CPU of the default compression (pglz) on every write. At 8 KB stored for an event of 6.3 KB,
-- against 2 KB with lz4, that was the wrong trade for a store on the user's own disk: such events are compressed
-- with pglz from now on. Rows already stored stay as they are.
DO $$ BEGIN IF (SELECT attcompression FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'body') <> 'l' THEN ALTER TABLE events ALTER COLUMN body SET STORAGE EXTENDED; END IF; END $$;
