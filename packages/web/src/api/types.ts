/**
 * The shapes of the server's Marquez-compatible API (`/api/v1`) that the explorer reads. Only the fields the UI
 * uses are declared; the server sends more.
 */
import type { RunJson } from '../../../server/src/api/shapes.js';
import type { RunError as RunErrorInfo } from '../../../server/src/model/error-facets.js';

export type { RunErrorInfo };

export type RunState = 'NEW' | 'RUNNING' | 'COMPLETED' | 'ABORTED' | 'FAILED' | 'OTHER';

export interface Namespace {
  name: string;
  createdAt: string;
  updatedAt: string;
  ownerName: string | null;
  description: string | null;
}

export interface DatasetVersionRef {
  datasetVersionId: { namespace: string; name: string; version: string };
  facets: Record<string, unknown>;
}

export interface Run {
  id: string;
  createdAt: string;
  updatedAt: string;
  nominalStartTime: string | null;
  nominalEndTime: string | null;
  state: RunState;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  args: Record<string, unknown>;
  jobVersion: { namespace: string; name: string; version: string } | null;
  inputDatasetVersions?: DatasetVersionRef[];
  outputDatasetVersions?: DatasetVersionRef[];
  facets: Record<string, unknown>;
  /** The run's error as the server reads it from the error facets producers send (errorMessage, spark.exception). */
  error?: RunErrorInfo | null;
  /** Present on a RUNNING run that has sent no event for longer than the server's `--stale-run-after`. */
  stale?: true;
  /** The terminal states the run's events reported when they contradict each other, the shown state first. */
  contradictoryStates?: string[];
  /** Present when the run did not execute (skipped, reused, no-op): its state is neither a failure nor a completion. */
  execution?: RunJson['execution'];
}

export interface Field {
  name: string;
  type: string | null;
  tags: string[];
  description: string | null;
}

export interface DatasetId {
  namespace: string;
  name: string;
}

export interface Dataset {
  id: DatasetId;
  type: string;
  name: string;
  physicalName: string;
  createdAt: string;
  updatedAt: string;
  namespace: string;
  sourceName: string;
  fields: Field[];
  tags: string[];
  lastModifiedAt: string | null;
  description: string | null;
  currentVersion?: string | null;
  facets?: Record<string, unknown>;
  /** The dataset this one was declared an alias of: lineage shows that one instead. */
  aliasOf?: DatasetId;
  /** The datasets declared aliases of this one. */
  aliases?: DatasetId[];
}

export interface DatasetVersion extends Omit<Dataset, 'updatedAt'> {
  version: string;
  lifecycleState: string | null;
  createdByRun: Run | null;
}

export interface Job {
  id: DatasetId;
  type: string;
  name: string;
  simpleName: string;
  parentJobName: string | null;
  createdAt: string;
  updatedAt: string;
  namespace: string;
  inputs: DatasetId[];
  outputs: DatasetId[];
  location: string | null;
  description: string | null;
  latestRun: Run | null;
  facets?: Record<string, unknown>;
  /** GET /jobs/{job} only (not in lineage node data). */
  tags?: string[];
  labels?: string[];
}

export type NodeType = 'DATASET' | 'JOB';

export interface Edge {
  origin: string;
  destination: string;
}

export interface LineageNode<T extends string = string, D = unknown> {
  id: string;
  type: T;
  data: D;
  inEdges: Edge[];
  outEdges: Edge[];
}

export type DatasetNode = LineageNode<'DATASET', Dataset>;
export type JobNode = LineageNode<'JOB', Job>;

export interface LineageGraphResponse {
  graph: (DatasetNode | JobNode)[];
}

export interface ColumnNodeData {
  namespace: string;
  dataset: string;
  field: string;
  fieldType: string | null;
  transformationDescription?: string | null;
  transformationType?: string | null;
}

export interface ColumnLineageResponse {
  graph: LineageNode<'DATASET_FIELD', ColumnNodeData>[];
}

export interface SearchResult {
  type: NodeType;
  name: string;
  updatedAt: string;
  namespace: string;
  nodeId: string;
}

export interface LineageEventsBucket {
  startInterval: string;
  endInterval: string;
  fail: number;
  start: number;
  complete: number;
  abort: number;
}

export interface CountBucket {
  startInterval: string;
  endInterval: string;
  count: number;
}

export type Direction = 'upstream' | 'downstream' | 'both';
