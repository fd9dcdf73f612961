-- The credential replicas present to each other (src/security/replica-credential.ts): a follower that consumes
-- from Kafka hands the events to the writer's batch endpoint, and once auth is on the writer needs to know the
-- request comes from a replica. Every replica reads it from the store they share, so nothing is configured; anyone
-- who can read this table can read every event anyway. One row, made once, random (244 bits from two v4 uuids,
-- which PostgreSQL draws from its strong random source).
CREATE TABLE replica_secret (
  single boolean PRIMARY KEY DEFAULT true CHECK (single),
  secret text NOT NULL
);

INSERT INTO replica_secret (secret)
VALUES (replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
