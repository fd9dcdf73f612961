import { bulkWrite, ts, updateAll, type BulkColumn, type BulkWrite, type DerivedWrite } from './bulk.js';
import { RUNS_SQL } from './model-state.js';
import type { Db, Queryable } from './db.js';
import { cutoffWrites, type CutoffRow } from './job-cutoffs.js';
import type { FeedEntry, ReadDelta } from './read-delta.js';
import type { Changeset, FacetUpsert } from './changeset.js';
import type { NormalizedEvent } from '../model/normalize.js';
import { runStateOf, runTransitionedAt } from '../model/run-state.js';

const col = (name: string, type: BulkColumn['type']): BulkColumn => ({ name, type });

const EVENT_COLUMNS = [
  col('id', 'bigint'),
  col('hash', 'uuid'),
  col('kind', 'text'),
  col('event_type', 'text'),
  col('event_time', 'timestamptz'),
  col('run_uuid', 'uuid'),
  col('job_namespace', 'text'),
  col('job_name', 'text'),
  col('received_at', 'timestamptz'),
  col('body', 'text'),
];

/** Reads the runs in `runUuids` (the ones the writer's mirror lacks), for ModelState.addRuns. */
export async function readRuns(
  db: Queryable,
  runUuids: readonly string[],
): Promise<Record<string, unknown>[]> {
  if (runUuids.length === 0) return [];
  const [row] = await db.query<{ runs: Record<string, unknown>[] }>(
    `SELECT coalesce(json_agg(r), '[]') AS runs FROM (${RUNS_SQL('$1')}) r`,
    [runUuids],
  );
  return row?.runs ?? [];
}

/** The raw events, stored exactly as received. */
function eventsWrite(events: readonly NormalizedEvent[], firstId: number, receivedAt: number): BulkWrite {
  const received = ts(receivedAt);
  return {
    table: 'events',
    columns: EVENT_COLUMNS,
    rows: events.map((event, index) => [
      firstId + index,
      event.hash,
      event.kind,
      event.eventType ?? null,
      ts(event.eventTime),
      event.run?.uuid ?? null,
      event.job?.namespace ?? event.dataset?.namespace ?? null,
      event.job?.name ?? event.dataset?.name ?? null,
      received,
      event.body,
    ]),
    conflict: '(hash) DO NOTHING',
    returning: 'hash::text AS hash, kind, event_time',
  };
}

/**
 * Counts of the events inserted (w0's RETURNING: duplicates are not counted), by hour and kind: the events page's
 * totalCount adds these up instead of counting the table (see store/queries/events.ts).
 */
const EVENT_COUNTS_WRITE: DerivedWrite = {
  derived: `INSERT INTO event_counts AS t (hour, kind, count)
    SELECT date_bin('1 hour', event_time, TIMESTAMPTZ '2000-01-01T00:00:00Z'), kind, count(*) FROM w0 GROUP BY 1, 2
    ON CONFLICT (hour, kind) DO UPDATE SET count = t.count + EXCLUDED.count`,
};

const NAMESPACE_COLUMNS = [
  col('id', 'int'),
  col('name', 'text'),
  col('created_at', 'timestamptz'),
  col('updated_at', 'timestamptz'),
  col('is_hidden', 'boolean'),
];
const DATASET_COLUMNS = [
  col('id', 'int'),
  col('namespace_id', 'int'),
  col('name', 'text'),
  col('source_id', 'int'),
  col('description', 'text'),
  col('current_version_id', 'bigint'),
  col('current_version_time', 'timestamptz'),
  col('lifecycle_state', 'text'),
  col('last_modified_at', 'timestamptz'),
  col('is_hidden', 'boolean'),
  col('created_at', 'timestamptz'),
  col('updated_at', 'timestamptz'),
];
const JOB_COLUMNS = [
  col('id', 'int'),
  col('namespace_id', 'int'),
  col('name', 'text'),
  col('simple_name', 'text'),
  col('parent_job_id', 'int'),
  col('type', 'text'),
  col('integration', 'text'),
  col('job_type', 'text'),
  col('description', 'text'),
  col('location', 'text'),
  col('current_version_id', 'bigint'),
  col('current_version_time', 'timestamptz'),
  col('is_hidden', 'boolean'),
  col('created_at', 'timestamptz'),
  col('updated_at', 'timestamptz'),
];
const RUN_COLUMNS = [
  col('uuid', 'uuid'),
  col('external_id', 'text'),
  col('job_id', 'int'),
  col('parent_run_uuid', 'uuid'),
  col('job_version_id', 'bigint'),
  col('state', 'text'),
  col('transitioned_at', 'timestamptz'),
  col('started_at', 'timestamptz'),
  col('ended_at', 'timestamptz'),
  col('first_running_at', 'timestamptz'),
  col('nominal_start_time', 'timestamptz'),
  col('nominal_end_time', 'timestamptz'),
  col('created_at', 'timestamptz'),
  col('updated_at', 'timestamptz'),
  col('code_location', 'text'),
  col('code_location_at', 'timestamptz'),
  col('terminals_seen', 'smallint'),
  col('execution', 'text'),
  col('execution_at', 'timestamptz'),
];
const names = (columns: readonly BulkColumn[]) => columns.slice(1).map((column) => column.name);

/**
 * Writes raw events and the changeset derived from them (see derive/derive.ts) as ONE statement: it commits or
 * fails as a whole, so the raw events and the lineage model never disagree. Events already stored are skipped;
 * the hashes of those actually inserted are returned, with the batch's number in the commit feed (which takes
 * `delta` in the same statement, fenced by the writer's `epoch`). (Deriving an already-stored event again changes nothing:
 * every merge in the model is idempotent, so no read is needed to find duplicates first.)
 */
export async function writeBatch(
  db: Db,
  events: readonly NormalizedEvent[],
  firstEventId: number,
  receivedAt: number,
  changes: Changeset,
  delta: ReadDelta,
  epoch: number,
  cutoffFixes: ReadonlyMap<number, CutoffRow | null> = new Map(),
): Promise<{ inserted: Set<string>; seq: number; cutoffs: { jobId: number; stale: boolean }[] }> {
  const { persist } = changes;
  const writes: (BulkWrite | DerivedWrite)[] = [
    eventsWrite(events, firstEventId, receivedAt),
    EVENT_COUNTS_WRITE,
  ];
  const add = (table: string, columns: readonly BulkColumn[], rows: unknown[][], conflict?: string) =>
    writes.push(conflict === undefined ? { table, columns, rows } : { table, columns, rows, conflict });
  add(
    'namespaces',
    NAMESPACE_COLUMNS,
    [...persist.namespaces].map((name) => {
      const row = changes.namespaces.get(name)!;
      return [row.id, row.name, ts(row.createdAt), ts(row.updatedAt), row.isHidden];
    }),
    updateAll('id', ['created_at', 'updated_at', 'is_hidden']),
  );
  add(
    'sources',
    [
      col('id', 'int'),
      col('name', 'text'),
      col('type', 'text'),
      col('connection_url', 'text'),
      col('created_at', 'timestamptz'),
      col('updated_at', 'timestamptz'),
    ],
    [...changes.sources.values()].map((row) => [
      row.id,
      row.name,
      row.type,
      row.connectionUrl,
      ts(row.createdAt),
      ts(row.updatedAt),
    ]),
    updateAll('id', ['type', 'connection_url', 'updated_at']),
  );
  add(
    'datasets',
    DATASET_COLUMNS,
    [...persist.datasets].map((key) => {
      const row = changes.datasets.get(key)!;
      return [
        row.id,
        row.namespaceId,
        row.name,
        row.sourceId,
        row.description,
        row.currentVersionId,
        ts(row.currentVersionTime),
        row.lifecycleState,
        ts(row.lastModifiedAt),
        row.isHidden,
        ts(row.createdAt),
        ts(row.updatedAt),
      ];
    }),
    updateAll('id', names(DATASET_COLUMNS)),
  );
  add(
    'jobs',
    JOB_COLUMNS,
    [...persist.jobs].map((key) => {
      const row = changes.jobs.get(key)!;
      return [
        row.id,
        row.namespaceId,
        row.name,
        row.simpleName,
        row.parentJobId,
        row.type,
        row.integration,
        row.jobType,
        row.description,
        row.location,
        row.currentVersionId,
        ts(row.currentVersionTime),
        row.isHidden,
        ts(row.createdAt),
        ts(row.updatedAt),
      ];
    }),
    updateAll('id', names(JOB_COLUMNS)),
  );
  add(
    'dataset_versions',
    [
      col('id', 'bigint'),
      col('dataset_id', 'int'),
      col('version', 'uuid'),
      col('fields', 'jsonb'),
      col('lifecycle_state', 'text'),
      col('created_at', 'timestamptz'),
      col('created_by_run', 'uuid'),
    ],
    [...changes.datasetVersions.values()].map((row) => [
      row.id,
      row.datasetId,
      row.version,
      row.fields,
      row.lifecycleState,
      ts(row.createdAt),
      row.createdByRun,
    ]),
  );
  add(
    'job_versions',
    [
      col('id', 'bigint'),
      col('job_id', 'int'),
      col('version', 'uuid'),
      col('location', 'text'),
      col('inputs', 'jsonb'),
      col('outputs', 'jsonb'),
      col('created_at', 'timestamptz'),
    ],
    [...changes.jobVersions.values()].map((row) => [
      row.id,
      row.jobId,
      row.version,
      row.location,
      row.inputs,
      row.outputs,
      ts(row.createdAt),
    ]),
  );
  add(
    'runs',
    RUN_COLUMNS,
    [...persist.runs].map((uuid) => {
      const run = changes.runs.get(uuid)!;
      const { aggregate } = run;
      return [
        run.uuid,
        run.externalId,
        run.jobId,
        run.parentRunUuid,
        run.jobVersionId,
        runStateOf(aggregate),
        ts(runTransitionedAt(aggregate)),
        ts(aggregate.startedAt),
        ts(aggregate.terminal?.at),
        ts(aggregate.firstRunningAt),
        ts(run.nominalStartTime),
        ts(run.nominalEndTime),
        ts(aggregate.firstEventAt),
        ts(aggregate.lastEventAt),
        run.codeLocation,
        ts(run.codeLocationAt),
        aggregate.terminalsSeen,
        run.execution,
        ts(run.executionAt),
      ];
    }),
    updateAll('uuid', names(RUN_COLUMNS)),
  );
  add(
    'run_io',
    [
      col('run_uuid', 'uuid'),
      col('direction', 'smallint'),
      col('dataset_id', 'int'),
      col('dataset_version_id', 'bigint'),
      col('facets', 'jsonb'),
      col('event_time', 'timestamptz'),
    ],
    [...changes.runIo.values()].map((row) => [
      row.runUuid,
      row.direction,
      row.datasetId,
      row.versionId,
      row.facets,
      ts(row.eventTime),
    ]),
    // Facets accumulate over a run's events; the version is the one seen by the newest event.
    `(run_uuid, direction, dataset_id) DO UPDATE SET facets = t.facets || EXCLUDED.facets,
       dataset_version_id = CASE WHEN EXCLUDED.event_time >= t.event_time THEN EXCLUDED.dataset_version_id
                                 ELSE t.dataset_version_id END,
       event_time = GREATEST(t.event_time, EXCLUDED.event_time)`,
  );
  add(
    'column_lineage',
    [
      col('output_dataset_id', 'int'),
      col('output_field', 'text'),
      col('input_dataset_id', 'int'),
      col('input_field', 'text'),
      col('transformation_type', 'text'),
      col('transformation_subtype', 'text'),
      col('transformation_description', 'text'),
      col('masking', 'boolean'),
      col('first_seen', 'timestamptz'),
      col('last_seen', 'timestamptz'),
    ],
    [...changes.columnEdges.values()].map((row) => [
      row.outputDatasetId,
      row.outputField,
      row.inputDatasetId,
      row.inputField,
      row.type,
      row.subtype,
      row.description,
      row.masking,
      ts(row.seen),
      ts(row.seen),
    ]),
    `(output_dataset_id, output_field, input_dataset_id, input_field, transformation_type, transformation_subtype)
     DO UPDATE SET first_seen = LEAST(t.first_seen, EXCLUDED.first_seen),
       last_seen = GREATEST(t.last_seen, EXCLUDED.last_seen)`,
  );
  add(
    'dataset_symlinks',
    [col('dataset_id', 'int'), col('namespace', 'text'), col('name', 'text'), col('type', 'text')],
    [...changes.symlinks.values()].map((row) => [row.datasetId, row.namespace, row.name, row.type]),
    '(dataset_id, namespace, name) DO NOTHING',
  );
  writes.push(facetWrite('run_facets', 'run_uuid', 'uuid', changes.runFacets, false));
  writes.push(facetWrite('job_facets', 'job_id', 'int', changes.jobFacets, true));
  writes.push(facetWrite('dataset_facets', 'dataset_id', 'int', changes.datasetFacets, true));
  add(
    'dq_assertions',
    [
      col('run_uuid', 'uuid'),
      col('dataset_id', 'int'),
      col('identity', 'text'),
      col('assertion', 'text'),
      col('column_name', 'text'),
      col('name', 'text'),
      col('description', 'text'),
      col('success', 'boolean'),
      col('skipped', 'boolean'),
      col('severity', 'text'),
      col('expected', 'text'),
      col('actual', 'text'),
      col('event_time', 'timestamptz'),
    ],
    [...changes.assertions.values()].map((row) => [
      row.runUuid,
      row.datasetId,
      row.identity,
      row.assertion,
      row.column,
      row.name,
      row.description,
      row.success,
      row.skipped,
      row.severity,
      row.expected,
      row.actual,
      ts(row.eventTime),
    ]),
    `(run_uuid, dataset_id, identity) DO UPDATE SET assertion = EXCLUDED.assertion,
       column_name = EXCLUDED.column_name, name = EXCLUDED.name, description = EXCLUDED.description,
       success = EXCLUDED.success, skipped = EXCLUDED.skipped,
       severity = EXCLUDED.severity, expected = EXCLUDED.expected, actual = EXCLUDED.actual,
       event_time = EXCLUDED.event_time WHERE EXCLUDED.event_time >= t.event_time`,
  );
  add(
    'dq_metrics',
    [
      col('run_uuid', 'uuid'),
      col('dataset_id', 'int'),
      col('metrics', 'jsonb'),
      col('event_time', 'timestamptz'),
    ],
    [...changes.metrics.values()].map((row) => [row.runUuid, row.datasetId, row.metrics, ts(row.eventTime)]),
    `(run_uuid, dataset_id) DO UPDATE SET metrics = EXCLUDED.metrics, event_time = EXCLUDED.event_time
       WHERE EXCLUDED.event_time >= t.event_time`,
  );
  add(
    'dataset_sightings',
    [
      col('dataset_id', 'int'),
      col('kind', 'smallint'),
      col('event_hash', 'uuid'),
      col('event_time', 'timestamptz'),
      col('seq', 'bigint'),
      col('job_id', 'int'),
      col('run_uuid', 'uuid'),
      col('version_id', 'bigint'),
      col('defines_version', 'boolean'),
      col('modifies', 'boolean'),
      col('facets', 'jsonb'),
      col('io_facets', 'jsonb'),
    ],
    [...changes.datasetSightings.values()].map((row) => [
      row.datasetId,
      row.kind,
      row.eventHash,
      ts(row.eventTime),
      row.seq,
      row.jobId,
      row.runUuid,
      row.versionId,
      row.definesVersion,
      row.modifies,
      row.facets,
      row.ioFacets,
    ]),
    // An event stored before is derived again with a new seq: its first sighting stands.
    'DO NOTHING',
  );
  add(
    'job_sightings',
    [
      col('job_id', 'int'),
      col('kind', 'smallint'),
      col('event_hash', 'uuid'),
      col('event_time', 'timestamptz'),
      col('seq', 'bigint'),
      col('run_uuid', 'uuid'),
      col('event_type', 'text'),
      col('version_id', 'bigint'),
      col('parent_job_id', 'int'),
      col('facets', 'jsonb'),
      col('run_facets', 'jsonb'),
    ],
    [...changes.jobSightings.values()].map((row) => [
      row.jobId,
      row.kind,
      row.eventHash,
      ts(row.eventTime),
      row.seq,
      row.runUuid,
      row.eventType,
      row.versionId,
      row.parentJobId,
      row.facets,
      row.runFacets,
    ]),
    'DO NOTHING',
  );
  writes.push(currentEdgesWrite(delta));
  const cutoffs = cutoffWrites(delta, cutoffFixes);
  writes.push(...cutoffs);
  const feed = feedWrite(epoch, { kind: 'batch', delta });
  writes.push(feed);
  // Only PostgreSQL keeps named statements prepared; elsewhere the empty writes would be parsed for nothing.
  const returned = await bulkWrite(db, writes, db.kind === 'postgres' ? 'headwater_write_batch' : undefined);
  return {
    inserted: new Set(returned[0]!.map((row) => row.hash as string)),
    seq: returned[writes.indexOf(feed)]![0]!.seq as number,
    cutoffs: cutoffs.flatMap((write) =>
      returned[writes.indexOf(write)]!.map((row) => ({
        jobId: row.job_id as number,
        stale: row.stale as boolean,
      })),
    ),
  };
}

/**
 * The commit feed's row for a write (see migration 010): `headwater_commit` fails the whole statement if
 * another writer has taken over since `epoch` (fencing), numbers the entry after the last one, and notifies
 * the replicas listening once the statement commits.
 */
function feedWrite(epoch: number, entry: FeedEntry): BulkWrite {
  return {
    table: 'commit_feed',
    columns: [col('epoch', 'bigint'), col('entry', 'jsonb')],
    rows: [[epoch, entry]],
    computed: { seq: 'headwater_commit(u.epoch)' },
    returning: 'seq',
  };
}

/**
 * Records a write that did not come from events (a tag, a soft delete) in the commit feed, so that replicas
 * refresh what they hold of it. Returns the entry's number.
 */
export async function recordExclusiveWrite(
  db: Queryable,
  epoch: number,
  entry: FeedEntry = { kind: 'exclusive' },
): Promise<number> {
  const returned = await bulkWrite(db, [feedWrite(epoch, entry)]);
  return returned[0]![0]!.seq as number;
}

/** lineage_edges: the latest eventTime each job-dataset edge of the batch was named at (see migration 008). */
function currentEdgesWrite(delta: ReadDelta): BulkWrite {
  return {
    table: 'lineage_edges',
    columns: [
      col('job_id', 'int'),
      col('direction', 'smallint'),
      col('dataset_id', 'int'),
      col('last_seen', 'timestamptz'),
    ],
    rows: delta.edges.map(([jobId, direction, datasetId, at]) => [jobId, direction, datasetId, ts(at)]),
    conflict:
      '(job_id, direction, dataset_id) DO UPDATE SET last_seen = GREATEST(t.last_seen, EXCLUDED.last_seen)',
  };
}

function facetWrite(
  table: string,
  entityColumn: string,
  entityType: 'uuid' | 'int',
  facets: Map<string, FacetUpsert>,
  withRun: boolean,
): BulkWrite {
  const columns = [
    col(entityColumn, entityType),
    col('name', 'text'),
    col('hash', 'bigint'),
    col('facet', 'jsonb'),
    col('event_time', 'timestamptz'),
    ...(withRun ? [col('run_uuid', 'uuid')] : []),
  ];
  return {
    table,
    columns,
    rows: [...facets.values()].map((row) => [
      row.entity,
      row.name,
      row.hash,
      row.facet,
      ts(row.eventTime),
      ...(withRun ? [row.runUuid] : []),
    ]),
    // The same value seen again later becomes the latest again (A, then B, then A: A is current).
    conflict: `(${entityColumn}, name, hash) DO UPDATE SET event_time = GREATEST(t.event_time, EXCLUDED.event_time)`,
  };
}
