-- Raw events are most of what ingest writes. The default TOAST compression (pglz) costs more CPU per write
-- than anything else the batch does; lz4 is several times cheaper. Where the server lacks lz4 (the embedded
-- store), keep bodies uncompressed instead: disk is cheaper than the write path's CPU.
DO $$ BEGIN ALTER TABLE events ALTER COLUMN body SET COMPRESSION lz4; EXCEPTION WHEN OTHERS THEN ALTER TABLE events ALTER COLUMN body SET STORAGE EXTERNAL; END $$;
