-- Every terminal state a run's events reported, as bits (COMPLETED 1, ABORTED 2, FAILED 4): a run that reported
-- more than one (the Spark listener sends FAIL, then COMPLETE) is shown as contradictory; its state is the most
-- severe. Existing runs are filled in from their stored events.
ALTER TABLE runs ADD COLUMN terminals_seen smallint NOT NULL DEFAULT 0;

UPDATE runs r SET terminals_seen = seen.bits
FROM (
  SELECT run_uuid, bit_or(CASE event_type WHEN 'COMPLETE' THEN 1 WHEN 'ABORT' THEN 2 WHEN 'FAIL' THEN 4 ELSE 0 END)::smallint AS bits
  FROM events
  WHERE run_uuid IS NOT NULL AND event_type IN ('COMPLETE', 'ABORT', 'FAIL')
  GROUP BY run_uuid
) seen
WHERE seen.run_uuid = r.uuid;
