/**
 * A small lineage scenario for the read API tests: an Airflow-style DAG `nightly` whose task
 * `nightly.load_orders` reads `shop.orders` and writes `shop.orders_clean` in a PostgreSQL namespace (a name
 * with `://` and `:`, to exercise path encoding), twice: run 1 completes, run 2 fails a day later.
 * Plus a DatasetEvent for an S3 object whose name starts with `/`.
 */
import { readEvents } from './helpers/conformance.js';

export const PRODUCER = 'https://github.com/headwater/test';
const RUN_EVENT = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const facet = <T extends Record<string, unknown>>(name: string, body: T) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json`,
  ...body,
});

export const T0 = Date.parse('2024-05-01T10:00:00.000Z');
export const MINUTE = 60_000;
export const DAY = 86_400_000;
export const at = (ms: number) => new Date(ms).toISOString();

export const PG = 'postgres://db.example:5432';
export const S3 = 's3://lake';
export const PARENT_RUN = '0190d3a2-0000-7000-8000-000000000001';
export const RUN_1 = '0190d3a2-0000-7000-8000-000000000011';
export const RUN_2 = '0190d3a2-0000-7000-8000-000000000012';

export const ordersSchema = facet('SchemaDatasetFacet', {
  fields: [
    { name: 'id', type: 'INTEGER', description: 'Order id' },
    { name: 'amount', type: 'DECIMAL' },
    { name: 'email', type: 'VARCHAR', description: 'Customer email' },
  ],
});
export const ordersDataSource = facet('DatasourceDatasetFacet', {
  name: 'shop-db',
  uri: 'postgres://db.example:5432/shop',
});
export const ordersDocumentation = facet('DocumentationDatasetFacet', { description: 'Raw orders' });
export const ordersOwnership = facet('OwnershipDatasetFacet', {
  owners: [{ name: 'team:sales', type: 'TEAM' }],
});
export const cleanSchema = facet('SchemaDatasetFacet', {
  fields: [
    { name: 'id', type: 'INTEGER' },
    { name: 'amount_usd', type: 'DECIMAL', description: 'Amount in USD' },
  ],
});
/** The schema run 2 writes: a new column, hence a second version of shop.orders_clean. */
export const cleanSchemaV2 = facet('SchemaDatasetFacet', {
  fields: [
    { name: 'id', type: 'INTEGER' },
    { name: 'amount_usd', type: 'DECIMAL', description: 'Amount in USD' },
    { name: 'currency', type: 'VARCHAR' },
  ],
});
/** Run 2 removes the ownership facet of shop.orders (spec: a facet with _deleted true). */
export const ownershipDeleted = {
  _producer: PRODUCER,
  _schemaURL: ordersOwnership._schemaURL,
  _deleted: true,
};
export const cleanColumnLineage = {
  _producer: PRODUCER,
  _schemaURL: 'https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json',
  fields: {
    id: {
      inputFields: [
        {
          namespace: PG,
          name: 'shop.orders',
          field: 'id',
          transformations: [{ type: 'DIRECT', subtype: 'IDENTITY', description: '', masking: false }],
        },
      ],
    },
    amount_usd: {
      inputFields: [
        {
          namespace: PG,
          name: 'shop.orders',
          field: 'amount',
          transformations: [
            { type: 'DIRECT', subtype: 'TRANSFORMATION', description: 'converted to USD', masking: false },
          ],
        },
      ],
    },
  },
};
export const assertions = facet('DataQualityAssertionsDatasetFacet', {
  assertions: [{ assertion: 'not_null', success: true, column: 'id' }],
});
export const statistics = facet('OutputStatisticsOutputDatasetFacet', { rowCount: 100, size: 2048 });
export const nominalTime = facet('NominalTimeRunFacet', {
  nominalStartTime: '2024-05-01T00:00:00Z',
  nominalEndTime: '2024-05-02T00:00:00Z',
});
export const parentFacet = facet('ParentRunFacet', {
  run: { runId: PARENT_RUN },
  job: { namespace: 'warehouse', name: 'nightly' },
});
export const jobFacets = {
  documentation: facet('DocumentationJobFacet', { description: 'Loads orders' }),
  sourceCodeLocation: facet('SourceCodeLocationJobFacet', {
    type: 'git',
    url: 'https://git.example/etl/load_orders.py',
  }),
  jobType: facet('JobTypeJobFacet', { processingType: 'BATCH', integration: 'AIRFLOW', jobType: 'TASK' }),
  sql: facet('SQLJobFacet', { query: 'INSERT INTO shop.orders_clean SELECT id, amount FROM shop.orders' }),
};
export const errorFacet = facet('ErrorMessageRunFacet', { message: 'boom', programmingLanguage: 'python' });
export const eventsSchema = facet('SchemaDatasetFacet', { fields: [{ name: 'ts', type: 'TIMESTAMP' }] });

interface EventOptions {
  eventType: string;
  time: number;
  runId: string;
  job: string;
  runFacets?: Record<string, unknown>;
  jobFacets?: Record<string, unknown>;
  inputs?: unknown[];
  outputs?: unknown[];
  namespace?: string;
}

/** A RunEvent. */
export function runEvent(options: EventOptions): Record<string, unknown> {
  return {
    eventType: options.eventType,
    eventTime: at(options.time),
    producer: PRODUCER,
    schemaURL: RUN_EVENT,
    run: { runId: options.runId, facets: options.runFacets ?? {} },
    job: { namespace: options.namespace ?? 'warehouse', name: options.job, facets: options.jobFacets ?? {} },
    inputs: options.inputs ?? [],
    outputs: options.outputs ?? [],
  };
}

const orders = (facets: Record<string, unknown> = {}, inputFacets?: Record<string, unknown>) => ({
  namespace: PG,
  name: 'shop.orders',
  facets,
  ...(inputFacets ? { inputFacets } : {}),
});
const clean = (facets: Record<string, unknown> = {}, outputFacets?: Record<string, unknown>) => ({
  namespace: PG,
  name: 'shop.orders_clean',
  facets,
  ...(outputFacets ? { outputFacets } : {}),
});

/** The marquez-apples conformance group: eight COMPLETE events in namespace grandmas.kitchen and friends. */
export function applesEvents(): unknown[] {
  return [
    '1_pick_apples',
    '2_apple_filling',
    '3_apple_cider',
    '5_apple_vinegar',
    '6_apple_pie',
    '7_pick_different_apples',
    '8_apple_filling',
    '9_apple_pie',
  ].flatMap((file) => readEvents(`marquez-apples/${file}.json`));
}

/** The hand-made events, in eventTime order. */
export function warehouseEvents(): unknown[] {
  return [
    runEvent({ eventType: 'START', time: T0 - MINUTE, runId: PARENT_RUN, job: 'nightly' }),
    runEvent({
      eventType: 'START',
      time: T0,
      runId: RUN_1,
      job: 'nightly.load_orders',
      runFacets: { nominalTime, parent: parentFacet },
      jobFacets,
      inputs: [
        orders(
          {
            schema: ordersSchema,
            dataSource: ordersDataSource,
            documentation: ordersDocumentation,
            ownership: ordersOwnership,
          },
          { dataQualityAssertions: assertions },
        ),
      ],
      outputs: [clean({ schema: cleanSchema, columnLineage: cleanColumnLineage })],
    }),
    runEvent({
      eventType: 'COMPLETE',
      time: T0 + 5 * MINUTE,
      runId: RUN_1,
      job: 'nightly.load_orders',
      runFacets: { parent: parentFacet },
      inputs: [orders()],
      outputs: [clean({}, { outputStatistics: statistics })],
    }),
    runEvent({ eventType: 'COMPLETE', time: T0 + 10 * MINUTE, runId: PARENT_RUN, job: 'nightly' }),
    runEvent({
      eventType: 'START',
      time: T0 + DAY,
      runId: RUN_2,
      job: 'nightly.load_orders',
      inputs: [orders({ ownership: ownershipDeleted })],
      outputs: [clean({ schema: cleanSchemaV2 })],
    }),
    runEvent({
      eventType: 'FAIL',
      time: T0 + DAY + 2 * MINUTE,
      runId: RUN_2,
      job: 'nightly.load_orders',
      runFacets: { errorMessage: errorFacet },
      inputs: [orders()],
      outputs: [clean()],
    }),
    {
      eventTime: at(T0 + 2 * DAY),
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
      dataset: { namespace: S3, name: '/raw/events.parquet', facets: { schema: eventsSchema } },
    },
  ];
}
