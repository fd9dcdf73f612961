/**
 * `@headwater/openlineage`: the TypeScript OpenLineage client. Typed model of spec 2-0-2 (generated from the
 * official schemas), event and facet builders, transports, configuration like the Python client, naming
 * helpers and `track()`.
 *
 * @packageDocumentation
 */
export * from './generated/model.js';
export * from './generated/facet-builders.js';
export type { FacetBuilder, FacetFields, FacetOptions } from './facet.js';
export { defineFacet } from './facet.js';
export { CLIENT_VERSION, DEFAULT_PRODUCER } from './producer.js';
export type { UuidV7GeneratorOptions } from './uuid.js';
export { createUuidV7Generator, isUuid, uuidv7, uuidv7Timestamp } from './uuid.js';
export type {
  BaseEventOptions,
  DatasetEventOptions,
  EventType,
  JobEventOptions,
  RunEventOptions,
} from './events.js';
export {
  DATASET_EVENT_SCHEMA_URL,
  JOB_EVENT_SCHEMA_URL,
  RUN_EVENT_SCHEMA_URL,
  datasetEvent,
  eventKind,
  inputDataset,
  jobEvent,
  outputDataset,
  runEvent,
} from './events.js';
export type { BatchEmitResult, EmitResult, Transport } from './transports/transport.js';
export { SUCCESS, safeEmit, safeEmitBatch, toError } from './transports/transport.js';
export type { ConsoleTransportOptions } from './transports/console-transport.js';
export { createConsoleTransport } from './transports/console-transport.js';
export type { FileTransportMode, FileTransportOptions } from './transports/file-transport.js';
export { createFileTransport } from './transports/file-transport.js';
export type { HttpAuth, HttpTransportOptions, TokenProvider } from './transports/http-transport.js';
export {
  HttpTransportError,
  createHttpTransport,
  joinUrl,
  parseRetryAfter,
} from './transports/http-transport.js';
export type {
  KafkaConnectionOptions,
  KafkaSasl,
  KafkaTransportOptions,
} from './transports/kafka-transport.js';
export {
  KafkaConfigError,
  createKafkaTransport,
  kafkaConnectionOptions,
  kafkaMessageKey,
} from './transports/kafka-transport.js';
export type {
  AsyncTransport,
  AsyncTransportOptions,
  AsyncTransportStats,
  UndeliveredHandler,
} from './transports/async-transport.js';
export { createAsyncTransport } from './transports/async-transport.js';
export type { CompositeTransportOptions } from './transports/composite-transport.js';
export { createCompositeTransport } from './transports/composite-transport.js';
export type { EventTransformer, TransformTransportOptions } from './transports/transform-transport.js';
export { createTransformTransport } from './transports/transform-transport.js';
export { createNoopTransport } from './transports/noop-transport.js';
export type { InMemoryTransport, InMemoryTransportOptions } from './transports/in-memory-transport.js';
export { createInMemoryTransport } from './transports/in-memory-transport.js';
export type { RetryAttempt, RetryOptions, Sleep } from './transports/retry.js';
export { withRetry } from './transports/retry.js';
export type {
  ConfigSources,
  ConfigTree,
  ResolvedConfig,
  TransportFactory,
  TransportFactoryContext,
  TransportFromConfigOptions,
} from './config.js';
export {
  OpenLineageConfigError,
  configFromEnv,
  createTransportFromConfig,
  deepMerge,
  resolveConfig,
} from './config.js';
export type {
  FacetHygiene,
  FacetHygieneOptions,
  HygieneReport,
  HygieneRule,
  RedactionRule,
} from './hygiene.js';
export {
  BUILTIN_MASKS,
  createFacetHygiene,
  hygieneChanged,
  parseHygieneRules,
  REDACTION_FACET,
  REDACTION_FACET_SCHEMA_URL,
} from './hygiene.js';
export type {
  ClientOptions,
  ClientStats,
  EmitErrorContext,
  OpenLineageClient,
  UndeliveredReason,
} from './client.js';
export { createClient } from './client.js';
export type { BackoffPolicy, Random } from './backoff.js';
export { backoffCeilingMs, backoffDelayMs, retryDelayMs, sleep, untilAborted } from './backoff.js';
export type { ReplayReport, SpoolOptions, SpoolQueue, SpoolQueueOptions, SpoolWriter } from './spool.js';
export { createSpoolWriter, openSpoolQueue, replaySpool } from './spool.js';
export type { RunReference, TrackOptions, TrackedJob, TrackedRun } from './track.js';
export { currentRun, track } from './track.js';
export * from './naming.js';
