-- A dataset's quality metrics over time are read by dataset (GET .../datasets/{dataset}/quality).
CREATE INDEX IF NOT EXISTS dq_metrics_dataset ON dq_metrics (dataset_id);
