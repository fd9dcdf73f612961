/**
 * The demo scenario: one working week of a small company's revenue pipeline, as the OpenLineage events its tools
 * would have sent. Pure data and builders: no I/O, so tests and the `demo` command see the same events.
 *
 *   s3://acme-raw              orders, customers            landed by an export every night (DatasetEvents)
 *     -> acme-airflow          daily_etl (DAG) with tasks daily_etl.load_orders, daily_etl.load_customers
 *   postgres://warehouse...    analytics.staging.orders, analytics.staging.customers
 *     -> acme-dbt              dbt.revenue_daily
 *   postgres://warehouse...    analytics.marts.revenue_daily
 *     -> acme-bi               bi.refresh_revenue_dashboard
 *   looker://acme              dashboards.revenue
 *
 * The story a lineage tool should be able to tell afterwards: on 2025-03-12 a new version of the load task
 * started copying `discount_amount` into staging orders (a schema change); on 2025-03-14 the load of orders
 * failed on a duplicate key, the dbt model and the dashboard still ran on the stale table, the model's freshness
 * assertion failed, and the revenue mart stopped growing.
 *
 * Everything is deterministic. Event times are fixed offsets from the days of the week ending on `endDate`
 * (2025-03-14 by default, in UTC), and run ids are UUIDv7s whose time is the run's start and whose random bits
 * come from a hash of a fixed seed, the end date and the job. Loading the scenario twice therefore sends
 * byte-identical events, which the server stores once.
 */
import { createHash } from 'node:crypto';

/** A facet: the spec's two underscore fields plus the facet's own. */
export interface Facet {
  readonly _producer: string;
  readonly _schemaURL: string;
  readonly [field: string]: unknown;
}

/** Facets keyed by facet name. */
export type Facets = Readonly<Record<string, Facet>>;

/** An input or output dataset of a run event. */
export interface DemoDataset {
  readonly namespace: string;
  readonly name: string;
  readonly facets?: Facets;
  readonly inputFacets?: Facets;
  readonly outputFacets?: Facets;
}

/** An OpenLineage 2-0-2 RunEvent. */
export interface DemoRunEvent {
  readonly eventType: 'START' | 'COMPLETE' | 'FAIL';
  readonly eventTime: string;
  readonly producer: string;
  readonly schemaURL: string;
  readonly run: { readonly runId: string; readonly facets: Facets };
  readonly job: { readonly namespace: string; readonly name: string; readonly facets: Facets };
  readonly inputs: readonly DemoDataset[];
  readonly outputs: readonly DemoDataset[];
}

/** An OpenLineage 2-0-2 DatasetEvent. */
export interface DemoDatasetEvent {
  readonly eventTime: string;
  readonly producer: string;
  readonly schemaURL: string;
  readonly dataset: { readonly namespace: string; readonly name: string; readonly facets: Facets };
}

/** Any event of the scenario. */
export type DemoEvent = DemoRunEvent | DemoDatasetEvent;

/** Options of {@link demoScenario}. */
export interface DemoScenarioOptions {
  /**
   * The last of the five days, `YYYY-MM-DD` (UTC). Another date gives another, equally deterministic week with
   * its own run ids, so weeks can be loaded side by side.
   * @default '2025-03-14'
   */
  readonly endDate?: string;
}

/** The scenario's events in event-time order, and the run that failed. */
export interface DemoScenario {
  readonly events: readonly DemoEvent[];
  /** The five days, `YYYY-MM-DD`, oldest first. */
  readonly days: readonly string[];
  readonly failedRun: { readonly runId: string; readonly namespace: string; readonly name: string };
  /** The day `discount_amount` appeared in the staging orders schema. */
  readonly schemaChangeDay: string;
}

/** {@link DemoScenarioOptions.endDate}'s default. */
export const DEMO_END_DATE = '2025-03-14';

/** Namespaces and names of the scenario's jobs and datasets. */
export const demoNames = {
  raw: 's3://acme-raw',
  warehouse: 'postgres://warehouse.acme.internal:5432',
  airflow: 'acme-airflow',
  dbt: 'acme-dbt',
  bi: 'acme-bi',
  looker: 'looker://acme',
  rawOrders: 'orders',
  rawCustomers: 'customers',
  stagingOrders: 'analytics.staging.orders',
  stagingCustomers: 'analytics.staging.customers',
  mart: 'analytics.marts.revenue_daily',
  dashboard: 'dashboards.revenue',
  dag: 'daily_etl',
  loadOrders: 'daily_etl.load_orders',
  loadCustomers: 'daily_etl.load_customers',
  dbtModel: 'dbt.revenue_daily',
  dashboardRefresh: 'bi.refresh_revenue_dashboard',
} as const;

const SEED = 'headwater-demo/v1';
const DAYS = 5;
const DAY_MS = 86_400_000;
const RUN_EVENT_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const DATASET_EVENT_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent';

// The producers the real integrations put in their events, so the demo looks like what they send.
const producers = {
  airflow: 'https://github.com/apache/airflow/tree/providers-openlineage/1.14.0',
  dbt: 'https://github.com/OpenLineage/OpenLineage/tree/1.26.0/integration/dbt',
  landing: 'https://git.acme.example/data/landing-notifier/tree/v1.3.0',
  looker: 'https://git.acme.example/bi/looker-refresh/tree/v2.1.0',
} as const;

// Git revisions of the DAG repository: the second one, deployed before the run of the third day, copies
// discount_amount into staging orders.
const DAG_REVISIONS = [
  '4f1c2a9e0b7d3c5a8e6f1b2d4c7a9e0f3b5d8c1a',
  '9b3e7d1f5a2c8e4b6d0f3a7c1e5b9d2f4a8c6e0b',
];
const DBT_REVISION = 'c7e2a4f6b8d0c2e4a6f8b0d2c4e6a8f0b2d4c6e8';

/** The number of new orders in the partition of each day (the fifth is never loaded). */
const ORDERS_PER_DAY = [18_790, 19_102, 18_655, 19_340, 18_977];
/** Rows in staging orders before the week. */
const ORDERS_BEFORE = 1_185_323;
/** Rows of the customers snapshot each night. */
const CUSTOMERS = [52_118, 52_240, 52_391, 52_507, 52_633];
/** Mart rows (days x regions) before the week; each successful load adds one day of six regions. */
const MART_ROWS_BEFORE = 2_178;
const REGIONS = 6;
/** Cents per order on average, to give the quality metrics plausible sums. */
const AVERAGE_ORDER_CENTS = 6_137;

function facet(producer: string, name: string, version: string, fields: Record<string, unknown>): Facet {
  return {
    _producer: producer,
    _schemaURL: `https://openlineage.io/spec/facets/${version}/${name}.json#/$defs/${name}`,
    ...fields,
  };
}

/**
 * A deterministic UUIDv7 for a run: the time bits are the run's start, so ids sort like the runs; the rest is a
 * hash of the seed, so the same run gets the same id every time the scenario is built.
 */
export function demoRunId(key: string, startMs: number): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(startMs, 0, 6);
  createHash('sha256').update(`${SEED}\u0000${key}`).digest().copy(bytes, 6, 0, 10);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface Field {
  readonly name: string;
  readonly type: string;
  readonly description: string;
}

function schema(producer: string, fields: readonly Field[]): Facet {
  return facet(producer, 'SchemaDatasetFacet', '1-2-0', {
    fields: fields.map((field, index) => ({ ...field, ordinal_position: index + 1 })),
  });
}

const rawOrdersFields: Field[] = [
  { name: 'order_id', type: 'string', description: 'Order id from the shop, e.g. ord_1048213.' },
  { name: 'customer_id', type: 'string', description: 'Customer who placed the order.' },
  { name: 'status', type: 'string', description: 'placed, paid, shipped, completed, cancelled or refunded.' },
  { name: 'amount', type: 'decimal(12,2)', description: 'Order total after discounts, in `currency`.' },
  { name: 'discount_amount', type: 'decimal(12,2)', description: 'Discount applied to the order.' },
  { name: 'currency', type: 'string', description: 'ISO 4217 currency code.' },
  { name: 'ordered_at', type: 'timestamp', description: 'When the order was placed (UTC).' },
];

const rawCustomersFields: Field[] = [
  { name: 'customer_id', type: 'string', description: 'Customer id from the shop.' },
  { name: 'email', type: 'string', description: 'Contact e-mail address (PII).' },
  { name: 'full_name', type: 'string', description: 'Name as entered at sign-up (PII).' },
  { name: 'region', type: 'string', description: 'Sales region: NA, LATAM, EMEA, APAC, ANZ or MEA.' },
  { name: 'country_code', type: 'string', description: 'ISO 3166-1 alpha-2 country code.' },
  { name: 'signup_at', type: 'timestamp', description: 'When the customer signed up (UTC).' },
];

const stagingOrdersFields = (withDiscount: boolean): Field[] => [
  { name: 'order_id', type: 'varchar(32)', description: 'Primary key; order id from the shop.' },
  { name: 'customer_id', type: 'varchar(32)', description: 'References analytics.staging.customers.' },
  { name: 'status', type: 'varchar(16)', description: 'Order status at export time.' },
  { name: 'amount', type: 'numeric(12,2)', description: 'Order total after discounts.' },
  { name: 'currency', type: 'char(3)', description: 'ISO 4217 currency code.' },
  { name: 'ordered_at', type: 'timestamptz', description: 'When the order was placed.' },
  { name: '_loaded_at', type: 'timestamptz', description: 'When the load task wrote the row.' },
  // Added by ALTER TABLE ... ADD COLUMN, so it comes last.
  ...(withDiscount
    ? [{ name: 'discount_amount', type: 'numeric(12,2)', description: 'Discount applied to the order.' }]
    : []),
];

const stagingCustomersFields: Field[] = [
  { name: 'customer_id', type: 'varchar(32)', description: 'Primary key; customer id from the shop.' },
  {
    name: 'email_hash',
    type: 'char(64)',
    description: 'SHA-256 of the lower-cased e-mail: joinable, not PII.',
  },
  { name: 'region', type: 'varchar(8)', description: 'Sales region.' },
  { name: 'country_code', type: 'char(2)', description: 'ISO 3166-1 alpha-2 country code.' },
  { name: 'signup_at', type: 'timestamptz', description: 'When the customer signed up.' },
  { name: '_loaded_at', type: 'timestamptz', description: 'When the load task wrote the row.' },
];

const martFields: Field[] = [
  { name: 'revenue_date', type: 'date', description: 'Day the orders were placed (UTC).' },
  { name: 'region', type: 'varchar(8)', description: "Customer's sales region." },
  { name: 'order_count', type: 'bigint', description: 'Completed or shipped orders.' },
  { name: 'customer_count', type: 'bigint', description: 'Distinct customers who ordered.' },
  { name: 'gross_revenue', type: 'numeric(14,2)', description: 'Sum of order amounts after discounts.' },
  { name: 'avg_order_value', type: 'numeric(12,2)', description: 'gross_revenue / order_count.' },
];

const dashboardFields: Field[] = [
  { name: 'revenue_date', type: 'date', description: 'X axis of the revenue trend tile.' },
  { name: 'region', type: 'string', description: 'Filter and colour of every tile.' },
  { name: 'gross_revenue', type: 'number', description: 'Revenue tile and trend line.' },
  { name: 'order_count', type: 'number', description: 'Orders tile.' },
  { name: 'avg_order_value', type: 'number', description: 'AOV tile.' },
];

const REVENUE_SQL = `select
    date_trunc('day', o.ordered_at)::date as revenue_date,
    c.region,
    count(o.order_id) as order_count,
    count(distinct o.customer_id) as customer_count,
    sum(o.amount) as gross_revenue,
    round(sum(o.amount) / nullif(count(o.order_id), 0), 2) as avg_order_value
from analytics.staging.orders as o
join analytics.staging.customers as c
    on c.customer_id = o.customer_id
where o.status in ('shipped', 'completed')
group by 1, 2`;

const LOAD_ORDERS_FAILURE = {
  message:
    'duplicate key value violates unique constraint "orders_pkey"\n' +
    'DETAIL:  Key (order_id)=(ord_1260661) already exists.\nCONTEXT:  COPY orders, line 4127',
  stackTrace: `Traceback (most recent call last):
  File "/home/airflow/.local/lib/python3.11/site-packages/airflow/models/taskinstance.py", line 767, in _execute_task
    result = _execute_callable(context=context, **execute_callable_kwargs)
  File "/home/airflow/.local/lib/python3.11/site-packages/airflow/operators/python.py", line 238, in execute
    return_value = self.execute_callable()
  File "/opt/airflow/dags/acme/tasks/load_orders.py", line 58, in load_partition
    cursor.copy_expert(COPY_SQL, buffer)
psycopg2.errors.UniqueViolation: duplicate key value violates unique constraint "orders_pkey"
DETAIL:  Key (order_id)=(ord_1260661) already exists.
CONTEXT:  COPY orders, line 4127`,
};

/** One input column of a column-lineage entry, with its transformations. */
type ColumnSource = readonly [dataset: string, field: string, ...transformations: Transformation[]];
type Transformation = readonly [
  type: 'DIRECT' | 'INDIRECT',
  subtype: string,
  description?: string,
  masking?: true,
];

function columnLineage(
  producer: string,
  namespace: string,
  fields: Readonly<Record<string, readonly ColumnSource[]>>,
  datasetWide: readonly ColumnSource[] = [],
): Facet {
  const inputField = ([name, field, ...transformations]: ColumnSource) => ({
    namespace,
    name,
    field,
    transformations: transformations.map(([type, subtype, description, masking]) => ({
      type,
      subtype,
      ...(description === undefined ? {} : { description }),
      ...(masking ? { masking } : {}),
    })),
  });
  return facet(producer, 'ColumnLineageDatasetFacet', '1-2-0', {
    fields: Object.fromEntries(
      Object.entries(fields).map(([field, sources]) => [field, { inputFields: sources.map(inputField) }]),
    ),
    ...(datasetWide.length > 0 ? { dataset: datasetWide.map(inputField) } : {}),
  });
}

const identity = (dataset: string, fields: readonly string[]): Record<string, ColumnSource[]> =>
  Object.fromEntries(fields.map((field) => [field, [[dataset, field, ['DIRECT', 'IDENTITY']]]]));

const owners = (producer: string, kind: 'Job' | 'Dataset', list: readonly [string, string][]): Facet =>
  facet(producer, `Ownership${kind}Facet`, '1-0-1', { owners: list.map(([name, type]) => ({ name, type })) });

const documentation = (producer: string, kind: 'Job' | 'Dataset', description: string): Facet =>
  facet(producer, `Documentation${kind}Facet`, '1-1-0', { description, contentType: 'text/markdown' });

const dataSource = (producer: string, name: string, uri: string): Facet =>
  facet(producer, 'DatasourceDatasetFacet', '1-0-1', { name, uri });

const jobType = (producer: string, integration: string, type: string): Facet =>
  facet(producer, 'JobTypeJobFacet', '2-0-3', { processingType: 'BATCH', integration, jobType: type });

const iso = (ms: number) => new Date(ms).toISOString();
const at = (dayMs: number, time: string) => dayMs + Date.parse(`1970-01-01T${time}Z`);

/** One day of the week. */
interface Day {
  readonly index: number;
  /** Midnight UTC. */
  readonly ms: number;
  readonly date: string;
  /** The previous day: the data interval of the nightly runs, and the partition they load. */
  readonly partition: string;
  /** The day of the failure. */
  readonly last: boolean;
  /** A run id unique to the scenario's week, the job and the day. */
  runId(namespace: string, job: string, startMs: number): string;
}

/** What the warehouse tables hold, as the dbt model finds them: only successful loads move them. */
interface Warehouse {
  ordersRows: number;
  ordersLoadedAt: number;
  martRows: number;
}

/** A run: its START event and its COMPLETE or FAIL event. */
interface RunSpec {
  readonly producer: string;
  readonly job: DemoRunEvent['job'];
  readonly runId: string;
  readonly start: number;
  readonly end: number;
  readonly facets: Facets;
  /** How the run ends. @default 'COMPLETE' */
  readonly ends?: 'COMPLETE' | 'FAIL';
  /** The errorMessage facet of the FAIL event. */
  readonly error?: Facet;
  /** The run's datasets; `completed` is true for the COMPLETE event, which carries statistics and test results. */
  readonly inputs?: (completed: boolean) => DemoDataset[];
  readonly outputs?: (completed: boolean) => DemoDataset[];
}

function runEvents(spec: RunSpec): DemoRunEvent[] {
  const { producer, job, runId, facets } = spec;
  const event = (
    eventType: DemoRunEvent['eventType'],
    time: number,
    runFacets: Facets,
    completed: boolean,
  ) => ({
    eventType,
    eventTime: iso(time),
    producer,
    schemaURL: RUN_EVENT_SCHEMA,
    run: { runId, facets: runFacets },
    job,
    inputs: spec.inputs?.(completed) ?? [],
    outputs: spec.outputs?.(completed) ?? [],
  });
  return [
    event('START', spec.start, facets, false),
    spec.ends === 'FAIL'
      ? event('FAIL', spec.end, spec.error ? { ...facets, errorMessage: spec.error } : facets, false)
      : event('COMPLETE', spec.end, facets, true),
  ];
}

const outputStatistics = (producer: string, rowCount: number, completed: boolean) =>
  completed
    ? {
        outputFacets: {
          outputStatistics: facet(producer, 'OutputStatisticsOutputDatasetFacet', '1-0-2', { rowCount }),
        },
      }
    : {};

/** The nightly exports landing in S3, told by the bucket's notifier as DatasetEvents. */
function landings(day: Day): DemoDatasetEvent[] {
  const producer = producers.landing;
  const landing = (name: string, time: string, fields: readonly Field[], description: string) => ({
    eventTime: iso(at(day.ms, time)),
    producer,
    schemaURL: DATASET_EVENT_SCHEMA,
    dataset: {
      namespace: demoNames.raw,
      name,
      facets: {
        schema: schema(producer, fields),
        dataSource: dataSource(producer, demoNames.raw, demoNames.raw),
        documentation: documentation(producer, 'Dataset', description),
        ownership: owners(producer, 'Dataset', [['team:data-ingestion', 'MAINTAINER']]),
        // The dataset is the partition root (spec naming); which partition landed is a custom facet.
        acme_partition: {
          _producer: producer,
          _schemaURL: 'https://git.acme.example/data/landing-notifier/schemas/PartitionDatasetFacet.json',
          dimensions: { dt: day.partition },
          location: `${demoNames.raw}/${name}/dt=${day.partition}/`,
        },
      },
    },
  });
  return [
    landing(
      demoNames.rawOrders,
      '01:15:00',
      rawOrdersFields,
      'Nightly Parquet export of shop orders, partitioned by `dt`.',
    ),
    landing(
      demoNames.rawCustomers,
      '01:20:00',
      rawCustomersFields,
      'Nightly Parquet snapshot of shop customers.',
    ),
  ];
}

/**
 * The Airflow DAG run and its two load tasks. On the last day the orders load fails, and so does the DAG run
 * (Airflow fails a DAG run when one of its tasks fails). Successful order loads move `warehouse`.
 */
function airflowRuns(day: Day, warehouse: Warehouse): DemoRunEvent[] {
  const n = demoNames;
  const producer = producers.airflow;
  const revision = DAG_REVISIONS[day.index < 2 ? 0 : 1]!;
  const nominalTime = facet(producer, 'NominalTimeRunFacet', '1-0-1', {
    nominalStartTime: iso(at(day.ms - DAY_MS, '02:00:00')),
    nominalEndTime: iso(at(day.ms, '02:00:00')),
  });
  const engine = facet(producer, 'ProcessingEngineRunFacet', '1-1-1', {
    version: '2.10.4',
    name: 'Airflow',
    openlineageAdapterVersion: '1.14.0',
  });
  const job = (name: string, type: 'DAG' | 'TASK', description: string) => ({
    namespace: n.airflow,
    name,
    facets: {
      jobType: jobType(producer, 'AIRFLOW', type),
      documentation: documentation(producer, 'Job', description),
      ownership: owners(producer, 'Job', [['team:data-platform', 'MAINTAINER']]),
      sourceCodeLocation: facet(producer, 'SourceCodeLocationJobFacet', '1-1-0', {
        type: 'git',
        url: `https://git.acme.example/data/airflow-dags/blob/${revision}/dags/daily_etl.py`,
        repoUrl: 'https://git.acme.example/data/airflow-dags.git',
        path: 'dags/daily_etl.py',
        version: revision,
        branch: 'main',
      }),
    },
  });

  const dagStart = at(day.ms, '02:00:05');
  const dagRunId = day.runId(n.airflow, n.dag, dagStart);
  const taskFacets: Facets = {
    nominalTime,
    parent: facet(producer, 'ParentRunFacet', '1-1-0', {
      run: { runId: dagRunId },
      job: { namespace: n.airflow, name: n.dag },
      root: { run: { runId: dagRunId }, job: { namespace: n.airflow, name: n.dag } },
    }),
    processing_engine: engine,
  };
  const warehouseSource = dataSource(producer, n.warehouse, `${n.warehouse}/analytics`);
  const stagingOwners = owners(producer, 'Dataset', [['team:data-platform', 'MAINTAINER']]);

  const ordersStart = at(day.ms, '02:00:30');
  const ordersEnd = day.last ? at(day.ms, '02:01:42') : at(day.ms, '02:04:10');
  const ordersFields = stagingOrdersFields(day.index >= 2);
  const loadOrders = runEvents({
    producer,
    job: job(
      n.loadOrders,
      'TASK',
      "Appends the previous day's orders partition to `analytics.staging.orders` (COPY).",
    ),
    runId: day.runId(n.airflow, n.loadOrders, ordersStart),
    start: ordersStart,
    end: ordersEnd,
    facets: taskFacets,
    ...(day.last
      ? {
          ends: 'FAIL',
          error: facet(producer, 'ErrorMessageRunFacet', '1-0-1', {
            message: LOAD_ORDERS_FAILURE.message,
            programmingLanguage: 'python',
            stackTrace: LOAD_ORDERS_FAILURE.stackTrace,
          }),
        }
      : {}),
    inputs: () => [
      {
        namespace: n.raw,
        name: n.rawOrders,
        inputFacets: {
          subset: {
            _producer: producer,
            _schemaURL:
              'https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json#/$defs/InputSubsetInputDatasetFacet',
            inputCondition: {
              type: 'partition',
              partitions: [{ identifier: `dt=${day.partition}`, dimensions: { dt: day.partition } }],
            },
          },
        },
      },
    ],
    outputs: (completed) => [
      {
        namespace: n.warehouse,
        name: n.stagingOrders,
        facets: {
          schema: schema(producer, ordersFields),
          dataSource: warehouseSource,
          documentation: documentation(
            producer,
            'Dataset',
            'Shop orders, one row per order, appended nightly.',
          ),
          ownership: stagingOwners,
          columnLineage: columnLineage(
            producer,
            n.raw,
            identity(
              n.rawOrders,
              ordersFields.map((field) => field.name).filter((name) => name !== '_loaded_at'),
            ),
          ),
        },
        ...outputStatistics(producer, ORDERS_PER_DAY[day.index]!, completed),
      },
    ],
  });
  if (!day.last) {
    warehouse.ordersRows += ORDERS_PER_DAY[day.index]!;
    warehouse.ordersLoadedAt = ordersEnd;
  }

  const customersStart = at(day.ms, '02:00:31');
  const loadCustomers = runEvents({
    producer,
    job: job(
      n.loadCustomers,
      'TASK',
      'Replaces `analytics.staging.customers` with the latest snapshot, hashing e-mail addresses.',
    ),
    runId: day.runId(n.airflow, n.loadCustomers, customersStart),
    start: customersStart,
    end: at(day.ms, '02:02:55'),
    facets: taskFacets,
    inputs: () => [{ namespace: n.raw, name: n.rawCustomers }],
    outputs: (completed) => [
      {
        namespace: n.warehouse,
        name: n.stagingCustomers,
        facets: {
          schema: schema(producer, stagingCustomersFields),
          dataSource: warehouseSource,
          documentation: documentation(producer, 'Dataset', 'Shop customers without PII, replaced nightly.'),
          ownership: stagingOwners,
          lifecycleStateChange: facet(producer, 'LifecycleStateChangeDatasetFacet', '1-0-1', {
            lifecycleStateChange: 'OVERWRITE',
          }),
          columnLineage: columnLineage(producer, n.raw, {
            ...identity(n.rawCustomers, ['customer_id', 'region', 'country_code', 'signup_at']),
            email_hash: [
              [n.rawCustomers, 'email', ['DIRECT', 'TRANSFORMATION', 'sha256(lower(email))', true]],
            ],
          }),
        },
        ...outputStatistics(producer, CUSTOMERS[day.index]!, completed),
      },
    ],
  });

  // A DAG run carries no error message of its own: the failed task's run has it.
  const [dagStartEvent, dagEndEvent] = runEvents({
    producer,
    job: job(n.dag, 'DAG', 'Loads the nightly shop exports from S3 into the warehouse staging schema.'),
    runId: dagRunId,
    start: dagStart,
    end: day.last ? at(day.ms, '02:03:05') : at(day.ms, '02:04:15'),
    facets: { nominalTime, processing_engine: engine },
    ends: day.last ? 'FAIL' : 'COMPLETE',
  });
  return [dagStartEvent!, ...loadOrders, ...loadCustomers, dagEndEvent!];
}

const assertion = (name: string, column: string, success: boolean, expected: string, actual: string) => ({
  assertion: name,
  success,
  column,
  severity: 'error',
  expected,
  actual,
});

/** The dbt model, run by dbt's own scheduler at 04:00 whatever happened to the loads. */
function dbtRun(day: Day, warehouse: Warehouse): DemoRunEvent[] {
  const n = demoNames;
  const producer = producers.dbt;
  const start = at(day.ms, '04:00:00');
  const staleMinutes = Math.floor((start - warehouse.ordersLoadedAt) / 60_000);
  const { ordersRows } = warehouse;
  if (!day.last) warehouse.martRows += REGIONS;
  const { martRows } = warehouse;
  const orders = n.stagingOrders;
  const customers = n.stagingCustomers;
  const filter: Transformation = ['INDIRECT', 'FILTER', "status in ('shipped', 'completed')"];
  // Every mart column depends indirectly on the filter and the grouping as well as on its direct inputs.
  const indirect: ColumnSource[] = [
    [orders, 'status', filter],
    [orders, 'ordered_at', ['INDIRECT', 'GROUP_BY']],
    [customers, 'region', ['INDIRECT', 'GROUP_BY']],
  ];
  return runEvents({
    producer,
    job: {
      namespace: n.dbt,
      name: n.dbtModel,
      facets: {
        jobType: jobType(producer, 'DBT', 'MODEL'),
        sql: facet(producer, 'SQLJobFacet', '1-1-0', { query: REVENUE_SQL, dialect: 'postgres' }),
        documentation: documentation(
          producer,
          'Job',
          'Builds `analytics.marts.revenue_daily` (dbt model, table).',
        ),
        ownership: owners(producer, 'Job', [['team:analytics-engineering', 'MAINTAINER']]),
        sourceCodeLocation: facet(producer, 'SourceCodeLocationJobFacet', '1-1-0', {
          type: 'git',
          url: `https://git.acme.example/analytics/dbt-acme/blob/${DBT_REVISION}/models/marts/revenue_daily.sql`,
          repoUrl: 'https://git.acme.example/analytics/dbt-acme.git',
          path: 'models/marts/revenue_daily.sql',
          version: DBT_REVISION,
          branch: 'main',
        }),
      },
    },
    runId: day.runId(n.dbt, n.dbtModel, start),
    start,
    end: at(day.ms, '04:03:20'),
    facets: {
      nominalTime: facet(producer, 'NominalTimeRunFacet', '1-0-1', { nominalStartTime: iso(start) }),
      processing_engine: facet(producer, 'ProcessingEngineRunFacet', '1-1-1', {
        version: '1.9.2',
        name: 'dbt',
        openlineageAdapterVersion: '1.26.0',
      }),
    },
    inputs: (completed) => [
      {
        namespace: n.warehouse,
        name: n.stagingOrders,
        ...(completed
          ? {
              inputFacets: {
                dataQualityAssertions: facet(producer, 'DataQualityAssertionsDatasetFacet', '1-1-0', {
                  assertions: [
                    assertion('not_null', 'order_id', true, '0', '0'),
                    assertion('unique', 'order_id', true, '0', '0'),
                    assertion('accepted_values', 'status', true, '0', '0'),
                    assertion('relationships', 'customer_id', true, '0', '0'),
                    // Freshness of the load timestamp: the only test that notices a missed load.
                    assertion(
                      'freshness',
                      '_loaded_at',
                      staleMinutes <= 24 * 60,
                      '<= 24h',
                      `${Math.floor(staleMinutes / 60)}h ${staleMinutes % 60}m`,
                    ),
                  ],
                }),
                dataQualityMetrics: facet(producer, 'DataQualityMetricsInputDatasetFacet', '1-0-3', {
                  rowCount: ordersRows,
                  columnMetrics: {
                    order_id: { nullCount: 0, distinctCount: ordersRows },
                    customer_id: { nullCount: 0, distinctCount: Math.round(ordersRows / 23.7) },
                    status: { nullCount: 0, distinctCount: 6 },
                    amount: {
                      nullCount: 0,
                      sum: (ordersRows * AVERAGE_ORDER_CENTS) / 100,
                      min: 0.5,
                      max: 4999,
                    },
                  },
                }),
              },
            }
          : {}),
      },
      {
        namespace: n.warehouse,
        name: n.stagingCustomers,
        ...(completed
          ? {
              inputFacets: {
                dataQualityAssertions: facet(producer, 'DataQualityAssertionsDatasetFacet', '1-1-0', {
                  assertions: [
                    assertion('not_null', 'customer_id', true, '0', '0'),
                    assertion('unique', 'customer_id', true, '0', '0'),
                  ],
                }),
                dataQualityMetrics: facet(producer, 'DataQualityMetricsInputDatasetFacet', '1-0-3', {
                  rowCount: CUSTOMERS[day.index]!,
                  columnMetrics: { customer_id: { nullCount: 0, distinctCount: CUSTOMERS[day.index]! } },
                }),
              },
            }
          : {}),
      },
    ],
    outputs: (completed) => [
      {
        namespace: n.warehouse,
        name: n.mart,
        facets: {
          schema: schema(producer, martFields),
          dataSource: dataSource(producer, n.warehouse, `${n.warehouse}/analytics`),
          documentation: documentation(
            producer,
            'Dataset',
            'Daily revenue by region from shipped and completed orders. Feeds the **Revenue** dashboard.',
          ),
          ownership: owners(producer, 'Dataset', [
            ['team:analytics-engineering', 'MAINTAINER'],
            ['user:maria.chen', 'OWNER'],
          ]),
          columnLineage: columnLineage(
            producer,
            n.warehouse,
            {
              revenue_date: [
                [
                  orders,
                  'ordered_at',
                  ['DIRECT', 'TRANSFORMATION', "date_trunc('day', ordered_at)::date"],
                  ['INDIRECT', 'GROUP_BY'],
                ],
                [orders, 'status', filter],
                [customers, 'region', ['INDIRECT', 'GROUP_BY']],
              ],
              region: [
                [customers, 'region', ['DIRECT', 'IDENTITY'], ['INDIRECT', 'GROUP_BY']],
                [orders, 'status', filter],
                [orders, 'ordered_at', ['INDIRECT', 'GROUP_BY']],
              ],
              order_count: [[orders, 'order_id', ['DIRECT', 'AGGREGATION', 'count']], ...indirect],
              customer_count: [
                [orders, 'customer_id', ['DIRECT', 'AGGREGATION', 'count distinct']],
                ...indirect,
              ],
              gross_revenue: [[orders, 'amount', ['DIRECT', 'AGGREGATION', 'sum']], ...indirect],
              avg_order_value: [
                [orders, 'amount', ['DIRECT', 'AGGREGATION', 'sum(amount) / count(order_id)']],
                [orders, 'order_id', ['DIRECT', 'AGGREGATION', 'sum(amount) / count(order_id)']],
                ...indirect,
              ],
            },
            [
              [orders, 'customer_id', ['INDIRECT', 'JOIN']],
              [customers, 'customer_id', ['INDIRECT', 'JOIN']],
            ],
          ),
        },
        ...outputStatistics(producer, martRows, completed),
      },
    ],
  });
}

/** The extract behind the Revenue dashboard, refreshed at 06:00 from the mart. */
function dashboardRun(day: Day, warehouse: Warehouse): DemoRunEvent[] {
  const n = demoNames;
  const producer = producers.looker;
  const start = at(day.ms, '06:00:00');
  return runEvents({
    producer,
    job: {
      namespace: n.bi,
      name: n.dashboardRefresh,
      facets: {
        jobType: jobType(producer, 'LOOKER', 'EXTRACT'),
        documentation: documentation(
          producer,
          'Job',
          'Refreshes the cached extract behind the Revenue dashboard.',
        ),
        ownership: owners(producer, 'Job', [['team:finance-analytics', 'MAINTAINER']]),
      },
    },
    runId: day.runId(n.bi, n.dashboardRefresh, start),
    start,
    end: at(day.ms, '06:00:48'),
    facets: {
      nominalTime: facet(producer, 'NominalTimeRunFacet', '1-0-1', { nominalStartTime: iso(start) }),
    },
    inputs: () => [{ namespace: n.warehouse, name: n.mart }],
    outputs: (completed) => [
      {
        namespace: n.looker,
        name: n.dashboard,
        facets: {
          schema: schema(producer, dashboardFields),
          dataSource: dataSource(producer, n.looker, 'https://acme.looker.com'),
          documentation: documentation(
            producer,
            'Dataset',
            'Revenue dashboard: daily revenue, orders and AOV by region.',
          ),
          ownership: owners(producer, 'Dataset', [['team:finance-analytics', 'OWNER']]),
          columnLineage: columnLineage(
            producer,
            n.warehouse,
            identity(
              n.mart,
              dashboardFields.map((field) => field.name),
            ),
          ),
        },
        ...outputStatistics(producer, warehouse.martRows, completed),
      },
    ],
  });
}

/**
 * Builds the scenario's events, sorted by eventTime. Throws a TypeError when `endDate` is not a `YYYY-MM-DD`
 * date.
 *
 * @example
 * const { events } = demoScenario(); // 60 events: 50 run events of 25 runs and 10 DatasetEvents
 */
export function demoScenario(options: DemoScenarioOptions = {}): DemoScenario {
  const endDate = options.endDate ?? DEMO_END_DATE;
  const endMs = /^\d{4}-\d{2}-\d{2}$/.test(endDate) ? Date.parse(`${endDate}T00:00:00Z`) : NaN;
  if (!Number.isFinite(endMs) || iso(endMs).slice(0, 10) !== endDate) {
    throw new TypeError(
      `the demo end date must be a date as YYYY-MM-DD, e.g. ${DEMO_END_DATE}; got ${endDate}.`,
    );
  }
  const warehouse: Warehouse = {
    ordersRows: ORDERS_BEFORE,
    ordersLoadedAt: at(endMs - DAYS * DAY_MS, '02:04:10'),
    martRows: MART_ROWS_BEFORE,
  };
  const events: DemoEvent[] = [];
  const days: Day[] = [];
  for (let index = 0; index < DAYS; index++) {
    const ms = endMs - (DAYS - 1 - index) * DAY_MS;
    const date = iso(ms).slice(0, 10);
    const day: Day = {
      index,
      ms,
      date,
      partition: iso(ms - DAY_MS).slice(0, 10),
      last: index === DAYS - 1,
      runId: (namespace, job, startMs) => demoRunId(`${endDate}/${namespace}/${job}/${date}`, startMs),
    };
    days.push(day);
    // In this order: each stage reads what the one before left in `warehouse`.
    events.push(
      ...landings(day),
      ...airflowRuns(day, warehouse),
      ...dbtRun(day, warehouse),
      ...dashboardRun(day, warehouse),
    );
  }
  // Stable: events with equal times keep the order they were built in.
  events.sort((a, b) => (a.eventTime < b.eventTime ? -1 : a.eventTime > b.eventTime ? 1 : 0));
  const failed = events.find(
    (event): event is DemoRunEvent =>
      'eventType' in event && event.eventType === 'FAIL' && event.job.name === demoNames.loadOrders,
  )!;
  return {
    events,
    days: days.map((day) => day.date),
    failedRun: { runId: failed.run.runId, namespace: failed.job.namespace, name: failed.job.name },
    schemaChangeDay: days[2]!.date,
  };
}
