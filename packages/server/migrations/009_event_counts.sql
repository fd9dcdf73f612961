-- Events stored per hour of eventTime and kind, kept by the writer in the statement that stores them. The events
-- page's totalCount adds up the hours its range covers and counts only the two partial hours at its ends, so it
-- costs what the range spans, not what the store holds.
CREATE TABLE event_counts (
  hour timestamptz NOT NULL,
  kind text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (hour, kind)
);

INSERT INTO event_counts (hour, kind, count)
SELECT date_bin('1 hour', event_time, TIMESTAMPTZ '2000-01-01T00:00:00Z'), kind, count(*) FROM events GROUP BY 1, 2;
