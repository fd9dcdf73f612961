import { randomUUID } from 'node:crypto';
import { createRandom, type Random } from './random.js';

/** Options of {@link createRunEventStream}. */
export interface RunEventStreamOptions {
  /** Jobs in the simulated pipelines; each run picks one at random, so jobs repeat. @default 2000 */
  readonly jobs?: number;
  /** Datasets in the pool the jobs read and write. @default 3000 */
  readonly datasets?: number;
  /** Fields of each dataset's schema facet (and of the output's columnLineage facet). @default 20 */
  readonly fieldsPerDataset?: number;
  /** Runs started but not yet completed; a COMPLETE trails its START by this many events. @default 16 */
  readonly openRuns?: number;
  /** Seed of the job and dataset choices. @default 1 */
  readonly seed?: number;
  /** eventTime of the first START, in ms since the epoch. @default Date.now() - 1 day */
  readonly startTimeMs?: number;
}

/** An endless source of distinct, realistic OpenLineage RunEvents as JSON text. */
export interface RunEventStream {
  /** The next event's JSON text. START and COMPLETE events of the same run come out 2 × openRuns apart. */
  next(): string;
  /** Events generated so far. */
  readonly generated: number;
  /** Mean size in bytes of the events generated so far. */
  readonly meanBytes: number;
}

const PRODUCER = 'https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/spark';
const SPEC = 'https://openlineage.io/spec';
const RUN_EVENT_SCHEMA = `${SPEC}/2-0-2/OpenLineage.json#/$defs/RunEvent`;
const DATASET_NAMESPACE = 'postgres://warehouse.internal:5432';
const JOB_NAMESPACES = ['spark-prod', 'airflow-prod', 'dbt-analytics', 'flink-ingest'];
const SCHEMAS = ['sales', 'finance', 'marketing', 'ops', 'product', 'support'];
const TABLE_WORDS = [
  'orders',
  'customers',
  'payments',
  'sessions',
  'invoices',
  'shipments',
  'events',
  'users',
];
const COLUMN_WORDS = [
  'id',
  'customer_id',
  'order_id',
  'created_at',
  'updated_at',
  'amount',
  'currency',
  'status',
  'country',
  'region',
  'channel',
  'product_id',
  'quantity',
  'unit_price',
  'discount',
  'tax',
  'email',
  'segment',
  'source',
  'campaign',
  'device',
  'session_id',
  'is_active',
  'score',
];
const COLUMN_TYPES = ['bigint', 'varchar', 'timestamp', 'decimal(18,2)', 'boolean', 'date', 'int'];

const facet = (schemaPath: string, body: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `${SPEC}/facets/${schemaPath}`,
  ...body,
});

interface Dataset {
  readonly name: string;
  readonly fields: readonly { readonly name: string; readonly type: string }[];
}

interface Job {
  /** `"job":{...}` value, serialised once: a job's facets do not change between its runs. */
  readonly jobJson: string;
  /** `"inputs":[...],"outputs":[...]` serialised once, for the same reason. */
  readonly ioJson: string;
}

function makeDataset(index: number, fieldsPerDataset: number, random: Random): Dataset {
  const schema = SCHEMAS[index % SCHEMAS.length]!;
  const table = `${TABLE_WORDS[random.int(TABLE_WORDS.length)]!}_${String(index).padStart(4, '0')}`;
  const fields = Array.from({ length: fieldsPerDataset }, (_, field) => ({
    name:
      field < COLUMN_WORDS.length
        ? COLUMN_WORDS[field]!
        : `${COLUMN_WORDS[field % COLUMN_WORDS.length]!}_${field}`,
    type: COLUMN_TYPES[(index + field) % COLUMN_TYPES.length]!,
  }));
  return { name: `analytics.${schema}.${table}`, fields };
}

function makeJob(index: number, inputs: readonly Dataset[], output: Dataset): Job {
  const namespace = JOB_NAMESPACES[index % JOB_NAMESPACES.length]!;
  const [left, right] = inputs as [Dataset, Dataset];
  const picked = output.fields.slice(0, 6).map((field) => field.name);
  const query =
    `INSERT INTO ${output.name} SELECT ${picked.map((name, i) => `${i % 2 ? 'b' : 'a'}.${name}`).join(', ')} ` +
    `FROM ${left.name} a JOIN ${right.name} b ON a.id = b.id WHERE a.updated_at >= :start`;
  const job = {
    namespace,
    name: `etl.${output.name.split('.')[1]!}.build_${output.name.split('.')[2]!}`,
    facets: {
      jobType: facet('2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet', {
        processingType: 'BATCH',
        integration: 'SPARK',
        jobType: 'SQL_JOB',
      }),
      sql: facet('1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet', { query, dialect: 'spark' }),
    },
  };
  const schemaFacet = (dataset: Dataset) =>
    facet('1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet', { fields: dataset.fields });
  // Each output column comes from the same-position column of one input, alternating between the two:
  // one input field per output field, as a simple SELECT produces.
  const columnLineage = facet('1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet', {
    fields: Object.fromEntries(
      output.fields.map((field, i) => {
        const source = inputs[i % 2]!;
        return [
          field.name,
          {
            inputFields: [
              {
                namespace: DATASET_NAMESPACE,
                name: source.name,
                field: source.fields[i % source.fields.length]!.name,
                transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
              },
            ],
          },
        ];
      }),
    ),
  });
  const io = {
    inputs: inputs.map((dataset) => ({
      namespace: DATASET_NAMESPACE,
      name: dataset.name,
      facets: { schema: schemaFacet(dataset) },
    })),
    outputs: [
      {
        namespace: DATASET_NAMESPACE,
        name: output.name,
        facets: { schema: schemaFacet(output), columnLineage },
      },
    ],
  };
  return { jobJson: JSON.stringify(job), ioJson: JSON.stringify(io).slice(1, -1) };
}

/**
 * Realistic RunEvents of many jobs over a pool of datasets: each job always reads the same 2 datasets and writes
 * the same 1 (as a scheduled pipeline does), every dataset carries a schema facet, the output a columnLineage
 * facet, the run a nominalTime facet and the job jobType and sql facets. Runs pick jobs at random, so jobs and
 * datasets repeat across events as they do in production; every event has its own runId and eventTime, so
 * none is a duplicate.
 *
 * The per-job parts are serialised once and spliced in, so the generator costs the load generator microseconds
 * per event and does not compete with the server it measures for CPU.
 */
export function createRunEventStream(options: RunEventStreamOptions = {}): RunEventStream {
  const random = createRandom(options.seed ?? 1);
  const datasetCount = options.datasets ?? 3000;
  const jobCount = options.jobs ?? 2000;
  const fieldsPerDataset = options.fieldsPerDataset ?? 20;
  const openRuns = options.openRuns ?? 16;
  if (datasetCount < 3 || jobCount < 1) {
    throw new RangeError(
      'createRunEventStream needs at least 3 datasets (2 inputs and an output) and 1 job.',
    );
  }
  const datasets = Array.from({ length: datasetCount }, (_, i) => makeDataset(i, fieldsPerDataset, random));
  const jobs = Array.from({ length: jobCount }, (_, i) => {
    // Job i writes dataset i (one writer per dataset, as in most warehouses) and reads two other datasets.
    const outputIndex = i % datasetCount;
    const output = datasets[outputIndex]!;
    const pick = (taken: readonly number[]): number => {
      let index: number;
      do index = random.int(datasetCount);
      while (taken.includes(index));
      return index;
    };
    const first = pick([outputIndex]);
    const second = pick([outputIndex, first]);
    return makeJob(i, [datasets[first]!, datasets[second]!], output);
  });

  interface OpenRun {
    readonly runId: string;
    readonly job: Job;
    readonly startMs: number;
  }
  const open: OpenRun[] = [];
  let clockMs = options.startTimeMs ?? Date.now() - 86_400_000;
  let generated = 0;
  let bytes = 0;

  const render = (type: 'START' | 'COMPLETE', run: OpenRun, timeMs: number): string => {
    const nominalStart = Math.floor(run.startMs / 3_600_000) * 3_600_000;
    return (
      `{"eventType":"${type}","eventTime":"${new Date(timeMs).toISOString()}",` +
      `"run":{"runId":"${run.runId}","facets":{"nominalTime":{"_producer":"${PRODUCER}",` +
      `"_schemaURL":"${SPEC}/facets/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet",` +
      `"nominalStartTime":"${new Date(nominalStart).toISOString()}",` +
      `"nominalEndTime":"${new Date(nominalStart + 3_600_000).toISOString()}"}}},` +
      `"job":${run.job.jobJson},${run.job.ioJson},"producer":"${PRODUCER}","schemaURL":"${RUN_EVENT_SCHEMA}"}`
    );
  };

  return {
    next() {
      let text: string;
      if (open.length >= openRuns) {
        const run = open.shift()!;
        // Runs last 30 s to 5 min of simulated time; the stream's clock only orders STARTs.
        text = render('COMPLETE', run, run.startMs + 30_000 + random.int(270_000));
      } else {
        clockMs += 1 + random.int(20);
        const run = { runId: randomUUID(), job: jobs[random.int(jobs.length)]!, startMs: clockMs };
        open.push(run);
        text = render('START', run, run.startMs);
      }
      generated++;
      bytes += Buffer.byteLength(text);
      return text;
    },
    get generated() {
      return generated;
    },
    get meanBytes() {
      return generated === 0 ? 0 : bytes / generated;
    },
  };
}
