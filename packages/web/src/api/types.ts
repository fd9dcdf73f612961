/**
 * The answers of the server's Marquez-compatible API (`/api/v1`) that the explorer reads, typed by the schemas
 * the server documents them with (each defined once, its type derived from it). Type-only imports: nothing of the
 * server reaches the bundle, and a change to an answer fails the web's type check.
 */
export type { RunState } from '../../../server/src/model/run-state.js';
export type { RunError as RunErrorInfo } from '../../../server/src/model/error-facets.js';
export type { LineageDirection as Direction } from '../../../server/src/read-model/lineage-graph.js';
export type { NamespaceJson as Namespace } from '../../../server/src/api/schemas/namespace.js';
export type {
  DatasetVersionRefJson as DatasetVersionRef,
  RunJson as Run,
} from '../../../server/src/api/schemas/run.js';
export type {
  DatasetJson as Dataset,
  DatasetNodeData,
  DatasetVersionJson as DatasetVersion,
} from '../../../server/src/api/schemas/dataset.js';
export type { JobJson as Job, JobNodeData } from '../../../server/src/api/schemas/job.js';
export type {
  ColumnLineageGraphJson as ColumnLineageResponse,
  LineageEdgeJson as Edge,
  LineageGraphJson,
} from '../../../server/src/api/schemas/lineage.js';
export type { PreviewJson as Preview } from '../../../server/src/api/schemas/previews.js';
export type { SearchResultJson as SearchResult } from '../../../server/src/api/schemas/search.js';
export type {
  CountBucketJson as CountBucket,
  LineageEventsBucketJson as LineageEventsBucket,
} from '../../../server/src/api/schemas/stats.js';

export type {
  IncidentDetailJson as IncidentDetail,
  IncidentJson as Incident,
} from '../../../server/src/api/schemas/incidents.js';
export type {
  ImpactedNode as IncidentImpact,
  NodeRef,
  Recipient,
  RecipientAddress,
  RecipientReason,
  RootCause as IncidentRootCause,
} from '../../../server/src/alerts/notice.js';

import type {
  DatasetNodeJson,
  JobNodeJson,
  LineageGraphJson,
} from '../../../server/src/api/schemas/lineage.js';
import type { IncidentDetailJson, IncidentJson } from '../../../server/src/api/schemas/incidents.js';

/**
 * The explorer's own: a lineage graph whose every node has data. The server sends `data: null` for the placeholder
 * of a node the caller may not read; withRedactedPlaceholders (redacted.ts) gives each such node data naming it
 * `(redacted)`, and the views read the graph only after that.
 */
type WithData<N extends { data: unknown }> = Omit<N, 'data'> & { data: NonNullable<N['data']> };

export type DatasetNode = WithData<DatasetNodeJson>;
export type JobNode = WithData<JobNodeJson>;

export interface LineageGraphResponse extends Omit<LineageGraphJson, 'graph'> {
  graph: (DatasetNode | JobNode)[];
}

/** Where an incident stands: open, acknowledged (someone is on it) or resolved. */
export type IncidentStatus = IncidentJson['status'];
/** What broke at an incident's root: a failed run, failing assertions, an overdue or a missing run. */
export type IncidentSignalKind = IncidentJson['signal'];
/** One signal grouped into an incident. */
export type IncidentSignal = IncidentDetailJson['signals'][number];
/** One transition of an incident (opened, updated, acknowledged, resolved), with what it sent. */
export type IncidentTransition = IncidentDetailJson['timeline'][number];
/** One channel's delivery of a transition. */
export type IncidentDelivery = IncidentTransition['deliveries'][number];
