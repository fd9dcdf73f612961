/**
 * The shared schemas of the API, registered once with `app.addSchema` and referenced as `{"$ref": "<$id>#"}`
 * (see Ref); @fastify/swagger publishes them as OpenAPI components under their `$id`.
 */
import {
  AliasSchema,
  ColumnLineageSchema,
  DatasetDataSchema,
  DatasetSchema,
  DatasetVersionSchema,
  FieldSchema,
} from './dataset.js';
import { EntityIdSchema, ErrorSchema, VersionIdSchema } from './common.js';
import { JobDataSchema, JobSchema, JobVersionSchema } from './job.js';
import { ColumnLineageGraphSchema, LineageEdgeSchema, LineageGraphSchema } from './lineage.js';
import { NamespaceSchema, SourceSchema, TagSchema } from './namespace.js';
import { DatasetVersionRefSchema, RunSchema } from './run.js';
import { SearchResultSchema } from './search.js';
import { CountBucketSchema, LineageEventsBucketSchema } from './stats.js';

/** Every shared schema, in the order the OpenAPI document lists them. */
export const sharedSchemas = [
  EntityIdSchema,
  VersionIdSchema,
  ErrorSchema,
  NamespaceSchema,
  SourceSchema,
  TagSchema,
  FieldSchema,
  ColumnLineageSchema,
  DatasetVersionRefSchema,
  RunSchema,
  DatasetDataSchema,
  DatasetSchema,
  AliasSchema,
  DatasetVersionSchema,
  JobDataSchema,
  JobSchema,
  JobVersionSchema,
  SearchResultSchema,
  LineageEventsBucketSchema,
  CountBucketSchema,
  LineageEdgeSchema,
  LineageGraphSchema,
  ColumnLineageGraphSchema,
] as const;
