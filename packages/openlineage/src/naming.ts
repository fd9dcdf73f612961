/**
 * Dataset naming helpers for the OpenLineage naming spec (`website/docs/spec/naming.md`): each returns the
 * `{ namespace, name }` pair a platform's datasets must have, so that every producer names the same table or
 * object the same way and the lineage graph joins up.
 *
 * Normalisation rules applied everywhere: hosts and schemes lowercased; default ports filled in where the
 * spec's namespace has a port; credentials never kept; no trailing `/` on namespaces or object names.
 * Identifier case follows the platform's folding of unquoted identifiers: PostgreSQL and Redshift fold to
 * lower case, Snowflake to upper case; others keep the case given. Pass `preserveCase: true` for quoted
 * identifiers.
 */
import { inputSubsetInputDatasetFacet, outputSubsetOutputDatasetFacet } from './generated/facet-builders.js';
import type { InputDataset, OutputDataset } from './generated/model.js';

/** A dataset's identity in OpenLineage. */
export interface DatasetId {
  readonly namespace: string;
  readonly name: string;
}

/** Default ports of the platforms whose namespace includes one. */
export const DEFAULT_PORTS: Readonly<Record<string, number>> = Object.freeze({
  postgres: 5432,
  mysql: 3306,
  redshift: 5439,
  mssql: 1433,
  sqlserver: 1433,
  oracle: 1521,
  db2: 50000,
  teradata: 1025,
  hive: 10000,
  trino: 8080,
  cassandra: 9042,
  kafka: 9092,
  hdfs: 8020,
  crate: 5432,
  oceanbase: 2881,
  milvus: 19530,
});

// Scheme spellings of drivers and URLs that name the same platform.
const SCHEME_ALIASES: Readonly<Record<string, string>> = {
  postgresql: 'postgres',
  'postgresql+psycopg2': 'postgres',
  'postgresql+psycopg': 'postgres',
  'postgresql+asyncpg': 'postgres',
  pg: 'postgres',
  'mysql+pymysql': 'mysql',
  'mysql+mysqldb': 'mysql',
  mariadb: 'mysql',
  s3a: 's3',
  s3n: 's3',
  gcs: 'gs',
  'redshift+psycopg2': 'redshift',
  'mssql+pyodbc': 'mssql',
};

interface HostPort {
  readonly host: string;
  readonly port?: number | string;
}

function hostPort(scheme: string, { host, port }: HostPort): string {
  if (host.trim() === '') throw new TypeError(`${scheme}: host must not be empty`);
  const resolvedPort = port === undefined || port === '' ? DEFAULT_PORTS[scheme] : Number(port);
  if (
    resolvedPort !== undefined &&
    !(Number.isInteger(resolvedPort) && resolvedPort > 0 && resolvedPort < 65536)
  ) {
    throw new TypeError(`${scheme}: port must be an integer between 1 and 65535, got ${String(port)}`);
  }
  const lowerHost = host.trim().toLowerCase();
  return resolvedPort === undefined ? `${scheme}://${lowerHost}` : `${scheme}://${lowerHost}:${resolvedPort}`;
}

function part(label: string, value: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${label} must not be empty`);
  return value.trim();
}

function fold(parts: string[], mode: 'lower' | 'upper' | 'keep', preserveCase: boolean | undefined): string {
  const joined = parts.join('.');
  if (preserveCase === true || mode === 'keep') return joined;
  return mode === 'lower' ? joined.toLowerCase() : joined.toUpperCase();
}

function trimSlashes(key: string): string {
  return key.replace(/^\/+/, '').replace(/\/+$/, '');
}

/** Options shared by the database helpers. */
export interface TableOptions extends HostPort {
  /** Keep identifier case as given (for quoted identifiers). @default false */
  readonly preserveCase?: boolean;
}

/** PostgreSQL: `postgres://{host}:{port}`, `{database}.{schema}.{table}` (lower case). */
export function postgresDataset(
  options: TableOptions & { database: string; schema: string; table: string },
): DatasetId {
  return {
    namespace: hostPort('postgres', options),
    name: fold(
      [part('database', options.database), part('schema', options.schema), part('table', options.table)],
      'lower',
      options.preserveCase,
    ),
  };
}

/** MySQL: `mysql://{host}:{port}`, `{database}.{table}` (case kept: MySQL's folding depends on the server's OS). */
export function mysqlDataset(options: TableOptions & { database: string; table: string }): DatasetId {
  return {
    namespace: hostPort('mysql', options),
    name: fold(
      [part('database', options.database), part('table', options.table)],
      'keep',
      options.preserveCase,
    ),
  };
}

/** Redshift: `redshift://{cluster_identifier}.{region}:{port}`, `{database}.{schema}.{table}` (lower case). */
export function redshiftDataset(
  options: Omit<TableOptions, 'host'> & {
    cluster: string;
    region: string;
    database: string;
    schema: string;
    table: string;
  },
): DatasetId {
  return {
    namespace: hostPort('redshift', {
      host: `${part('cluster', options.cluster)}.${part('region', options.region)}`,
      ...(options.port === undefined ? {} : { port: options.port }),
    }),
    name: fold(
      [part('database', options.database), part('schema', options.schema), part('table', options.table)],
      'lower',
      options.preserveCase,
    ),
  };
}

/**
 * Snowflake: `snowflake://{org}-{account}`, `{database}.{schema}.{table}` (upper case). Give the account
 * identifier in its preferred `org-account` form; a `.snowflakecomputing.com` suffix is removed. The legacy
 * locator form (`xy12345.us-east-1`) is kept as given but never matches the `org-account` form: pick one.
 */
export function snowflakeDataset(options: {
  account: string;
  database: string;
  schema: string;
  table: string;
  preserveCase?: boolean;
}): DatasetId {
  const account = part('account', options.account)
    .toLowerCase()
    .replace(/^snowflake:\/\//, '')
    .replace(/\.snowflakecomputing\.com\/?$/, '');
  return {
    namespace: `snowflake://${account}`,
    name: fold(
      [part('database', options.database), part('schema', options.schema), part('table', options.table)],
      'upper',
      options.preserveCase,
    ),
  };
}

/** BigQuery: `bigquery`, `{project}.{dataset}.{table}` (case kept: BigQuery names are case-sensitive). */
export function bigqueryDataset(options: { project: string; dataset: string; table: string }): DatasetId {
  return {
    namespace: 'bigquery',
    name: [
      part('project', options.project),
      part('dataset', options.dataset),
      part('table', options.table),
    ].join('.'),
  };
}

/** Kafka: `kafka://{bootstrap host}:{port}`, `{topic}`. With several bootstrap servers, the first one names the cluster. */
export function kafkaDataset(options: { bootstrapServers: string; topic: string }): DatasetId {
  const first = part('bootstrapServers', options.bootstrapServers)
    .split(',')[0]!
    .trim()
    .replace(/^[a-z]+:\/\//i, '');
  const [host, port] = splitHostPort(first);
  return {
    namespace: hostPort('kafka', { host, ...(port === undefined ? {} : { port }) }),
    name: part('topic', options.topic),
  };
}

/** A generic `{scheme}://{host}:{port}` database (mssql, oracle, db2, trino, hive, teradata, cassandra...) and a dotted name. */
export function databaseDataset(
  options: TableOptions & { scheme: string; nameParts: readonly string[] },
): DatasetId {
  const scheme = normaliseScheme(options.scheme);
  return {
    namespace: hostPort(scheme, options),
    name: fold(
      options.nameParts.map((p, i) => part(`nameParts[${i}]`, p)),
      'keep',
      options.preserveCase,
    ),
  };
}

/** S3: `s3://{bucket}`, `{object key}` without leading or trailing `/`. */
export function s3Dataset(options: { bucket: string; key: string }): DatasetId {
  return {
    namespace: `s3://${part('bucket', options.bucket).toLowerCase()}`,
    name: trimSlashes(options.key),
  };
}

/** Google Cloud Storage: `gs://{bucket}`, `{object key}`. */
export function gcsDataset(options: { bucket: string; key: string }): DatasetId {
  return {
    namespace: `gs://${part('bucket', options.bucket).toLowerCase()}`,
    name: trimSlashes(options.key),
  };
}

/** ADLS Gen2: `abfss://{container}@{service}.dfs.core.windows.net`, `{path}`. */
export function abfssDataset(options: { container: string; account: string; path: string }): DatasetId {
  const account = part('account', options.account)
    .toLowerCase()
    .replace(/\.dfs\.core\.windows\.net$/, '');
  return {
    namespace: `abfss://${part('container', options.container).toLowerCase()}@${account}.dfs.core.windows.net`,
    name: trimSlashes(options.path),
  };
}

/** HDFS: `hdfs://{namenode host}:{port}`, `{path}` (absolute, no trailing `/`). */
export function hdfsDataset(options: HostPort & { path: string }): DatasetId {
  return { namespace: hostPort('hdfs', options), name: `/${trimSlashes(options.path)}` };
}

/** Local file system: `file`, `{absolute path}`; a remote host gives `file://{host}`. */
export function fileDataset(options: { path: string; host?: string }): DatasetId {
  const namespace =
    options.host === undefined || options.host === '' ? 'file' : `file://${options.host.toLowerCase()}`;
  return { namespace, name: `/${trimSlashes(options.path)}` };
}

function splitHostPort(value: string): [string, string | undefined] {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value);
  if (match === null) return [value, undefined];
  return [match[1]!, match[2]];
}

function normaliseScheme(scheme: string): string {
  const lower = scheme.toLowerCase().replace(/:$/, '');
  return SCHEME_ALIASES[lower] ?? lower;
}

/**
 * Turns a storage URI into a dataset id: `s3://bucket/a/b/` -> (`s3://bucket`, `a/b`); `s3a://` and `s3n://`
 * become `s3://`; `gs://`, `abfss://`, `wasbs://`, `hdfs://`, `file://`, plain absolute paths; and database
 * connection URIs (`postgresql://user:secret@Host/db`) give the namespace with default port and no
 * credentials, with the path as the name.
 *
 * @example
 * ```ts
 * datasetFromUri('s3a://Lake/orders/date=2024-01-15/'); // { namespace: 's3://lake', name: 'orders/date=2024-01-15' }
 * ```
 */
export function datasetFromUri(uri: string): DatasetId {
  const trimmed = uri.trim();
  if (trimmed.startsWith('/')) return fileDataset({ path: trimmed });
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/]*)(\/.*)?$/i.exec(trimmed);
  if (match === null)
    throw new TypeError(`"${uri}" is not a URI of the form scheme://authority/path or an absolute path`);
  const scheme = normaliseScheme(match[1]!);
  const authority = match[2]!;
  const pathPart = match[3] ?? '';
  switch (scheme) {
    case 's3':
      return s3Dataset({ bucket: authority, key: pathPart });
    case 'gs':
      return gcsDataset({ bucket: authority, key: pathPart });
    case 'abfss':
    case 'wasbs': {
      const at = authority.indexOf('@');
      if (at < 0)
        throw new TypeError(`"${uri}": expected ${scheme}://{container}@{account}.dfs.core.windows.net/path`);
      return { namespace: `${scheme}://${authority.toLowerCase()}`, name: trimSlashes(pathPart) };
    }
    case 'file':
      return fileDataset({
        path: pathPart,
        ...(authority === '' || authority === 'localhost' ? {} : { host: authority }),
      });
    default: {
      // Databases and everything else with a host: drop credentials, add the default port.
      const hostAndPort = authority.includes('@')
        ? authority.slice(authority.lastIndexOf('@') + 1)
        : authority;
      const [host, port] = splitHostPort(hostAndPort);
      return {
        namespace: hostPort(scheme, { host, ...(port === undefined ? {} : { port }) }),
        name: scheme === 'hdfs' ? `/${trimSlashes(pathPart)}` : trimSlashes(pathPart),
      };
    }
  }
}

/** The partition root of a path, and its Hive-style partitions. */
export interface PartitionedPath {
  /** The path up to the first `key=value` segment: the dataset's name. */
  readonly root: string;
  /** Partition columns and values, in path order. Empty when the path has no partition segment. */
  readonly partitions: Readonly<Record<string, string>>;
  /** The partition segments as written, e.g. `date=2024-01-15/region=eu`. */
  readonly identifier: string;
}

/**
 * Splits a Hive-style partitioned path into the dataset root and the partition values, so that each
 * partition is not a dataset of its own. Files below the partition folders are ignored.
 *
 * @example
 * ```ts
 * partitionRoot('orders/date=2024-01-15/part-0001.parquet');
 * // { root: 'orders', partitions: { date: '2024-01-15' }, identifier: 'date=2024-01-15' }
 * ```
 */
export function partitionRoot(path: string): PartitionedPath {
  const leading = path.startsWith('/') ? '/' : '';
  const segments = path.split('/').filter((s) => s !== '');
  const first = segments.findIndex((s) => /^[^=]+=.*$/.test(s));
  if (first < 0) return { root: leading + segments.join('/'), partitions: {}, identifier: '' };
  const partitionSegments: string[] = [];
  const partitions: Record<string, string> = {};
  for (const segment of segments.slice(first)) {
    const eq = segment.indexOf('=');
    if (eq <= 0) break;
    partitionSegments.push(segment);
    partitions[decodeURIComponent(segment.slice(0, eq))] = decodeURIComponent(segment.slice(eq + 1));
  }
  return {
    root: leading + segments.slice(0, first).join('/'),
    partitions,
    identifier: partitionSegments.join('/'),
  };
}

function partitionCondition(partitioned: PartitionedPath) {
  return {
    type: 'partition' as const,
    partitions: [{ identifier: partitioned.identifier, dimensions: { ...partitioned.partitions } }],
  };
}

/**
 * An input dataset for a partitioned path: named after the partition root, with the partition read in the
 * `subset` input facet. An unpartitioned path gives a plain input dataset.
 *
 * @example
 * ```ts
 * partitionedInputDataset({ namespace: 's3://lake', name: 'orders/date=2024-01-15' });
 * // { namespace: 's3://lake', name: 'orders', inputFacets: { subset: { inputCondition: { type: 'partition', ... } } } }
 * ```
 */
export function partitionedInputDataset(id: DatasetId, options: { producer?: string } = {}): InputDataset {
  const partitioned = partitionRoot(id.name);
  if (partitioned.identifier === '') return { namespace: id.namespace, name: partitioned.root };
  return {
    namespace: id.namespace,
    name: partitioned.root,
    inputFacets: {
      subset: inputSubsetInputDatasetFacet({ inputCondition: partitionCondition(partitioned) }, options),
    },
  };
}

/** The output counterpart of {@link partitionedInputDataset}: the partition written goes in the `subset` output facet. */
export function partitionedOutputDataset(id: DatasetId, options: { producer?: string } = {}): OutputDataset {
  const partitioned = partitionRoot(id.name);
  if (partitioned.identifier === '') return { namespace: id.namespace, name: partitioned.root };
  return {
    namespace: id.namespace,
    name: partitioned.root,
    outputFacets: {
      subset: outputSubsetOutputDatasetFacet({ outputCondition: partitionCondition(partitioned) }, options),
    },
  };
}
