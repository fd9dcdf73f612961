/**
 * The types of dataset and job Marquez knows, and so the only ones the store holds: a dataset is a STREAM when
 * the legacy API said so, else a DB_TABLE; a job is a STREAM when its jobType facet's processingType is
 * STREAMING, else a BATCH, and the legacy API may also make it a SERVICE.
 */
export const DATASET_TYPES = ['DB_TABLE', 'STREAM'] as const;
export type DatasetType = (typeof DATASET_TYPES)[number];

export const JOB_TYPES = ['BATCH', 'STREAM', 'SERVICE'] as const;
export type JobType = (typeof JOB_TYPES)[number];
