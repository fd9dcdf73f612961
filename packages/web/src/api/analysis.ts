/**
 * The answers of the server's `/api/v1/analysis/*` endpoints, typed by the server's own definitions (type-only
 * imports: nothing of the server reaches the bundle), so a change to an answer fails the web's type check.
 */
export type {
  Cause,
  CauseAssertion,
  CauseKind,
  CauseSchemaChange,
  RootCauseResult,
  Staleness,
} from '../../../server/src/analysis/root-cause.js';
export type {
  ImpactChange,
  ImpactLevel,
  ImpactResult,
  ImpactedNode,
} from '../../../server/src/analysis/impact.js';
export type { SchemaDiffResult } from '../../../server/src/analysis/schema-diff.js';
export type {
  RunDiffResult,
  DatasetDiff,
  FlippedAssertion,
  NumberChange,
} from '../../../server/src/analysis/run-diff.js';
export type { GraphDiffResult } from '../../../server/src/analysis/graph-diff.js';
export type {
  PreviewCategory,
  PreviewChange,
  PreviewConsumer,
  PreviewDiff,
  PreviewReason,
} from '../../../server/src/analysis/preview-diff.js';
export type { DeclaredLineageResult, JobComparison, JobEdge } from '../../../server/src/analysis/declared.js';
export type {
  ChildDatasetJson,
  ChildEdgeJson,
  ChildRunJson,
  RunChildrenJson,
} from '../../../server/src/api/schemas/run-children.js';
export type { SchemaChange, SchemaColumn, TypeChange } from '../../../server/src/analysis/schema.js';
export type {
  AssertionJson,
  AssertionResultJson,
  ColumnMetricsJson,
  DatasetQualityJson,
  QualityObservationJson,
  RunQualityJson,
  StatisticsJson,
} from '../../../server/src/analysis/quality.js';
export type { JourneyHop, JourneyJson, JourneyNode } from '../../../server/src/analysis/journey.js';
